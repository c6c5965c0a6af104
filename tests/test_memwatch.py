"""``engines/memwatch.py``: a Ray actor's RSS told apart. Pages of a shared-memory file (what Ray's object store
is) count as shared, the process's own allocations as own; ``trim`` hands freed heap pages back. Measured in a
fresh process (the test process's own figures move with whatever earlier tests loaded)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not os.path.isdir("/dev/shm"),
                                reason="RssShmem is Linux's /proc figure")

SCRIPT = r'''
import json, mmap, tempfile, time
import numpy as np
from pairaudit.engines.memwatch import MemWatch, rss_parts, trim

def work(size):
    block = np.ones(size // 8)
    time.sleep(0.05)
    return float(block.sum())

watch = MemWatch(every=0.01)
size = 64 * 2**20
with tempfile.NamedTemporaryFile(dir="/dev/shm") as fh:
    fh.truncate(size)
    with mmap.mmap(fh.fileno(), size) as shm:
        own0, shared0 = rss_parts()
        with watch.during("store"):
            shm[::4096] = b"\x01" * (size // 4096)
        with watch.during("heap"):
            work(size)
print(json.dumps({"own0": own0, "shared0": shared0, "own": watch.own, "shared": watch.shared,
                  "after": watch.after, "trim": trim()}))
'''


def test_shared_memory_pages_count_as_shared_and_an_allocation_as_own() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["shared"]["store"] - r["shared0"] > 0.9 * 64, r
    assert r["own"]["store"] - r["own0"] < 0.5 * 64, r  # shared pages are not own memory
    assert r["own"]["heap"] - r["own0"] > 0.9 * 64, r
    assert r["after"]["heap"] < r["own"]["heap"] - 32, r  # freed (and trimmed) when the block ended
    assert r["trim"] is True

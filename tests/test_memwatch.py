"""``engines/memwatch.py``: a Ray actor's RSS told apart. Pages of a shared-memory file (what Ray's object store
is) count as shared, the process's own allocations as own; ``trim`` hands freed heap pages back."""

from __future__ import annotations

import mmap
import os
import sys
import tempfile
from time import sleep as time_sleep

import numpy as np
import pytest

from pairaudit.engines.memwatch import MemWatch, rss_parts, trim

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not os.path.isdir("/dev/shm"),
                                reason="RssShmem is Linux's /proc figure")


def work(size: int) -> float:
    block = np.ones(size // 8)  # the process's own memory, freed on return
    time_sleep(0.05)
    return float(block.sum())


def test_shared_memory_pages_count_as_shared_and_an_allocation_as_own() -> None:
    watch = MemWatch(every=0.01)
    size = 64 * 2**20
    with tempfile.NamedTemporaryFile(dir="/dev/shm") as fh:  # the object store is such a file, mapped
        fh.truncate(size)
        with mmap.mmap(fh.fileno(), size) as shm:
            own0, shared0 = rss_parts()
            with watch.during("store"):
                shm[::4096] = b"\x01" * (size // 4096)  # touch every page
            with watch.during("heap"):
                work(size)
    assert watch.shared["store"] - shared0 > 0.9 * 64, (watch.shared, shared0)
    assert watch.own["store"] - own0 < 0.5 * 64, (watch.own, own0)  # shared pages are not own memory
    assert watch.own["heap"] - own0 > 0.9 * 64, (watch.own, own0)
    assert watch.after["heap"] < watch.own["heap"] - 32  # freed (and trimmed) when the block ended
    assert trim() is True

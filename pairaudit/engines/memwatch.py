"""A Ray actor's resident memory told apart: its own (heap, libraries, models) and the object store's pages.

A worker process that writes an object into Ray's object store (``ray.put``, a large task result) or reads one
maps the store's shared memory, and the kernel counts the pages it touched in the process's RSS (``RssShmem``)
although they belong to the node's store, whose size is fixed (``--object-store-memory``) and which spills to
disk beyond it. Ray's own guidance measures a worker's memory as RSS minus that shared part ("Memory
Management": "Worker heap ... best measured as the resident set size (RSS) of your application minus its shared
memory usage (SHR)"). :class:`MemWatch` samples both parts of this process's RSS on a thread, so a reduce
operation's figures say which of the two grew (docs/scale.md).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from pairaudit.models.runtime import trim

__all__ = ["MemWatch", "rss_parts", "trim"]


def rss_parts() -> tuple[float, float]:
    """This process's resident memory now, in MB: (own = ``VmRSS - RssShmem``, object store = ``RssShmem``);
    (0, 0) where /proc is not there.

    Returns:
        ``(own_mb, shared_mb)``.

    Example:
        >>> own, shared = rss_parts()
        >>> own >= 0 and shared >= 0
        True
    """
    fields: dict[str, int] = {}
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(("VmRSS:", "RssShmem:")):
                    fields[line.split(":", 1)[0]] = int(line.split()[1])
    rss, shmem = fields.get("VmRSS", 0), fields.get("RssShmem", 0)
    return (rss - shmem) / 1024, shmem / 1024


class MemWatch:
    """Peaks of :func:`rss_parts`, sampled every ``every`` seconds on a daemon thread, per label (the operation
    running: :meth:`during`) and overall so far.

    Args:
        every: seconds between samples (a peak shorter than that can be missed: the exact total peak is the
            kernel's ``VmHWM``, ``ray_ops.hwm_mb``).

    Example:
        >>> watch = MemWatch(every=0.01)
        >>> with watch.during("work"):
        ...     block = bytearray(8 * 2**20)
        >>> watch.own["work"] > 0
        True
    """

    def __init__(self, every: float = 0.05) -> None:
        self.every = every
        self.own: dict[str, float] = {}  # label -> peak MB of the process's own memory while it ran
        self.shared: dict[str, float] = {}  # label -> peak MB of the object store's pages it had mapped
        self.after: dict[str, float] = {}  # label -> own MB when its last call ended (after ``trim``)
        self.top_own = self.top_shared = 0.0
        self.labels: list[str] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._run, daemon=True, name="pairaudit-memwatch").start()

    def _run(self) -> None:
        while True:
            self.sample()
            time.sleep(self.every)

    def sample(self) -> None:
        """Take one sample now (also at the start and end of every :meth:`during`)."""
        own, shared = rss_parts()
        with self.lock:
            self.top_own, self.top_shared = max(self.top_own, own), max(self.top_shared, shared)
            for label in self.labels:
                self.own[label] = max(self.own.get(label, 0.0), own)
                self.shared[label] = max(self.shared.get(label, 0.0), shared)

    @contextlib.contextmanager
    def during(self, label: str) -> Iterator[None]:
        """Fold the samples taken while the block runs into ``label``'s peaks (the maximum over its calls)."""
        with self.lock:
            self.labels.append(label)
        self.sample()
        try:
            yield
        finally:
            self.sample()
            with self.lock:
                self.labels.remove(label)
            trim()
            self.after[label] = rss_parts()[0]

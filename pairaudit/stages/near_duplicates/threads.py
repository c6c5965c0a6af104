"""Threads for the whole-dataset decision's independent pieces (cells of the neighbour search, chunks of candidate
pairs). Their work is mostly numpy, BLAS, mapped-file copies and rapidfuzz, which release the GIL, so the main
process uses the cores its idle pool workers leave; each piece's result is computed alone and the results are
put back in their order, so the outputs are those of one thread."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from typing import TypeVar

from pairaudit.config import usable_cpus

T = TypeVar("T")
R = TypeVar("R")


def native_threads() -> int:
    """Threads a native loop of this process may use (rapidfuzz's pairs: each pair's score is computed alone, so
    the values do not depend on it): ``OMP_NUM_THREADS`` where it is set (the pool's workers: 1; a Ray actor: its
    CPUs), else the CPUs this process may use (the local engine's main process, whose workers are idle while the
    stages finalize)."""
    env = os.environ.get("OMP_NUM_THREADS", "")
    return int(env) if env.isdigit() and int(env) > 0 else usable_cpus()


def in_threads(fn: Callable[[T], R], items: Sequence[T], threads: int | None = None) -> list[R]:
    """``[fn(x) for x in items]``, on up to ``threads`` threads (default ``native_threads()``), in order.

    Args:
        fn: a function whose result depends on its item alone.
        items: the pieces.
        threads: at most this many at once (1: in this thread).

    Returns:
        The results, in the order of ``items``.

    Example:
        >>> in_threads(lambda x: x * x, [1, 2, 3], threads=2)
        [1, 4, 9]
    """
    n = native_threads() if threads is None else threads
    if n <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    with one_blas_thread(), ThreadPoolExecutor(max_workers=min(n, len(items))) as pool:
        return list(pool.map(fn, items))


def one_blas_thread() -> AbstractContextManager[object]:
    """BLAS (numpy's matrix products) on one thread for the duration: pieces already run on every core, and a
    BLAS that also spreads each product over the cores oversubscribes them (measured: the neighbour search of
    100k HH rows on 2 cores 2.35 s -> 1.60 s). A product's values do not depend on BLAS's threads (each output
    block is summed by one thread either way; tests/test_pair_memory.py). Nothing changes without threadpoolctl."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - installed with the embed extra
        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")

"""One static-embedding pass per text, shared by every stage that observes a batch and kept across batches.

The near-duplicate stage embeds prompt, chosen and rejected of each pair; ``likely_flipped`` embeds
chosen and rejected; both with the same static (model2vec) model. :class:`BatchVectors` (one per scan,
on ``Context.shared``, so one per worker process) remembers the vectors of the texts it embedded, so the
second stage reads the first one's vectors instead of embedding the texts again, and a text that occurs
several times (a prompt with several response pairs, a response in several pairs: every multi-pair
dataset) is embedded once per worker while it is remembered, across batches. A static embedding depends on
its text alone (the mean of its tokens' vectors, each text tokenized and truncated by itself), so the
vectors are the same as those of separate passes.

Memory is bounded by :data:`MAX_MB`: each remembered text costs its vector (``4 * dim`` bytes) plus its
characters (the key keeps the string alive past its batch) plus ~:data:`ENTRY_OVERHEAD` bytes of dict and
object headers; when the next batch's new texts would pass the budget the memo is emptied and refilled
(no per-call bookkeeping). A dataset without repeats pays one dict lookup per text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

KEY = "batch_vectors"
SHARE = True  # False: every call embeds its texts itself (the previous behaviour; tests compare both)
CROSS_BATCH = True  # False: the memo holds one batch's texts only (the previous behaviour; tests compare both)
MAX_MB = 64
"""Budget of remembered vectors and texts per worker process: at 256 dimensions (1 KB a vector) and ~1.6 KB
a text, ~24k texts; the shared 100k-row scale set has ~7k distinct texts."""
ENTRY_OVERHEAD = 200  # bytes a remembered text costs beyond its characters and vector (dict slot, headers)


class BatchVectors:
    def __init__(self, max_mb: float | None = None) -> None:
        self.max_bytes = int((MAX_MB if max_mb is None else max_mb) * 1024 * 1024)
        self._batch: object | None = None
        self._model: str | None = None
        self._memo: dict[str, np.ndarray] = {}
        self._bytes = 0
        self.n_encoded = 0  # distinct texts embedded
        self.n_reused = 0  # texts served from the memo (repeats, or another stage's pass)
        self.n_cleared = 0  # times the memo was emptied because it was full

    def _reset(self) -> None:
        self._memo, self._bytes = {}, 0

    def _room(self, todo: list[str], texts: list[str], dim: int) -> list[str]:
        """The texts to embed: ``todo``, or, when they would take the memo past its budget, every distinct
        text of ``texts`` after emptying it (rare: a few texts embedded again once per refill)."""
        cost = (4 * dim + ENTRY_OVERHEAD) * len(todo) + sum(len(t) for t in todo)
        if self._memo and self._bytes + cost > self.max_bytes:
            self._reset()
            self.n_cleared += 1
            todo = list(dict.fromkeys(texts))
            cost = (4 * dim + ENTRY_OVERHEAD) * len(todo) + sum(len(t) for t in todo)
        self._bytes += cost
        return todo

    def encode(self, static: Any, batch: object, texts: list[str],
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        """``static.encode(texts)`` for texts of ``batch`` (the pairs list every stage's ``observe``
        receives).

        Args:
            static: the static embedder (``encode``, ``sha256``, ``dim``).
            batch: the batch the texts belong to (with ``CROSS_BATCH`` off the memo is emptied when it
                changes).
            texts: the texts to embed.
            progress: called with the number of texts done.

        Returns:
            ``(len(texts), dim)`` float32, the rows of ``static.encode(texts)``."""
        if not SHARE:
            return static.encode(texts, progress=progress)
        if static.sha256 != self._model or (not CROSS_BATCH and batch is not self._batch):
            self._reset()
        self._batch, self._model = batch, static.sha256
        todo = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if todo:
            todo = self._room(todo, texts, static.dim)
        memo = self._memo
        ready = len(texts) - len(todo)
        if progress is not None and ready:
            progress(ready)
        if todo:
            step = None if progress is None else (lambda done: progress(ready + done))
            memo.update(zip(todo, static.encode(todo, progress=step)))
        self.n_encoded += len(todo)
        self.n_reused += len(texts) - len(todo)
        if not texts:
            return np.empty((0, static.dim), np.float32)
        return np.stack([memo[t] for t in texts])


def batch_vectors(shared: dict[str, Any]) -> BatchVectors:
    """The scan's shared :class:`BatchVectors` (created on first use).

    Args:
        shared: ``Context.shared`` (one per scan and worker process).

    Returns:
        The one :class:`BatchVectors` stored under :data:`KEY`."""
    bv = shared.get(KEY)
    if bv is None:
        bv = shared[KEY] = BatchVectors()
    return bv

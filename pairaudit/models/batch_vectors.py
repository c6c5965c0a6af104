"""One static-embedding pass per text and batch, shared by every stage that observes the batch.

The near-duplicate stage embeds prompt, chosen and rejected of each pair; ``likely_flipped`` embeds
chosen and rejected; both with the same static (model2vec) model. :class:`BatchVectors` (one per scan,
on ``Context.shared``) remembers the vectors of the batch being observed, so the second stage reads the
first one's vectors instead of embedding the texts again, and a text that occurs several times in a
batch (a prompt with several response pairs) is embedded once. A static embedding depends on its text
alone (the mean of its tokens' vectors), so the vectors are the same as those of separate passes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

KEY = "batch_vectors"
SHARE = True  # False: every call embeds its texts itself (the previous behaviour; tests compare both)


class BatchVectors:
    def __init__(self) -> None:
        self._batch: object | None = None
        self._model: str | None = None
        self._memo: dict[str, np.ndarray] = {}
        self.n_encoded = 0  # distinct texts embedded
        self.n_reused = 0  # texts served from the batch's memo (repeats, or another stage's pass)

    def encode(self, static: Any, batch: object, texts: list[str],
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        """``static.encode(texts)`` for texts of ``batch`` (the pairs list every stage's ``observe``
        receives: the memo lives as long as the same batch object is observed)."""
        if not SHARE:
            return static.encode(texts, progress=progress)
        if batch is not self._batch or static.sha256 != self._model:
            self._batch, self._model, self._memo = batch, static.sha256, {}
        memo = self._memo
        todo = list(dict.fromkeys(t for t in texts if t not in memo))
        ready = len(texts) - len(todo)
        if progress is not None and ready:
            progress(ready)
        if todo:
            step = None if progress is None else (lambda done: progress(ready + done))
            V = static.encode(todo, progress=step)
            memo.update(zip(todo, V))
        self.n_encoded += len(todo)
        self.n_reused += len(texts) - len(todo)
        if not texts:
            return np.empty((0, static.dim), np.float32)
        return np.stack([memo[t] for t in texts])


def batch_vectors(shared: dict[str, Any]) -> BatchVectors:
    """The scan's shared :class:`BatchVectors` (created on first use)."""
    bv = shared.get(KEY)
    if bv is None:
        bv = shared[KEY] = BatchVectors()
    return bv

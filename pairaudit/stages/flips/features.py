"""Cheap text features of a pair for ``likely_flipped`` (no model needed).

Every feature is *antisymmetric*: swapping chosen and rejected negates it. ``length_features``:
``log1p(chars_c) - log1p(chars_r)``, the same for words and lines, and
``ends_with_punctuation(c) - ends_with_punctuation(r)``. The static-embedding difference
``e(chosen) - e(rejected)`` is computed by the stage (``stage.py``); ``model`` learns from both.
"""

from __future__ import annotations

import numpy as np

from pairaudit.checks import long_text
from pairaudit.trainer.long_text import LONG_CHARS


def _n_words(t: str) -> int:
    """``len(t.split())``; a long text counted without the list (``re``'s ``\\s`` is ``str.isspace``)."""
    return len(t.split()) if len(t) < LONG_CHARS else long_text.count(long_text.NON_SPACE, t)


def _last_non_space(t: str) -> str | None:
    """``t.rstrip()[-1]`` (None when that is empty), without the copy."""
    k = len(t)
    while k and t[k - 1].isspace():
        k -= 1
    return t[k - 1] if k else None


def length_features(chosen: list[str], rejected: list[str]) -> np.ndarray:
    """``(n, 4)`` antisymmetric length/shape differences."""

    def f(texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), 4))
        for i, t in enumerate(texts):
            last = _last_non_space(t)
            out[i] = (np.log1p(len(t)), np.log1p(_n_words(t)), np.log1p(t.count("\n")),
                      float(last is not None and last in ".!?)]`\"'*"))
        return out

    return f(chosen) - f(rejected)

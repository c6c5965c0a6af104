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


PUNCT = ".!?)]`\"'*"  #: a text ending (before trailing whitespace) in one of these ends with punctuation


def _ends_punct(t: str) -> bool:
    last = _last_non_space(t)
    return last is not None and last in PUNCT


def length_features(chosen: list[str], rejected: list[str]) -> np.ndarray:
    """``(n, 4)`` antisymmetric length/shape differences.

    Args:
        chosen: the chosen responses.
        rejected: the rejected responses, as many.

    Returns:
        Per pair, the chosen side's ``log1p`` of characters, words and line breaks and its final-punctuation
        flag minus the rejected side's (float64).
    """

    def f(texts: list[str]) -> np.ndarray:
        n = len(texts)
        counts = np.empty((3, n))  # one numpy call per measure, not per text: the same log1p values
        counts[0] = np.fromiter(map(len, texts), np.float64, n)
        counts[1] = np.fromiter(map(_n_words, texts), np.float64, n)
        counts[2] = np.fromiter((t.count("\n") for t in texts), np.float64, n)
        out = np.empty((n, 4))
        out[:, :3] = np.log1p(counts).T
        out[:, 3] = np.fromiter(map(_ends_punct, texts), np.float64, n)
        return out

    return f(chosen) - f(rejected)

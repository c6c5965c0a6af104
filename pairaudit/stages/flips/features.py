"""Cheap text features of a pair for ``likely_flipped`` (no model needed).

Every feature is *antisymmetric*: swapping chosen and rejected negates it. ``length_features``:
``log1p(chars_c) - log1p(chars_r)``, the same for words and lines, and
``ends_with_punctuation(c) - ends_with_punctuation(r)``. The static-embedding difference
``e(chosen) - e(rejected)`` is computed by the stage (``stage.py``); ``model`` learns from both.
"""

from __future__ import annotations

import numpy as np


def length_features(chosen: list[str], rejected: list[str]) -> np.ndarray:
    """``(n, 4)`` antisymmetric length/shape differences."""

    def f(texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), 4))
        for i, t in enumerate(texts):
            s = t.rstrip()
            out[i] = (np.log1p(len(t)), np.log1p(len(t.split())), np.log1p(t.count("\n")),
                      float(bool(s) and s[-1] in ".!?)]`\"'*"))
        return out

    return f(chosen) - f(rejected)

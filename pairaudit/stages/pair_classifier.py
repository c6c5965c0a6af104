"""Cross-validated pair classifier: P(given label is right) without any extra model.

Features of a pair are *antisymmetric*: swapping chosen and rejected negates them.
- ``e(chosen) - e(rejected)``: difference of L2-normalised sentence embeddings (the embedder);
- length features: ``log1p(chars_c) - log1p(chars_r)``, the same for words and lines, and
  ``ends_with_punctuation(c) - ends_with_punctuation(r)``.

A logistic regression without intercept is trained on every pair in both orientations (label 1 as
given, label 0 swapped: the sign-flip augmentation), so it learns which *direction* of a feature
difference marks the preferred response and ``p(x) = 1 - p(-x)`` holds exactly. Predictions are
out-of-fold (k-fold, both orientations of a pair always in the same fold), so each pair is scored by
a model that never saw it. The out-of-fold log-odds are then calibrated by one temperature fitted
against the given labels (a classifier at chance is pulled to 0.5 instead of being over-confident).
``p_correct`` is the calibrated OOF probability of the given orientation.

Flip-rate estimate (confident learning, binary case): the per-class threshold is the mean
self-confidence ``t = mean(p_correct)``; by antisymmetry the swapped class has the same threshold,
so a pair counts as confidently flipped when ``1 - p_correct >= t``. The estimate is that count over
n. It is only as good as the classifier: near chance (AUROC ~0.5) it says little, and a classifier
trained on data with flips learns a shrunken direction (so it under-estimates high flip rates).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pairaudit.errors import require


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


def pair_features(emb_diff: np.ndarray, len_diff: np.ndarray, length_weight: float = 1.0) -> np.ndarray:
    return np.hstack([np.asarray(emb_diff, np.float32), length_weight * np.asarray(len_diff, np.float32)])


def cross_validated_p_correct(x: np.ndarray, *, folds: int = 5, c: float = 0.1, seed: int = 0,
                              min_confidence: float = 0.55) -> dict[str, Any]:
    """Out-of-fold P(given orientation is right) for antisymmetric pair features ``x`` (n, d).

    Returns ``p_correct`` (n,), ``flip_rate`` (confident-learning estimate), ``threshold`` and
    ``folds`` used. With fewer than 20 pairs there is nothing to learn from: p_correct = 0.5.
    """
    n = len(x)
    if n < 20:
        return {"p_correct": np.full(n, 0.5), "flip_rate": None, "threshold": None, "folds": 0}
    require("sklearn", "flips", "the pair classifier")
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    k = max(2, int(min(folds, n // 10)))
    rng = np.random.default_rng(seed)
    fold = rng.permutation(n) % k
    d = np.empty(n)  # out-of-fold decision values (log-odds of the given orientation)
    for f in range(k):
        tr, te = fold != f, fold == f
        xt = x[tr]
        # scale without centring so antisymmetry (x -> -x) is preserved
        scaler = StandardScaler(with_mean=False).fit(np.vstack([xt, -xt]))
        xs = scaler.transform(np.vstack([xt, -xt]))
        y = np.r_[np.ones(len(xt)), np.zeros(len(xt))]
        clf = LogisticRegression(C=c, fit_intercept=False, max_iter=2000)
        clf.fit(xs, y)
        d[te] = clf.decision_function(scaler.transform(x[te]))
    # calibration: one temperature fitted on the out-of-fold values against the given labels (both
    # orientations). A classifier at chance gets a ~0 temperature, so its p stays near 0.5 instead of
    # the over-confident 0/1 a high-dimensional fit produces; label noise only makes this conservative.
    cal = LogisticRegression(C=1e4, fit_intercept=False, max_iter=1000)
    cal.fit(np.r_[d, -d][:, None], np.r_[np.ones(n), np.zeros(n)])
    a = max(float(cal.coef_[0, 0]), 0.0)
    p = 1.0 / (1.0 + np.exp(-np.clip(a * d, -50, 50)))
    t = float(p.mean())
    out: dict[str, Any] = {"p_correct": p, "threshold": t, "folds": k, "temperature": a}
    if t < min_confidence:
        out["flip_rate"] = None
        out["flip_rate_note"] = (f"mean out-of-fold confidence {t:.3f} < {min_confidence}: the classifier is near "
                                 "chance on this data, so it supports no flip-rate estimate")
    else:
        out["flip_rate"] = float(((1.0 - p) >= t).mean())
    return out

"""What the flip model's evidence supports: enough rows? better than chance? how many flips?

- **Not enough rows**: below ``min_rows`` scorable pairs the cross-fitted model cannot learn anything
  (measured: ``scripts/eval_flips.py --min-rows-curve``); no scores are emitted.
- **At chance**: the model's out-of-fold predictions agree with the dataset's own labels on a share
  ``a`` of its pairs. With no signal ``a`` is Binomial(n, 1/2)/n; the evidence counts only when
  ``a`` is ``z_min`` standard errors above 1/2 (``z = (a - 1/2) * 2 * sqrt(n)``). Below that the
  scan says "at chance" and flags nothing.
- **Flip rate** (confident learning, binary case): with calibrated out-of-fold ``p_correct``, the
  per-class threshold is the mean self-confidence ``t = mean(p_correct)`` (by antisymmetry the
  swapped class has the same threshold) and a pair counts as confidently flipped when
  ``1 - p_correct >= t``. The 95% interval resamples rows (bootstrap). The estimate is only
  reported when the model separates the labels well (``auroc_proxy >= min_auroc``); a weak model
  mostly counts its own errors, so the rate is then "unknown".
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def auroc_proxy(logodds: np.ndarray) -> float:
    """AUROC of the out-of-fold log-odds against the given labels, both orientations of each pair
    (given = positive, swapped = negative): 0.5 = the labels are unpredictable from the features."""
    from sklearn.metrics import roc_auc_score

    d = np.asarray(logodds, np.float64)
    if len(d) == 0:
        return 0.5
    return float(roc_auc_score(np.r_[np.ones(len(d)), np.zeros(len(d))], np.r_[d, -d]))


def flip_rate_cl(p_correct: np.ndarray, *, boot: int = 200, seed: int = 0) -> tuple[float, float, float]:
    """Confident-learning flip-rate estimate and a bootstrap 95% interval (rows resampled)."""
    p = np.asarray(p_correct, np.float64)

    def est(q: np.ndarray) -> float:
        return float(np.mean((1.0 - q) >= q.mean()))

    rng = np.random.default_rng(seed)
    draws = [est(p[rng.integers(0, len(p), len(p))]) for _ in range(boot)]
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return est(p), float(lo), float(hi)


def judge(p_correct: np.ndarray, logodds: np.ndarray, *, min_rows: int, z_min: float = 3.0,
          min_auroc: float = 0.75, min_auroc_flags: float = 0.75) -> dict[str, Any]:
    """The verdict for ``n`` scored rows: status, agreement, z, AUROC proxy, flip rate (or None), whether
    rows may be flagged (``flags``: an informative model with AUROC proxy >= ``min_auroc_flags``; a weaker
    one's flags were 0-45% right on real sets, docs/flips.md) and one sentence saying what the evidence
    supports."""
    n = len(p_correct)
    out: dict[str, Any] = {"rows_scored": int(n), "min_rows": int(min_rows), "flags": False}
    if n < min_rows:
        out.update(status="not_enough_rows", estimated_flip_rate=None,
                   verdict=f"not enough rows to judge labels: {n:,} scorable pairs, the model needs >= {min_rows:,}")
        return out
    d = np.asarray(logodds, np.float64)
    agree = float((np.sum(d > 0) + 0.5 * np.sum(d == 0)) / n)
    z = (agree - 0.5) * 2.0 * math.sqrt(n)
    auc = auroc_proxy(d)
    out.update(agreement=round(agree, 4), z=round(z, 2), auroc_proxy=round(auc, 4))
    if z < z_min:
        out.update(status="at_chance", estimated_flip_rate=None,
                   verdict=f"labels at chance: out-of-fold the model agrees with the given labels on {agree:.1%} "
                           f"of {n:,} pairs (chance 50%, z = {z:.1f} < {z_min:g}); no row is flagged and no flip rate "
                           "can be estimated")
        return out
    out["status"] = "informative"
    out["flags"] = bool(auc >= min_auroc_flags)
    head = (f"the model agrees with the given labels on {agree:.1%} of {n:,} pairs out-of-fold (chance 50%, "
            f"z = {z:.1f}; AUROC proxy {auc:.2f})")
    if auc >= min_auroc:
        rate, lo, hi = flip_rate_cl(p_correct)
        out.update(estimated_flip_rate=round(rate, 4), flip_rate_interval=[round(lo, 4), round(hi, 4)],
                   estimated_flip_rate_method="confident learning on the out-of-fold model, 95% bootstrap interval")
        out["verdict"] = f"{head}; estimated flip rate {rate:.1%} (95% interval {lo:.1%}-{hi:.1%})"
    else:
        out.update(estimated_flip_rate=None,
                   estimated_flip_rate_note=f"AUROC proxy {auc:.2f} < {min_auroc:g}: too weak to count flips")
        out["verdict"] = f"{head}; weak evidence: flip rate unknown, " + (
            "flags are leads to review, not verdicts" if out["flags"] else
            f"no row is flagged (AUROC proxy < min_auroc_for_flags {min_auroc_flags:g}: flags of a model this weak "
            "were mostly wrong on real data, docs/flips.md); likely_flipped_score in scores.parquet ranks the rows")
    if not out["flags"]:
        out["flags_note"] = (f"no row flagged: AUROC proxy {auc:.2f} < min_auroc_for_flags {min_auroc_flags:g}; "
                             "lower it (--set likely_flipped.min_auroc_for_flags=0) for leads to review")
    return out

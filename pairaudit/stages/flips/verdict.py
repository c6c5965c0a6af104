"""From collected per-row flip features to scores, findings and the verdict (``likely_flipped``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pairaudit.checks.base import CheckInfo
from pairaudit.datatypes import Finding
from pairaudit.stages.flips.model import drivers, fit_flip_model, oof_logodds
from pairaudit.stages.flips.stats import judge

LIKELY_FLIPPED_INFO = CheckInfo(
    "likely_flipped",
    "evidence that the rejected response is better than the chosen one: one cross-fitted model over every signal "
    "that ran (embedding and length differences always; the reference model's log-probs and hidden states with "
    "--reference or on CUDA; reward margin; policy logit), whose signs and weights are learned from the dataset's "
    "own labels; likely_flipped_score = 1 - P(label right), flagged at `threshold` when the evidence beats chance",
    "flag",
    summary="evidence rejected is better",
    kind="global",
    extra="flips",
    default_enabled=True,
    thresholds={"threshold": 0.8, "folds": 5, "min_rows": 200, "z_min": 3.0, "min_auroc_for_rate": 0.75,
                "use_reference": True, "use_embedding": True},
    why="studies of noisy preference data find that removing suspected flips is safer than flipping them back "
        "(a wrong flip injects a new error, and weak detectors have many false positives); flag for review, "
        "drop with --drop likely_flipped, or flip with --flip likely_flipped when the evidence is strong",
)

# which raw features make up each signal (for "rows scored per signal")
SIGNAL_FEATURES = {"embedding": ("embedding",), "length": ("chars", "words", "lines", "ends_punct"),
                   "reference": ("ref_sum", "ref_mean", "ref_min", "ref_tokens"), "probe": ("probe",),
                   "reward": ("reward",), "policy": ("policy",)}


def _stacked_feature(x: np.ndarray | None, ok_rows: np.ndarray, min_rows: int, folds: int) -> np.ndarray | None:
    """Out-of-fold log-odds of a linear model on a high-dimensional antisymmetric feature (NaN elsewhere)."""
    if x is None or x.shape[1] == 0:
        return None
    ok = ok_rows.copy()
    for lo in range(0, len(x), 65536):  # x may be memory-mapped: read in chunks
        ok[lo:lo + 65536] &= np.isfinite(x[lo:lo + 65536]).all(axis=1)
    if ok.sum() < min_rows:
        return None
    out = np.full(len(x), np.nan)
    # float16 stays float16 (read in float32 per fold): the same values as one float32 copy, half the memory
    sub = x if ok.all() else x[ok]
    out[ok] = oof_logodds(sub if sub.dtype == np.float16 else sub.astype(np.float32), folds=folds)
    return out


def flip_result(rows: np.ndarray, raw: dict[str, np.ndarray], emb: np.ndarray | None, hid: np.ndarray | None,
                params: dict[str, Any], labels: dict[str, str]) -> tuple[list[Finding], dict[str, Any], dict[str, Any]]:
    """(findings, score columns, stats) of ``likely_flipped`` for the ``rows`` the stage saw."""
    n = len(rows)
    min_rows, folds = int(params["min_rows"]), int(params["folds"])
    text_ok = np.isfinite(raw["chars"])
    feats = dict(raw)
    for name, x in (("embedding", emb), ("probe", hid)):
        f = _stacked_feature(x, text_ok if name == "embedding" else np.ones(n, bool), min_rows, folds)
        feats[name] = f if f is not None else np.full(n, np.nan)
    feats = {k: v for k, v in feats.items() if np.isfinite(v).any()}
    scorable = np.zeros(n, bool)
    for v in feats.values():
        scorable |= np.isfinite(v)
    signals = {s: int(np.isfinite(np.column_stack([feats[f] for f in fs if f in feats])).any(axis=1).sum())
               if any(f in feats for f in fs) else 0 for s, fs in SIGNAL_FEATURES.items()}
    score = np.full(n, np.nan)
    scores: dict[str, Any] = {LIKELY_FLIPPED_INFO.score_key: score,
                              "flip_embedding_logodds": feats.get("embedding", np.full(n, np.nan)),
                              "flip_probe_logodds": feats.get("probe", np.full(n, np.nan))}
    idx = np.nonzero(scorable)[0]
    if len(idx) < min_rows:
        stats = judge(np.empty(len(idx)), np.empty(len(idx)), min_rows=min_rows)
        stats["rows_per_signal"] = signals
        return [], scores, stats
    fit = fit_flip_model({k: v[idx] for k, v in feats.items()}, folds=folds)
    stats = judge(fit.p_correct, fit.logodds, min_rows=min_rows, z_min=float(params["z_min"]),
                  min_auroc=float(params["min_auroc_for_rate"]))
    score[idx] = 1.0 - fit.p_correct
    stats.update(rows_per_signal=signals, weights=fit.weights, folds=fit.folds, temperature=round(fit.temperature, 4))
    findings: list[Finding] = []
    thr = float(params["threshold"])
    if stats["status"] == "informative":
        sub_raw = {k: v[idx] for k, v in feats.items()}
        for j in np.nonzero(score[idx] >= thr)[0]:
            i = idx[j]
            why = drivers(fit, int(j), sub_raw, labels)
            findings.append(LIKELY_FLIPPED_INFO.finding(int(rows[i]), None, float(score[i]),
                                    detail=f"likely_flipped_score {score[i]:.2f} >= {thr:g}"
                                           + (f"; driven by {why}" if why else "")))
    stats["flagged"] = len(findings)
    return findings, scores, stats

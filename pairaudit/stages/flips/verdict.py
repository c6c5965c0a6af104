"""From collected per-row flip features to scores, findings and the verdict (``likely_flipped``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pairaudit.checks.base import CheckInfo
from pairaudit.config import clamp_record
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
                "min_auroc_for_flags": 0.75, "use_reference": True, "use_embedding": True, "fit_sample_rows": 100_000},
    why="studies of noisy preference data find that removing suspected flips is safer than flipping them back "
        "(a wrong flip injects a new error, and weak detectors have many false positives); flag for review, "
        "drop with --drop likely_flipped, or flip with --flip likely_flipped when the evidence is strong",
)

# which raw features make up each signal (for "rows scored per signal")
SIGNAL_FEATURES = {"embedding": ("embedding",), "length": ("chars", "words", "lines", "ends_punct"),
                   "reference": ("ref_sum", "ref_mean", "ref_min", "ref_tokens"), "probe": ("probe",),
                   "reward": ("reward",), "policy": ("policy",)}


def _finite_rows(x: np.ndarray, ok_rows: np.ndarray) -> np.ndarray:
    ok = ok_rows.copy()
    for lo in range(0, len(x), 65536):  # x may be memory-mapped: read in chunks
        ok[lo:lo + 65536] &= np.isfinite(x[lo:lo + 65536]).all(axis=1)
    return ok


def _stacked_feature(x: np.ndarray | None, ok_rows: np.ndarray, min_rows: int, folds: int,
                     linear: list[np.ndarray] | None = None, groups: np.ndarray | None = None) -> np.ndarray | None:
    """Out-of-fold log-odds of a linear model on a high-dimensional antisymmetric feature (NaN elsewhere)."""
    if x is None or x.shape[1] == 0:
        return None
    ok = _finite_rows(x, ok_rows)
    if ok.sum() < min_rows:
        return None
    out = np.full(len(x), np.nan)
    # float16 stays float16 (read in float32 per fold): the same values as one float32 copy, half the memory
    sub = x if ok.all() else x[ok]
    out[ok] = oof_logodds(sub if sub.dtype == np.float16 else sub.astype(np.float32), folds=folds, linear=linear,
                          groups=None if groups is None else groups[ok])
    return out


def flip_result(rows: np.ndarray, raw: dict[str, np.ndarray], emb: np.ndarray | None, hid: np.ndarray | None,
                params: dict[str, Any], labels: dict[str, str], model: dict[str, Any] | None = None,
                groups: np.ndarray | None = None) -> tuple[list[Finding], dict[str, Any], dict[str, Any]]:
    """(findings, score columns, stats) of ``likely_flipped`` for the ``rows`` the stage saw; ``model`` (a dict)
    receives the fitted model as plain arrays, for rows the fit did not see (:func:`apply_flip_model`);
    ``groups``: per row, a digest of its prompt: the pairs of one prompt share a fold (``model._folds``)."""
    n = len(rows)
    min_rows, folds = int(params["min_rows"]), int(params["folds"])
    text_ok = np.isfinite(raw["chars"])
    feats = dict(raw)
    stacked: dict[str, list[np.ndarray]] = {"embedding": [], "probe": []}
    for name, x in (("embedding", emb), ("probe", hid)):
        f = _stacked_feature(x, text_ok if name == "embedding" else np.ones(n, bool), min_rows, folds,
                             stacked[name], groups)
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
    fit = fit_flip_model({k: v[idx] for k, v in feats.items()}, folds=folds,
                         groups=None if groups is None else groups[idx])
    stats = judge(fit.p_correct, fit.logodds, min_rows=min_rows, z_min=float(params["z_min"]),
                  min_auroc=float(params["min_auroc_for_rate"]),
                  min_auroc_flags=float(params["min_auroc_for_flags"]))
    if model is not None:
        model.update(names=list(fit.names), linear=fit.linear if fit.linear is not None else np.zeros(0),
                     temperature=float(fit.temperature), status=stats["status"], flags=stats["flags"],
                     features=sorted(feats),
                     **{f"{k}_linear": np.mean(v, axis=0) for k, v in stacked.items() if v})
    score[idx] = 1.0 - fit.p_correct
    stats.update(rows_per_signal=signals, weights=fit.weights, folds=fit.folds, temperature=round(fit.temperature, 4))
    if fit.folds:
        clamp_record(stats, "likely_flipped", "folds", folds, fit.folds,
                     f"at most one fold per 10 of the {len(idx):,} scored rows, at least 2")
    findings: list[Finding] = []
    thr = float(params["threshold"])
    if stats["flags"]:
        sub_raw = {k: v[idx] for k, v in feats.items()}
        for j in np.nonzero(score[idx] >= thr)[0]:
            i = idx[j]
            why = drivers(fit, int(j), sub_raw, labels)
            findings.append(LIKELY_FLIPPED_INFO.finding(int(rows[i]), None, float(score[i]),
                                    detail=f"likely_flipped_score {score[i]:.2f} >= {thr:g}"
                                           + (f"; driven by {why}" if why else "")))
    stats["flagged"] = len(findings)
    return findings, scores, stats


def apply_flip_model(model: dict[str, Any], rows: np.ndarray, raw: dict[str, np.ndarray], emb: np.ndarray | None,
                     hid: np.ndarray | None, params: dict[str, Any], labels: dict[str, str]
                     ) -> tuple[list[Finding], dict[str, Any]]:
    """``likely_flipped`` findings and score columns of rows the model was not fitted on (``flip_result``'s
    ``model``: the fold models' mean weights and the fitted temperature), e.g. the rows outside the bounded
    sample a distributed engine fits on."""
    n = len(rows)
    text_ok = np.isfinite(raw["chars"])
    feats = dict(raw)
    for name, x, ok_rows in (("embedding", emb, text_ok), ("probe", hid, np.ones(n, bool))):
        w = model.get(f"{name}_linear")
        f = np.full(n, np.nan)
        if x is not None and w is not None and x.shape[1] == len(w):
            ok = _finite_rows(x, ok_rows)
            f[ok] = np.asarray(x[ok], np.float32) @ np.asarray(w, np.float32)
        feats[name] = f
    score = np.full(n, np.nan)
    scores: dict[str, Any] = {"likely_flipped_score": score, "flip_embedding_logodds": feats["embedding"],
                              "flip_probe_logodds": feats["probe"]}
    names = [k for k in model.get("names", []) if k in feats]
    if not names or len(names) != len(model["names"]):
        return [], scores
    feats = {k: v for k, v in feats.items() if k in model["features"]}
    scorable = np.zeros(n, bool)
    for v in feats.values():
        scorable |= np.isfinite(v)
    idx = np.flatnonzero(scorable)
    x = np.column_stack([np.nan_to_num(np.asarray(feats[k][idx], np.float64), nan=0.0) for k in names])
    contrib = x * np.asarray(model["linear"], np.float64)
    d = contrib.sum(axis=1)
    a = float(model["temperature"])
    p = 1.0 / (1.0 + np.exp(-np.clip(a * d, -50, 50)))
    score[idx] = 1.0 - p
    findings: list[Finding] = []
    if model.get("flags", model["status"] == "informative"):
        from pairaudit.stages.flips.model import FlipFit

        fit = FlipFit(p, d, contrib, names, {}, 0, a)
        thr = float(params["threshold"])
        sub_raw = {k: v[idx] for k, v in feats.items()}
        for j in np.flatnonzero(score[idx] >= thr):
            i = idx[j]
            why = drivers(fit, int(j), sub_raw, labels)
            detail = f"likely_flipped_score {score[i]:.2f} >= {thr:g}" + (f"; driven by {why}" if why else "")
            findings.append(LIKELY_FLIPPED_INFO.finding(int(rows[i]), None, float(score[i]), detail=detail))
    return findings, scores

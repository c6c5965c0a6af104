"""Quality of ``likely_flipped`` against known label flips, per signal and combined, at full size.

Datasets (``../shared/data``):
- UltraFeedback-1k ``label_flip_10`` / ``label_flip_20``: ``metadata`` is dropped before detection; the
  truth is ``metadata.noise.selected``;
- HH-RLHF helpful-base test: 10% of rows swapped here (seed 0); degenerate pairs (empty or identical
  responses) are left out, they are other checks' business.

For each dataset every row goes through the real ``FlipStage.observe`` (the static embedder and, with
the reference model, SmolLM2 log-probs and pooled hidden states, cached by token ids). Then the
stage's own ``flip_result`` is run on feature subsets: each signal alone (its own cross-fitted model,
so its sign is learned too), fixed-sign baselines, the default combination (no language model) and the
full combination. AUROC and precision@k (k = true flips) against the truth; the verdict the scan
would print; and the estimated flip rate against the real one.

    .venv/bin/python scripts/eval_flips.py                   # default: all three sets, with the reference
    .venv/bin/python scripts/eval_flips.py --no-reference    # the cheap signal only
    .venv/bin/python scripts/eval_flips.py --min-rows-curve  # how many rows the model needs

The first run with the reference model scores ~3,400 pairs on the CPU (about an hour on 2 cores);
reruns read the cache (``--cache``, default /work/evalcache).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
DATA = Path(os.environ.get("PAIRAUDIT_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
LEN = ("chars", "words", "lines", "ends_punct")
REF = ("ref_sum", "ref_mean", "ref_min", "ref_tokens")


def load_uf(name: str) -> tuple[list, np.ndarray]:
    from pairaudit.datatypes import Pair

    pairs, truth = [], []
    for i, line in enumerate(open(DATA / f"ultrafeedback-1k/{name}.jsonl", encoding="utf-8")):
        r = json.loads(line)
        meta = r.pop("metadata", None) or {}
        truth.append(bool((meta.get("noise") or {}).get("selected")))
        pairs.append(Pair(i, "standard", r["prompt"], r["chosen"], r["rejected"]))
    return pairs, np.array(truth)


def load_hh(rate: float = 0.1, seed: int = 0) -> tuple[list, np.ndarray]:
    from pairaudit.io.formats import normalise

    pairs = []
    for i, line in enumerate(open(DATA / "hh-rlhf/helpful-base-test.jsonl", encoding="utf-8")):
        p = normalise(i, json.loads(line), "implicit_hh")
        if p.notes or not p.chosen.strip() or not p.rejected.strip() or p.chosen.strip() == p.rejected.strip():
            continue
        pairs.append(p)
    rng = np.random.default_rng(seed)
    truth = np.zeros(len(pairs), bool)
    truth[rng.choice(len(pairs), int(round(rate * len(pairs))), replace=False)] = True
    for p, t in zip(pairs, truth):
        if t:
            p.chosen, p.rejected = p.rejected, p.chosen
    return pairs, truth


def metrics(score: np.ndarray, truth: np.ndarray) -> dict:
    from sklearn.metrics import roc_auc_score

    ok = np.isfinite(score)
    s, t = score[ok], truth[ok]
    if t.sum() == 0 or t.sum() == len(t):
        return {"n": int(ok.sum()), "auroc": None, "p@k": None}
    k = int(t.sum())
    top = np.argsort(-s, kind="stable")[:k]
    return {"n": int(ok.sum()), "auroc": round(float(roc_auc_score(t, s)), 3), "p@k": round(float(t[top].mean()), 3)}


def collect(pairs: list, with_ref: bool, cache: Path) -> tuple[dict, np.ndarray | None, np.ndarray | None]:
    """Run the real stage's observe over every pair; return (raw features, emb diff, hidden diff)."""
    from pairaudit.config import Context, ScanConfig
    from pairaudit.stages.flips.stage import FlipStage
    from pairaudit.trainer import profiles

    base = ScanConfig(reference="default" if with_ref else None, device="cpu")
    cfg = profiles.resolve(base).apply(base)
    stage = FlipStage(Context(cfg, cache, lambda m: print("  [log]", m, flush=True), params={}), {"likely_flipped"})
    for s in range(0, len(pairs), 100):
        stage.observe(pairs[s:s + 100], None)
    col = {k: np.concatenate(v) for k, v in stage._cols.items()}
    tc, tr = col["ref_tokens_chosen"], col["ref_tokens_rejected"]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = col["ref_logp_chosen"] / tc - col["ref_logp_rejected"] / tr
    raw = {"ref_sum": col["ref_logp_chosen"] - col["ref_logp_rejected"], "ref_mean": mean,
           "ref_min": col["ref_min_logp_chosen"] - col["ref_min_logp_rejected"],
           "ref_tokens": np.log1p(tc) - np.log1p(tr)}
    lenf = np.concatenate(stage._lenf)
    raw.update({k: lenf[:, j].astype(np.float64) for j, k in enumerate(LEN)})
    emb = np.concatenate(stage._emb) if stage._emb else None
    hid = np.concatenate(stage._hid) if stage._hid and stage._hid[0].shape[1] else None
    return raw, emb, hid


def evaluate(raw: dict, emb, hid, truth: np.ndarray, with_ref: bool) -> dict:
    from pairaudit.stages.flips.stage import LIKELY_FLIPPED_INFO
    from pairaudit.stages.flips.verdict import flip_result

    n = len(truth)
    # the flags a scan would raise at any model strength (a scan withholds them below min_auroc_for_flags and
    # says so): their precision is what this script measures
    params = {**LIKELY_FLIPPED_INFO.thresholds, "min_auroc_for_flags": 0.0}
    nan = {k: np.full(n, np.nan) for k in raw}

    def run(keys: tuple[str, ...], e=None, h=None) -> tuple[np.ndarray, dict]:
        sub = {**nan, **{k: raw[k] for k in keys}}
        sub["chars"] = raw["chars"] if "chars" in keys or e is not None else np.where(np.isfinite(raw["chars"]), 0.0,
                                                                                          np.nan)
        findings, scores, stats = flip_result(np.arange(n), sub, e, h, params, {})
        flagged = [f.row for f in findings]
        stats["flagged_true_flips"] = int(truth[flagged].sum()) if flagged else 0
        return scores["likely_flipped_score"], stats

    out: dict = {}
    rows = {"baseline: chosen shorter (chars, fixed sign)": -raw["chars"]}
    s, _ = run(LEN)
    rows["length features (learned)"] = s
    s, _ = run(("chars",), e=emb)
    rows["static embedding model (learned)"] = s
    s, st_default = run(LEN, e=emb)
    rows["COMBINED default: embedding + length"] = s
    if with_ref:
        rows["reference summed margin (fixed sign: -m)"] = -raw["ref_sum"]
        rows["reference per-token margin (fixed sign: -m)"] = -raw["ref_mean"]
        s, _ = run(REF)
        rows["reference log-prob features (learned)"] = s
        s, _ = run((), h=hid)
        rows["reward probe on hidden states (learned)"] = s
        s, _ = run(LEN + REF, e=emb)
        rows["combined with reference, without the probe"] = s
        s, st_full = run(LEN + REF, e=emb, h=hid)
        rows["COMBINED with reference: all signals"] = s
        out["_verdict_with_reference"] = {k: st_full.get(k) for k in ("status", "verdict", "estimated_flip_rate",
                                                                      "flip_rate_interval", "weights", "flagged",
                                                                      "flagged_true_flips")}
    for k, v in rows.items():
        out[k] = metrics(v, truth)
    out["_verdict_default"] = {k: st_default.get(k) for k in ("status", "verdict", "estimated_flip_rate",
                                                              "flip_rate_interval", "weights", "flagged",
                                                              "flagged_true_flips")}
    out["_true_flip_rate"] = round(float(truth.mean()), 4)
    return out


def min_rows_curve(raw: dict, emb, truth: np.ndarray, name: str) -> None:
    """AUROC vs truth and the at-chance z of the default combination on random subsets of size m."""
    from pairaudit.stages.flips.stage import LIKELY_FLIPPED_INFO
    from pairaudit.stages.flips.verdict import flip_result

    params = {**LIKELY_FLIPPED_INFO.thresholds, "min_rows": 20}
    for m in (50, 100, 200, 400, 800):
        if m > len(truth):
            break
        aucs, zs = [], []
        for seed in range(5):
            idx = np.sort(np.random.default_rng(seed).choice(len(truth), m, replace=False))
            sub = {k: v[idx] for k, v in raw.items()}
            _, scores, stats = flip_result(np.arange(m), sub, emb[idx], None, params, {})
            aucs.append(metrics(scores["likely_flipped_score"], truth[idx])["auroc"] or 0.5)
            zs.append(stats.get("z", 0.0))
        print(f"  [min-rows] {name} m={m:4d}: AUROC vs truth {np.mean(aucs):.3f} (min {np.min(aucs):.3f}), "
              f"z {np.mean(zs):.1f}, at chance (z<3) in {sum(z < 3 for z in zs)}/5", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-reference", action="store_true", help="the cheap (default CPU) signal only")
    ap.add_argument("--min-rows-curve", action="store_true")
    ap.add_argument("--cache", default=os.environ.get("PAIRAUDIT_CACHE", "/work/evalcache"))
    ap.add_argument("--datasets", default="label_flip_10,label_flip_20,hh")
    args = ap.parse_args()
    with_ref = not args.no_reference
    report = {}
    for name in args.datasets.split(","):
        pairs, truth = load_hh() if name == "hh" else load_uf(name)
        print(f"\n== {name}: {len(pairs)} rows, {int(truth.sum())} true flips; reference model: {with_ref}", flush=True)
        t0 = time.perf_counter()
        raw, emb, hid = collect(pairs, with_ref, Path(args.cache))
        if args.min_rows_curve:
            min_rows_curve(raw, emb, truth, name)
            continue
        report[name] = evaluate(raw, emb, hid, truth, with_ref)
        for k, v in report[name].items():
            print(f"  {k:48s} {v}")
        print(f"  ({time.perf_counter() - t0:.0f}s)", flush=True)
    if report:
        print(json.dumps(report, default=str))


if __name__ == "__main__":
    main()

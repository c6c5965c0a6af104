"""Evaluate likely_flipped signals against known label flips.

Datasets:
- UltraFeedback-1k label_flip_10 / label_flip_20 (``metadata`` dropped before detection; ground truth:
  a row is flipped when its chosen equals the chosen of train_clean.jsonl's row with the same
  source_index... swapped, i.e. chosen == clean rejected);
- HH-RLHF helpful-base test with 10% random flips injected here (seed 0), identical pairs removed.

For every signal alone and combined: AUROC and precision@k (k = number of true flips) on the rows
that signal scored. The reference model runs on the first ``--rows`` rows of each dataset (CPU time
is scarce); the classifier on the first ``--classifier-rows`` rows. Sequences are cached by content,
so flip_10 re-uses flip_20's reference work (same texts, some swapped).

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/eval_flips.py --rows 120 --classifier-rows 400
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
DATA = Path(os.environ.get("PAIRAUDIT_DATA", "/work/shared/data"))


def load_uf(name: str, n: int) -> tuple[list, np.ndarray]:
    from pairaudit.types import Pair

    clean = {}
    for line in open(DATA / "ultrafeedback-1k/train_clean.jsonl", encoding="utf-8"):
        r = json.loads(line)
        clean[r["source_index"]] = r
    pairs, truth = [], []
    for i, line in enumerate(open(DATA / f"ultrafeedback-1k/{name}.jsonl", encoding="utf-8")):
        if i >= n:
            break
        r = json.loads(line)
        r.pop("metadata", None)  # leaks the flips
        c = clean[r["source_index"]]
        truth.append(r["chosen"] == c["rejected"] and r["rejected"] == c["chosen"] and c["chosen"] != c["rejected"])
        pairs.append(Pair(i, "standard", r["prompt"], r["chosen"], r["rejected"]))
    return pairs, np.array(truth)


def load_hh(n: int, rate: float = 0.1, seed: int = 0) -> tuple[list, np.ndarray]:
    from pairaudit.io.formats import normalise

    pairs = []
    for i, line in enumerate(open(DATA / "hh-rlhf/helpful-base-test.jsonl", encoding="utf-8")):
        if len(pairs) >= n:
            break
        p = normalise(i, json.loads(line), "implicit_hh")
        if p.notes or not p.chosen.strip() or not p.rejected.strip() or p.chosen.strip() == p.rejected.strip():
            continue  # degenerate pairs are other checks' business
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
        return {"n": int(ok.sum()), "flips": int(t.sum()), "auroc": None, "p@k": None}
    k = int(t.sum())
    top = np.argsort(-s, kind="stable")[:k]
    return {"n": int(ok.sum()), "flips": k, "auroc": round(float(roc_auc_score(t, s)), 3),
            "p@k": round(float(t[top].mean()), 3)}


def run(name: str, pairs: list, truth: np.ndarray, args: argparse.Namespace) -> dict:
    from pairaudit.config import Context, ScanConfig
    from pairaudit.stages.flips import FlipStage

    cfg = ScanConfig(max_length=args.max_length, max_prompt_length=args.max_prompt_length,
                     reference_max_rows=args.rows, precision=args.precision)
    ctx = Context(cfg, Path(args.cache), lambda m: print("  [log]", m, flush=True), params={})
    t0 = time.perf_counter()
    stage = FlipStage(ctx, {"likely_flipped", "dpo_overflow_risk"})
    for s in range(0, len(pairs), 100):
        stage.observe(pairs[s:s + 100], None)
    res = stage.finalize()
    sc = {k: np.asarray(v, dtype=float) for k, v in res.scores.items()}
    ref_rows = np.isfinite(sc["ref_logp_chosen"])
    lens = np.array([len(p.chosen) - len(p.rejected) for p in pairs], float)
    signals = {
        "reference per-token margin (-m)": -(sc["ref_mean_logp_chosen"] - sc["ref_mean_logp_rejected"]),
        "reference summed margin (-ref_margin)": -sc["ref_margin"],
        "classifier (1 - p_correct)": 1 - sc["classifier_p_correct"],
        "classifier, on reference rows only": np.where(ref_rows, 1 - sc["classifier_p_correct"], np.nan),
        "combined likely_flipped_score": np.where(ref_rows, sc["likely_flipped_score"], np.nan),
        "baseline: chosen shorter (chars)": -lens,
    }
    out = {k: metrics(v, truth) for k, v in signals.items()}
    thr = float(stage.p_flip["threshold"])
    flagged = np.nan_to_num(sc["likely_flipped_score"], nan=0) >= thr
    out["_summary"] = {
        "rows": len(pairs), "true_flips": int(truth.sum()),
        "reference_rows": int(ref_rows.sum()), "true_flips_in_reference_rows": int(truth[ref_rows].sum()),
        "estimated_flip_rate (classifier CL)": res.stats.get("estimated_flip_rate"),
        "classifier_stats": res.stats.get("classifier"),
        "flagged_at_threshold": int(flagged.sum()), "flagged_true": int((flagged & truth).sum()),
        "dpo_overflow_flags": sum(f.check == "dpo_overflow_risk" for f in res.findings),
        "reference_cache": res.stats.get("reference_cache"), "seconds": round(time.perf_counter() - t0, 1),
    }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=120, help="rows scored by the reference model per dataset")
    ap.add_argument("--classifier-rows", type=int, default=400, help="rows given to the stage (classifier)")
    ap.add_argument("--max-length", type=int, default=384)
    ap.add_argument("--max-prompt-length", type=int, default=128)
    ap.add_argument("--precision", default="auto")
    ap.add_argument("--cache", default=os.environ.get("PAIRAUDIT_CACHE", "/tmp/pairaudit-eval-cache"))
    ap.add_argument("--datasets", default="label_flip_20,label_flip_10,hh")
    args = ap.parse_args()
    print(f"reference rows/dataset: {args.rows}, classifier rows/dataset: {args.classifier_rows}, "
          f"max_length {args.max_length}, max_prompt_length {args.max_prompt_length}")
    report = {}
    for name in args.datasets.split(","):
        pairs, truth = load_hh(args.classifier_rows) if name == "hh" else load_uf(name, args.classifier_rows)
        print(f"\n== {name}: {len(pairs)} rows, {int(truth.sum())} flips", flush=True)
        report[name] = run(name, pairs, truth, args)
        for k, v in report[name].items():
            print(f"  {k:42s} {v}")
    print(json.dumps(report, default=str))


if __name__ == "__main__":
    main()

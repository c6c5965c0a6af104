"""What the flip model's embedding signal loses when it is fitted on a sample (``likely_flipped.fit_sample_rows``).

The Ray engine fits ``likely_flipped`` on a seeded sample of at most ``fit_sample_rows`` rows and scores every other
row with the mean of the sample's fold models (docs/scale.md). The real labelled sets here have 1k-2.4k rows, too
few to show what a 100k-row sample loses against a 200k-row one, so this script builds a large set whose features
are real and whose labels follow a preference learned from real labels:

* texts: the responses of HH-RLHF helpful-base test and UltraFeedback-1k (``../shared/data``), embedded by the
  static model the stage uses (``FlipStage.static``), as the stage embeds them;
* teacher: a logistic regression on HH test's real labels (chosen minus rejected embedding); its probabilities are
  the labels' law: each synthetic row pairs two random responses and takes "chosen" with the teacher's probability
  (as noisy as the real labels are for the teacher), then ``--flip-rate`` of the rows are swapped (the planted
  flips the detector must find);
* detector: the stage's own ``oof_logodds`` on the float16 differences, fitted on a seeded sample of each size in
  ``--samples`` (out-of-fold scores for the sample, the fold models' mean for the rest, as ``apply_flip_model``),
  and on every row as the local engine fits (fold models on at most ``FIT_MAX_ROWS`` rows each).

Prints AUROC and precision@k (k = planted flips) against the planted flips over every row, next to the teacher
(the best any model of this family can do on these labels) and two simple baselines (the longer response wins;
chance). What it cannot show: how the embedding model's *own* bias (the teacher is in its family) or the other
features behave; the sample sizes' difference is estimation error only, and that is what the cap changes.

    .venv/bin/python scripts/eval_flip_sample.py --rows 1000000 --samples 50000,100000,200000
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
DATA = Path(os.environ.get("PAIRAUDIT_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def hh_pairs() -> tuple[list[str], list[str]]:
    """HH test's chosen and rejected final responses (rows with both, and different)."""
    from pairaudit.io.formats import normalise

    chosen, rejected = [], []
    for i, line in enumerate(open(DATA / "hh-rlhf/helpful-base-test.jsonl", encoding="utf-8")):
        p = normalise(i, json.loads(line), "implicit_hh")
        if p.chosen.strip() and p.rejected.strip() and p.chosen.strip() != p.rejected.strip():
            chosen.append(p.chosen)
            rejected.append(p.rejected)
    return chosen, rejected


def uf_responses() -> list[str]:
    out = []
    for line in open(DATA / "ultrafeedback-1k/train_clean.jsonl", encoding="utf-8"):
        r = json.loads(line)
        out += [r["chosen"], r["rejected"]] if isinstance(r["chosen"], str) else []
    return out


def embed(texts: list[str]) -> np.ndarray:
    """The texts' vectors from the static model ``likely_flipped`` uses (float32, L2-normalised)."""
    from pairaudit.config import Context, ScanConfig
    from pairaudit.stages.flips.stage import FlipStage

    cache = Path(os.environ.get("PAIRAUDIT_CACHE", Path.home() / ".cache" / "pairaudit"))
    stage = FlipStage(Context(ScanConfig(), cache, lambda m: None, params={}), {"likely_flipped"})
    return stage.static.encode(texts)


def teacher(vec: np.ndarray, n_pairs: int) -> np.ndarray:
    """Weights of a logistic regression (no intercept, both orientations) on HH test's real labels."""
    from sklearn.linear_model import LogisticRegression

    d = vec[:n_pairs] - vec[n_pairs:2 * n_pairs]
    model = LogisticRegression(C=1.0, fit_intercept=False, max_iter=2000)
    model.fit(np.r_[d, -d], np.r_[np.ones(n_pairs), np.zeros(n_pairs)])
    return model.coef_[0]


def auroc(score: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    from sklearn.metrics import roc_auc_score

    k = int(truth.sum())
    top = np.argsort(-score, kind="stable")[:k]
    return float(roc_auc_score(truth, score)), float(truth[top].mean())


def sample_fit(diff: np.ndarray, size: int, seed: int = 0) -> np.ndarray:
    """Log-odds "the given label is right" per row: out-of-fold on a seeded sample of ``size`` rows, the fold
    models' mean on the others (``run_sample`` + ``apply_flip_model``'s embedding part); every row: the local fit."""
    from pairaudit.stages.flips.model import oof_logodds

    n = len(diff)
    out = np.empty(n)
    if size >= n:
        return oof_logodds(diff)
    pick = np.sort(np.random.default_rng(seed).choice(n, size, replace=False))
    linear: list[np.ndarray] = []
    out[pick] = oof_logodds(diff[pick], linear=linear)
    rest = np.setdiff1d(np.arange(n), pick)
    w = np.mean(linear, axis=0).astype(np.float32)
    for lo in range(0, len(rest), 262_144):
        part = rest[lo:lo + 262_144]
        out[part] = diff[part].astype(np.float32) @ w
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--samples", default="50000,100000,200000", help="sample sizes, comma-separated")
    ap.add_argument("--flip-rate", type=float, default=0.1)
    ap.add_argument("--no-local", action="store_true", help="skip the fit on every row (the local engine's)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    t0 = time.perf_counter()
    chosen, rejected = hh_pairs()
    texts = chosen + rejected + uf_responses()
    vec = embed(texts)
    w = teacher(vec, len(chosen))
    rng = np.random.default_rng(a.seed)
    i, j = rng.integers(0, len(texts), (2, a.rows))
    j = np.where(i == j, (j + 1) % len(texts), j)
    margin = (vec[i] - vec[j]) @ w  # the teacher's log-odds that i is preferred to j
    first = rng.random(a.rows) < 1.0 / (1.0 + np.exp(-margin))  # the label, as noisy as the teacher says
    flip = np.zeros(a.rows, bool)
    flip[rng.choice(a.rows, int(round(a.flip_rate * a.rows)), replace=False)] = True
    given_i = first ^ flip  # True: i is "chosen" in the data
    sign = np.where(given_i, 1.0, -1.0)
    diff = ((vec[i] - vec[j]) * sign[:, None]).astype(np.float16)  # chosen minus rejected, as the stage keeps it
    lens = np.array([len(t) for t in texts], np.float64)
    print(f"{a.rows:,} rows from {len(texts):,} real responses ({len(chosen):,} HH pairs teach the labels), "
          f"{int(flip.sum()):,} planted flips; built in {time.perf_counter() - t0:.0f} s", flush=True)
    rows = {"teacher (its own family's best)": -sign * margin,
            "the longer response wins (baseline)": -sign * (lens[i] - lens[j]),
            "chance (baseline)": rng.random(a.rows)}
    sizes = [int(s) for s in a.samples.split(",") if s]
    for size in sizes:
        t = time.perf_counter()
        rows[f"fitted on a sample of {size:,}"] = -sample_fit(diff, size, a.seed)
        print(f"  sample {size:,}: {time.perf_counter() - t:.0f} s", flush=True)
    if not a.no_local:
        t = time.perf_counter()
        rows["fitted on every row (local engine)"] = -sample_fit(diff, a.rows)
        print(f"  every row: {time.perf_counter() - t:.0f} s", flush=True)
    print(f"\n{'detector':<42} {'AUROC':>7} {'P@k':>7}")
    for name, score in rows.items():
        auc, pk = auroc(score, flip)
        print(f"{name:<42} {auc:7.4f} {pk:7.4f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Precision and recall of near_duplicate_pair / contradictory_pair / preference_cycle on data with several
pairs per prompt, next to the rule before issue 25 (mean + floor). Prints numbers; asserts nothing.

Sets (each at full size, planted faults seeded):

* ``multipair``: a real model-vs-model set (default: the PandaLM test set converted to TRL rows, path from
  ``--multipair`` or ``$PAIRAUDIT_MULTIPAIR``; not shipped, see docs/near_duplicates.md for the file and its
  license) plus the first ``--uf-rows`` UltraFeedback rows of ../shared/data, with planted exact copies,
  paraphrased copies (tests/support/planting.py), opposite-label repeats (exact and paraphrased) and 3-cycles over
  existing responses of one prompt.
* ``uf-recombined``: ``--uf-scale`` rows of ../shared/tools/make_scale_set.py over UltraFeedback (prompts
  repeat with other responses, responses repeat across rows: "different answers to the same question").
* ``hh``: the one-pair-per-prompt HH set with planted paraphrases / light edits / exact copies
  (scripts/bench_dedup.py's planting): recall and unrelated merges.

Precision is measured on the unplanted rows: a flagged row is *justified* when another row has prompt and
both responses (straight for a duplicate, crosswise for a contradiction) at rapidfuzz ``ratio >= 85``; the
script prints the unjustified share of flagged rows and how many unjustified rows would be dropped. Sources
of planted paraphrases are left out (their counterpart is a paraphrase, below the ratio on purpose).

    flock /tmp/pairaudit-heavy.lock env PYTHONPATH=$PWD .venv/bin/python scripts/eval_multipair.py \\
        --multipair /path/to/pandalm-testset-v1.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
SHARED = ROOT.parent / "shared"
CHECKS = ("near_duplicate_pair", "contradictory_pair")


# -- planting ---------------------------------------------------------------------------------------------

def planted_multipair(path: Path, uf_rows: int, seed: int = 25) -> dict:
    from support import planting as pl

    rows = [(d["prompt"], d["chosen"], d["rejected"]) for d in map(json.loads, open(path, encoding="utf-8"))]
    n_real = len(rows)
    rows += pl.uf_rows(uf_rows)
    n = len(rows)
    rng = random.Random(seed)
    plant = pl.plant_copies(rows, rng, {"exact": 15, "para": 25, "swap": 15, "para_swap": 10})
    # 3-cycles over three existing responses of one prompt of the real multi-pair set
    by_prompt: dict[str, list[str]] = {}
    for p, c, r in rows[:n_real]:
        lst = by_prompt.setdefault(p, [])
        lst += [x for x in (c, r) if x not in lst]
    prompts = sorted(p for p, v in by_prompt.items() if len(v) >= 3)
    cycles = []
    for p in rng.sample(prompts, min(10, len(prompts))):
        x, y, z = rng.sample(by_prompt[p], 3)
        start = len(rows)
        rows += [(p, x, y), (p, y, z), (p, z, x)]
        cycles.append([start, start + 1, start + 2])
    return {"rows": rows, "n": n, "n_real": n_real, "plant": plant, "cycles": cycles,
            "exclude": set(plant["para"].values()) | set(plant["para_swap"].values())}


# -- the rule before issue 25 (baseline) -------------------------------------------------------------------

def old_rule(rows: list[tuple[str, str, str]], cache: Path) -> dict[int, tuple[str, str]]:
    """Mean + floor on max(cosine, wording) with all-MiniLM-L6-v2 on every text (the decision of the stage
    before issue 25; its hybrid mode decided the same way on the candidates): row -> (check, action)."""
    from pairaudit.models.embedder import Embedder
    from pairaudit.stages.near_duplicates.match import lexical, sketch
    from pairaudit.stages.near_duplicates.search import neighbour_search, rowdot, sum_vectors
    from pairaudit.stages.near_duplicates.unionfind import UnionFind

    V = Embedder(cache_dir=cache).encode([t for r in rows for t in r]).astype(np.float16)
    P, C, R = V[0::3], V[1::3], V[2::3]
    sks = [sketch(t) for r in rows for t in r]
    sk = np.array([s for s, _ in sks], dtype="S257").reshape(-1, 3)
    ln = np.array([m for _, m in sks], dtype=np.int32).reshape(-1, 3)
    a, b, _, _, _ = neighbour_search(sum_vectors(P, C, R), 16, 0.55, 20000, 8)

    def sims(pairs: list[tuple[np.ndarray, np.ndarray, int, int]]) -> np.ndarray:
        out = np.zeros((len(a), 3), dtype=np.float32)
        for f, (A, B, fa, fb) in enumerate(pairs):
            cos = rowdot(A, B, a, b)
            for i in range(len(a)):
                x, y = int(a[i]), int(b[i])
                same = sk[x, fa] == sk[y, fb] and ln[x, fa] == ln[y, fb]
                out[i, f] = 1.0 if same else max(float(cos[i]), lexical(sk[x, fa], int(ln[x, fa]), sk[y, fb],
                                                                         int(ln[y, fb])))
        return out

    s = sims([(P, P, 0, 0), (C, C, 1, 1), (R, R, 2, 2)])
    x = sims([(P, P, 0, 0), (C, R, 1, 2), (R, C, 2, 1)])
    ok_s = (s.min(axis=1) >= 0.70) & (s.mean(axis=1) >= 0.85)
    ok_x = (x.min(axis=1) >= 0.70) & (x.mean(axis=1) >= 0.85)
    ok_x &= ~ok_s | (x.mean(axis=1) > s.mean(axis=1))
    ok_s &= ~ok_x
    out: dict[int, tuple[str, str]] = {}
    for ok, check in ((ok_x, "contradictory_pair"), (ok_s, "near_duplicate_pair")):
        uf = UnionFind(len(rows))
        uf.union_edges(a[ok], b[ok])
        for g in uf.groups(np.concatenate([a[ok], b[ok]])):
            for m in g.tolist():
                if check == "contradictory_pair" or m != int(g.min()):
                    out.setdefault(m, (check, "drop"))
    return out


# -- the stage as shipped ----------------------------------------------------------------------------------

def new_rule(rows: list[tuple[str, str, str]], out_dir: Path) -> tuple[dict[int, list[tuple[str, str]]], dict]:
    """A default scan (hybrid mode) limited to the duplicate / contradiction / cycle checks."""

    import pairaudit

    out_dir.mkdir(parents=True, exist_ok=True)
    src = out_dir / "in.jsonl"
    with open(src, "w", encoding="utf-8") as fh:
        for p, c, r in rows:
            fh.write(json.dumps({"prompt": p, "chosen": c, "rejected": r}, ensure_ascii=False) + "\n")
    audit = pairaudit.scan(str(src), out_dir / "out", progress=False, log=lambda m: None,
                           only=["duplicate_pair", "near_duplicate_pair", "contradictory_pair", "preference_cycle"])
    got: dict[int, list[tuple[str, str]]] = {}
    for f in audit.findings.iter_rows(named=True):
        got.setdefault(int(f["row"]), []).append((f["check"], f["action"]))
    stats = audit.report["stats"]
    return got, {"calibration": stats.get("near_duplicates", {}).get("calibration"),
                 "profile": stats.get("preference_graph"), "kept": audit.report["totals"]}


# -- measuring ---------------------------------------------------------------------------------------------

def justified(rows: list[tuple[str, str, str]], flagged: dict[int, str]) -> dict[int, bool]:
    """Per flagged row: is there another row at rapidfuzz ratio >= 85 on prompt and both responses
    (straight for near_duplicate_pair, crosswise for contradictory_pair)?"""
    from rapidfuzz import fuzz, process

    if not flagged:
        return {}
    idx = sorted(flagged)
    col = [[r[f].strip() for r in rows] for f in range(3)]
    M = [process.cdist([col[f][i] for i in idx], col[f], scorer=fuzz.ratio, score_cutoff=85, workers=2) >= 85
         for f in range(3)]
    cr = process.cdist([col[1][i] for i in idx], col[2], scorer=fuzz.ratio, score_cutoff=85, workers=2) >= 85
    rc = process.cdist([col[2][i] for i in idx], col[1], scorer=fuzz.ratio, score_cutoff=85, workers=2) >= 85
    out = {}
    for k, i in enumerate(idx):
        ok = M[0][k] & ((M[1][k] & M[2][k]) if flagged[i] == "near_duplicate_pair" else (cr[k] & rc[k]))
        ok[i] = False
        out[i] = bool(ok.any())
    return out


def summarise(name: str, rows: list, got: dict[int, list[tuple[str, str]]], exclude: set[int], n_unplanted: int
              ) -> dict:
    flagged = {r: next(c for c, _ in v if c in CHECKS) for r, v in got.items()
               if r < n_unplanted and r not in exclude and any(c in CHECKS for c, _ in v)}
    dropped = {r for r in flagged if any(c in CHECKS and a == "drop" for c, a in got[r])}
    ok = justified(rows, flagged)
    bad = sorted(r for r, j in ok.items() if not j)
    return {"design": name, "flagged": len(flagged), "unjustified": len(bad),
            "unjustified_share": len(bad) / max(1, len(flagged)),
            "dropped": len(dropped), "dropped_unjustified": len([r for r in bad if r in dropped]),
            "examples": bad[:8]}


def recall_multipair(data: dict, got: dict[int, list[tuple[str, str]]]) -> dict[str, str]:
    def has(r: int, checks: tuple[str, ...]) -> bool:
        return any(c in checks for c, _ in got.get(r, []))

    out = {}
    for kind, checks in (("exact", ("duplicate_pair", "near_duplicate_pair")), ("para", ("near_duplicate_pair",)),
                         ("swap", ("contradictory_pair",)), ("para_swap", ("contradictory_pair",))):
        d = data["plant"][kind]
        hit = sum(has(r, checks) and (kind not in ("swap", "para_swap") or has(o, checks)) for r, o in d.items())
        out[kind] = f"{hit}/{len(d)}"
    cyc = data["cycles"]
    out["cycles"] = f"{sum(all(has(r, ('preference_cycle',)) for r in c) for c in cyc)}/{len(cyc)}"
    return out


def print_row(s: dict, extra: str = "") -> None:
    print(f"  {s['design']:34s} flagged {s['flagged']:4d}  unjustified {s['unjustified']:4d} "
          f"({100 * s['unjustified_share']:5.1f}%)  dropped {s['dropped']:4d} (unjustified {s['dropped_unjustified']})"
          f"{extra}" + (f"  e.g. rows {s['examples']}" if s["examples"] else ""))


def run_multipair(path: Path, uf_rows: int, cache: Path, tmp: Path, seed: int = 25) -> None:
    data = planted_multipair(path, uf_rows, seed)
    rows = data["rows"]
    print(f"[multipair] {data['n_real']} rows of {path.name} + {uf_rows} UltraFeedback rows = {data['n']} real rows; "
          f"planted: " + ", ".join(f"{k} {len(v)}" for k, v in data["plant"].items())
          + f", cycles {len(data['cycles'])} (3 rows each) -> {len(rows)} rows (seed {seed})")
    t = time.perf_counter()
    got, info = new_rule(rows, tmp / "mp")
    t_new = time.perf_counter() - t
    print(f"[multipair] calibration: {json.dumps(info['calibration'])}")
    print(f"[multipair] profile: {json.dumps(info['profile'])}")
    print(f"[multipair] totals: {json.dumps(info['kept'])}")
    t = time.perf_counter()
    old = {r: [v] for r, v in old_rule(rows, cache).items()}
    t_old = time.perf_counter() - t
    print("[multipair] precision on the unplanted rows (justified = a counterpart at rapidfuzz ratio >= 85 on all "
          "three fields):")
    for name, g, secs in (("before issue 25 (mean + floor)", old, t_old), ("new (default scan)", got, t_new)):
        print_row(summarise(name, rows, g, data["exclude"], data["n"]), f"  [{secs:.0f}s]")
    for name, g in (("before issue 25 (mean + floor)", old), ("new (default scan)", got)):
        print(f"[multipair] recall on planted ({name}): {recall_multipair(data, g)}")
    real_cycles = sorted(r for r, v in got.items() if r < data["n"] and any(c == "preference_cycle" for c, _ in v))
    print(f"[multipair] preference_cycle on unplanted rows (real cycles of the set): {real_cycles}")


def run_uf_recombined(n_rows: int, cache: Path, tmp: Path) -> None:
    out = tmp / "uf-scale.jsonl"
    subprocess.run([sys.executable, str(SHARED / "tools" / "make_scale_set.py"),
                    str(SHARED / "data" / "ultrafeedback-1k" / "train_clean.jsonl"), str(n_rows), str(out)],
                   check=True, capture_output=True)
    rows = [(d["prompt"], d["chosen"], d["rejected"]) for d in map(json.loads, open(out, encoding="utf-8"))]
    got, info = new_rule(rows, tmp / "ufs")
    print(f"[uf-recombined] {len(rows)} rows (make_scale_set over UltraFeedback-1k); profile "
          f"{json.dumps(info['profile'])}; calibration min_response {info['calibration']['min_response']} "
          f"(band from {info['calibration']['min_response_flag']}, on {info['calibration']['calibrated_on']})")
    old = {r: [v] for r, v in old_rule(rows, cache).items()}
    for name, g in (("before issue 25 (mean + floor)", old), ("new (default scan)", got)):
        print_row(summarise(name, rows, g, set(), len(rows)))


def run_hh(cache: Path) -> None:
    import bench_dedup
    from support.nd_support import fresh_cache, run_stage, to_pairs

    d = bench_dedup.planted_hh(None, 0.1)
    rows = d["rows"]
    res, _ = run_stage(to_pairs(rows), fresh_cache(cache / "hh"), batch=1000,
                       enabled={"near_duplicate_pair", "contradictory_pair"}, skip=["near_identical_pair"])
    new = {(f.row, f.group) for f in res.findings if f.check == "near_duplicate_pair"}
    old_f = old_rule(rows, cache)
    print(f"[hh] {d['n']} real HH rows + planted {len(d['para'])} paraphrases, {len(d['light'])} light edits, "
          f"{len(d['exact'])} exact copies; calibration {json.dumps(res.stats['near_duplicates']['calibration'])}")
    for name, flagged, pairs in (("before issue 25 (mean + floor)", set(old_f), None),
                                 ("new (default, hybrid)", {f.row for f in res.findings}, new)):
        rec = {}
        for k in ("para", "light", "exact"):
            hit = sum(((r, o) in pairs) if pairs is not None else (r in flagged) for r, o in d[k].items())
            rec[k] = f"{hit / max(1, len(d[k])):.3f}"
        extras = sorted(r for r in flagged if r not in d["involved"])
        print(f"  {name:34s} recall paraphrases {rec['para']}  light edits {rec['light']}  exact {rec['exact']}  "
              f"unrelated merges {len(extras)}" + (f" (rows {extras[:8]})" if extras else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--multipair", default=os.environ.get("PAIRAUDIT_MULTIPAIR"),
                    help="a real multi-pair JSONL (prompt/chosen/rejected), e.g. the converted PandaLM test set")
    ap.add_argument("--uf-rows", type=int, default=200)
    ap.add_argument("--uf-scale", type=int, default=3000, help="rows of the recombined UltraFeedback set (0: skip)")
    ap.add_argument("--seed", type=int, default=25, help="seed of the planting in the multi-pair set")
    ap.add_argument("--no-hh", action="store_true")
    args = ap.parse_args()
    t = time.perf_counter()
    from pairaudit.config import default_cache_dir

    cache = Path(os.environ.get("PAIRAUDIT_CACHE") or default_cache_dir())
    os.environ.setdefault("PAIRAUDIT_CACHE", str(cache))
    with tempfile.TemporaryDirectory() as tmp:
        if args.multipair:
            run_multipair(Path(args.multipair), args.uf_rows, cache, Path(tmp), args.seed)
        else:
            print("[multipair] skipped: pass --multipair PATH (or set PAIRAUDIT_MULTIPAIR)")
        if args.uf_scale:
            run_uf_recombined(args.uf_scale, cache, Path(tmp))
        if not args.no_hh:
            run_hh(cache)
    print(f"[eval] total {time.perf_counter() - t:.0f}s")


if __name__ == "__main__":
    main()

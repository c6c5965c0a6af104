"""degenerate_repetition on real data: recall on planted character-level degeneration, false positives on
the real, unplanted responses.

Every response of the real HH helpful-base test split (4,708) and of the UltraFeedback sample (2,000) is
scored as it is: a flagged one is a false positive unless it really loops (the script prints each one so
a reader can judge). Then, seeded, real responses are cut at a random character and continued with one
unit repeated with no space ("aaaa…", "hahaha…", "!!!!…", "abcabc…", "12341234…", "的的的…"), the way a
broken generation ends, at several run lengths; recall per (unit, length) is the share of planted
responses flagged. Baselines beside the default (every rule): the word-level rules alone (Gopher n-grams,
lines, compression; what the check had before char_run) and a compression ratio alone.

    PYTHONPATH=. python scripts/eval_repetition.py [--per-cell 200] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"
HH = DATA / "hh-rlhf" / "helpful-base-test.jsonl"
UF = DATA / "ultrafeedback-1k" / "train_clean.jsonl"
UNITS = ["a", "!", ".", "ha", "abc", "1234", "的", "xo!?", "ing"]
LENGTHS = [8, 16, 20, 32, 64, 128, 256]


def responses() -> dict[str, list[str]]:
    from pairaudit.io.formats import split_hh

    out: dict[str, list[str]] = {"hh": [], "ultrafeedback": []}
    for line in HH.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        _, c, rj, _ = split_hh(r["chosen"], r["rejected"])
        out["hh"] += [c, rj]
    for line in UF.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        out["ultrafeedback"] += [r["chosen"], r["rejected"]]
    return out


def plant(rng: random.Random, text: str, unit: str, length: int) -> str:
    cut = rng.randrange(len(text) + 1) if text else 0
    k = -(-length // len(unit))  # at least `length` characters of the unit
    return text[:cut].rstrip() + (" " if rng.random() < 0.5 else "") + unit * k


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-cell", type=int, default=200, help="planted responses per (unit, length)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from pairaudit.checks.repetition import DEFAULTS, char_run, repetition_metrics, repetition_score

    word_only = {**DEFAULTS, "char_run": 10**9}

    def compression_only(t: str) -> bool:
        raw = t.encode("utf-8")
        return len(raw) >= DEFAULTS["compression_min_bytes"] and \
            repetition_metrics(t)["compression"] >= DEFAULTS["min_compression"]

    detectors = {
        "default (all rules)": lambda t: repetition_score(t, DEFAULTS)[0] >= 1.0,
        "word rules only (before char_run)": lambda t: repetition_score(t, word_only)[0] >= 1.0,
        "compression alone": compression_only,
    }
    data = responses()
    print(f"char_run limit {DEFAULTS['char_run']} characters (unit of 1-8 characters, >= 4 repeats, no space)\n")
    print("false positives on real, unplanted responses")
    t0 = time.perf_counter()
    for name, texts in data.items():
        for det, fn in detectors.items():
            flagged = [i for i, t in enumerate(texts) if fn(t)]
            print(f"  {name:14s} {det:36s} {len(flagged):4d} / {len(texts)} = {len(flagged) / len(texts):.3%}")
        runs = sorted((char_run(t)[0], i) for i, t in enumerate(texts))
        print(f"  {name:14s} longest real char_run: {runs[-1][0]} characters; flagged by char_run: "
              f"{sum(n >= DEFAULTS['char_run'] for n, _ in runs)}")
        for n, i in runs[::-1][:3]:
            if n >= DEFAULTS["char_run"]:
                print(f"    response {i}: {char_run(data[name][i])}")
    print(f"  ({time.perf_counter() - t0:.1f} s)\n")

    rng = random.Random(args.seed)
    pool = [t for texts in data.values() for t in texts if len(t) > 20]
    print(f"recall on planted degeneration ({args.per_cell} real responses per cell, cut at a random character)")
    header = "  unit    " + "".join(f"{n:>7d}" for n in LENGTHS) + "   (run length in characters)"
    for det, fn in detectors.items():
        print(f"  {det}\n{header}")
        rng = random.Random(args.seed)
        for unit in UNITS:
            cells = []
            for length in LENGTHS:
                hits = sum(fn(plant(rng, rng.choice(pool), unit, length)) for _ in range(args.per_cell))
                cells.append(hits / args.per_cell)
            print(f"  {unit!r:8s}" + "".join(f"{c:7.0%}" for c in cells))


if __name__ == "__main__":
    main()

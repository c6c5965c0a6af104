"""Recall of planted paraphrases and merges of hard negatives, from a scan of a planted near-duplicate set.

Usage: python scripts/eval_neardup_plants.py SET.jsonl SCAN_OUT_DIR
Prints found x of y paraphrases (a near_duplicate_pair finding, drop or flag, grouping the plant with the row
it copies) and merged z of w hard negatives (any near_duplicate_pair / contradictory_pair finding linking a hard
negative with its original), and lists the misses.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import polars as pl


def main(set_path: str, out: str) -> None:
    """Print the planted-set recall.

    Args:
        set_path: the planted JSONL (plant_of / plant_kind columns).
        out: a scan's output folder (findings.parquet).
    """
    rows = [json.loads(line) for line in Path(set_path).open()]
    f = pl.read_parquet(Path(out) / "findings.parquet")
    f = f.filter(pl.col("check").is_in(["near_duplicate_pair", "contradictory_pair"]))
    group = {(r["row"], r["check"]): r["group"] for r in f.to_dicts()}
    names = {(r["row"], r["check"]): {int(x) for x in re.findall(r"of row (\d+)", r["detail"] or "")}
             for r in f.to_dicts()}
    action = {(r["row"], r["check"]): r["action"] for r in f.to_dicts()}
    for kind in ("paraphrase", "hard_negative"):
        idx = [i for i, r in enumerate(rows) if r.get("plant_kind") == kind]
        hit, miss = [], []
        for i in idx:
            o = rows[i]["plant_of"]
            ok = any((group.get((i, c)) is not None and group.get((i, c)) == group.get((o, c)))
                     or o in names.get((i, c), set()) or i in names.get((o, c), set())
                     for c in ("near_duplicate_pair", "contradictory_pair"))
            (hit if ok else miss).append(i)
        acts = sorted({action.get((i, "near_duplicate_pair"), "-") for i in hit})
        word = "found" if kind == "paraphrase" else "merged"
        print(f"{kind}: {word} {len(hit)} of {len(idx)} (actions {acts}); "
              f"not {word}: {miss if kind == 'paraphrase' else ''} {'hits: ' + str(hit) if kind != 'paraphrase' else ''}")
    base = f.filter(pl.col("row") < min(i for i, r in enumerate(rows) if r.get("plant_kind")))
    print("findings on base rows:", base.height)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help") else 2)
    main(sys.argv[1], sys.argv[2])

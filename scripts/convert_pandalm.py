#!/usr/bin/env python
"""Convert the PandaLM test set into prompt/chosen/rejected rows (the real multi-pair set of
scripts/eval_multipair.py).

    python scripts/convert_pandalm.py testset-v1.json /work/data/pandalm-testset-v1.jsonl

Input: ``data/testset-v1.json`` of github.com/WeOpenML/PandaLM (Apache-2.0; 999 comparisons of two models'
answers to one instruction, three human annotators each: 0 = tie, 1 = response1 better, 2 = response2
better). Each comparison becomes one row: ``prompt`` = instruction, then a blank line and the input when
there is one; ``chosen`` / ``rejected`` = the responses by the annotators' majority label. Comparisons whose
majority is a tie, or without a majority, are left out (894 rows remain). ``cmp_key`` (the two models) and
``idx`` pass through. Written to a temp name and renamed; the converted file is data, not part of the repo.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from pathlib import Path


def convert(records: list[dict]) -> tuple[list[dict], Counter]:
    rows: list[dict] = []
    left_out: Counter = Counter()
    for i, rec in enumerate(records):
        try:
            votes = Counter(int(rec[f"annotator{k}"]) for k in (1, 2, 3))
            instruction, given = str(rec["instruction"]), str(rec.get("input") or "")
            answers = (str(rec["response1"]), str(rec["response2"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise SystemExit(f"record {i}: {exc!r}: expected instruction, input, response1/2 and annotator1-3 "
                             "(PandaLM's testset-v1.json); check the file") from exc
        label, n = votes.most_common(1)[0]
        if n < 2 or label not in (1, 2):
            left_out["tie" if n >= 2 else "no majority"] += 1
            continue
        chosen, rejected = answers if label == 1 else answers[::-1]
        prompt = instruction + (f"\n\n{given}" if given.strip() else "")
        rows.append({"prompt": prompt, "chosen": chosen, "rejected": rejected,
                     "cmp_key": rec.get("cmp_key"), "idx": rec.get("idx")})
    return rows, left_out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", type=Path, help="PandaLM data/testset-v1.json")
    ap.add_argument("out", type=Path, help="the JSONL to write")
    args = ap.parse_args()
    records = json.loads(args.source.read_text(encoding="utf-8"))
    if not isinstance(records, list):
        raise SystemExit(f"{args.source}: a JSON {type(records).__name__}, expected a list of comparisons")
    rows, left_out = convert(records)
    tmp = args.out.with_name(args.out.name + f".tmp{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    os.replace(tmp, args.out)
    prompts = Counter(r["prompt"] for r in rows)
    print(f"{len(records)} comparisons -> {len(rows)} rows over {len(prompts)} prompts "
          f"(left out: {dict(left_out)}) -> {args.out}")


if __name__ == "__main__":
    main()

"""Write the issue-34 precision sets under data/precision/ (hh, ultrafeedback, multipair, short_answer).

    python scripts/make_precision_sets.py PANDALM_CONVERTED.jsonl

hh: 300 raw HH-RLHF helpful-base test lines (implicit prompt, whole dialogues), seed-34 sample of line numbers.
ultrafeedback: the first 300 rows of ultrafeedback-1k/train_clean.jsonl, prompt/chosen/rejected only.
multipair: the PandaLM test set converted by scripts/convert_pandalm.py, whole prompts in file order until
>= 300 rows (so every prompt keeps all its pairs).
short_answer: ultrafeedback-1k rows 300-999 whose chosen has <= 5 words (classification / short-answer tasks; 45 rows).
math: written by scripts/make_math_set.py (GSM8K problems with a correct and a wrong real model solution).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

DATA = Path("/work/shared/data")
OUT = Path(__file__).resolve().parent.parent / "data" / "precision"


def write(name: str, rows: list[dict]) -> None:
    """Write rows as JSONL.

    Args:
        name: file stem under data/precision.
        rows: the records.
    """
    with (OUT / f"{name}.jsonl").open("w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(name, len(rows))


def multipair(path: str, n: int = 300) -> list[dict]:
    """Whole PandaLM prompts until >= n rows.

    Args:
        path: converted PandaLM JSONL.
        n: minimum rows.

    Returns:
        prompt/chosen/rejected/cmp_key/idx rows.
    """
    rows = [json.loads(line) for line in open(path)]
    keep, seen = [], []
    for r in rows:
        if r["prompt"] not in seen:
            if len(keep) >= n:
                break
            seen.append(r["prompt"])
        keep.append(r)
    return [r for r in rows if r["prompt"] in seen]


def main(pandalm: str) -> None:
    """Write the three sets.

    Args:
        pandalm: converted PandaLM JSONL.
    """
    lines = (DATA / "hh-rlhf" / "helpful-base-test.jsonl").read_text().splitlines()
    pick = sorted(random.Random(34).sample(range(len(lines)), 300))
    write("hh", [json.loads(lines[i]) for i in pick])
    uf = [json.loads(x) for x in (DATA / "ultrafeedback-1k" / "train_clean.jsonl").read_text().splitlines()[:300]]
    write("ultrafeedback", [{k: r[k] for k in ("prompt", "chosen", "rejected")} for r in uf])
    write("multipair", multipair(pandalm))
    rest = [json.loads(x) for x in (DATA / "ultrafeedback-1k" / "train_clean.jsonl").read_text().splitlines()[300:]]
    write("short_answer", [{k: r[k] for k in ("prompt", "chosen", "rejected")} for r in rest
                           if len(r["chosen"].split()) <= 5])


if __name__ == "__main__":
    main(sys.argv[1])

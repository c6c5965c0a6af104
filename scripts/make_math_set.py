"""Write data/precision/math.jsonl (issue 34): GSM8K test problems with a correct and a wrong real model solution.

    python scripts/make_math_set.py EXAMPLE_MODEL_SOLUTIONS.jsonl

Source: github.com/openai/grade-school-math, grade_school_math/data/example_model_solutions.jsonl at commit
3101c7d5072418e28b9008a6636bde82a006892c (MIT). Each line holds a GSM8K test question and one solution from each of
four GPT-3 models (6b/175b, finetuning/verification) with OpenAI's own is_correct flag. A problem qualifies when at
least one solution is correct and one is wrong; 300 qualifying problems are drawn with random.Random(34) (kept in
file order), and for each, chosen = one correct and rejected = one wrong solution, each drawn with the same
generator. Nothing is edited: prompt is the question, chosen/rejected the model text (calculator marks and the
final "A: n" line included).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "data" / "precision" / "math.jsonl"
MODELS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")


def pairs(path: str, n: int = 300, seed: int = 34) -> list[dict]:
    """Draw n problems with a correct and a wrong solution and pair them.

    Args:
        path: example_model_solutions.jsonl.
        n: rows wanted.
        seed: random seed.

    Returns:
        prompt/chosen/rejected rows in file order.
    """
    rng = random.Random(seed)
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    ok = [i for i, r in enumerate(rows)
          if any(r[m]["is_correct"] for m in MODELS) and not all(r[m]["is_correct"] for m in MODELS)]
    out = []
    for i in sorted(rng.sample(ok, n)):
        r = rows[i]
        good = [r[m]["solution"] for m in MODELS if r[m]["is_correct"]]
        bad = [r[m]["solution"] for m in MODELS if not r[m]["is_correct"]]
        out.append({"prompt": r["question"], "chosen": rng.choice(good), "rejected": rng.choice(bad)})
    return out


if __name__ == "__main__":
    rows = pairs(sys.argv[1])
    with OUT.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print("math", len(rows))

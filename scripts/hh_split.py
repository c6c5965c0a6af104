"""Split HH-RLHF dialogues into prompt/chosen/rejected (prompt = history up to the last "Assistant:").

Used to build data/precision/hh.jsonl and the planted near-duplicate sets. Prints nothing; import it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HH = Path("/work/shared/data/hh-rlhf/helpful-base-test.jsonl")
MARK = "\n\nAssistant:"


def split_row(raw: dict) -> dict | None:
    """Split one HH row.

    Args:
        raw: {"chosen": dialogue, "rejected": dialogue}.

    Returns:
        {"prompt", "chosen", "rejected"} or None when the histories differ.
    """
    ci, ri = raw["chosen"].rfind(MARK), raw["rejected"].rfind(MARK)
    if ci < 0 or ri < 0:
        return None
    p, q = raw["chosen"][: ci + len(MARK)], raw["rejected"][: ri + len(MARK)]
    if p != q:
        return None
    return {"prompt": p, "chosen": raw["chosen"][ci + len(MARK):], "rejected": raw["rejected"][ri + len(MARK):]}


def distinct_rows(seed: int = 34) -> list[dict]:
    """All HH test rows with equal histories and a prompt seen once, shuffled with `seed`.

    Args:
        seed: shuffle seed.

    Returns:
        List of prompt/chosen/rejected dicts.
    """
    rows = [split_row(json.loads(line)) for line in HH.open()]
    rows = [r for r in rows if r]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["prompt"]] = counts.get(r["prompt"], 0) + 1
    rows = [r for r in rows if counts[r["prompt"]] == 1 and r["chosen"].strip() and r["rejected"].strip()
            and r["chosen"] != r["rejected"]]
    random.Random(seed).shuffle(rows)
    return rows

"""Build the planted near-duplicate sets (issue 34) from HH-RLHF helpful-base test rows.

Base rows: one pair per prompt, 300 per set (dev = first 300 of the seed-34 shuffle, held-out = next 300).
Plants: hand-written paraphrases (same prompt, chosen and rejected reworded) and hard negatives (same prompt,
genuinely different answers), appended after the base rows. The plant texts live in the two plant modules
given on the command line (dicts P and H keyed by base row index).

held2 (a second held-out set): the first 300 of the seed-4343 shuffle whose prompt is in none of
data/precision/neardup_heldout.jsonl, the dev set (argument 4) and data/precision/hh.jsonl (hh.jsonl holds raw
dialogues with no prompt field, so for held2 that file excluded nothing: 44 of held2's prompts are in it).

held3 (a third held-out set, planted after the lead had seen results on held and held2): the first 300 of the
seed-5151 shuffle whose prompt (split by scripts/hh_split.py where a file holds raw dialogues) is in none of
neardup_heldout.jsonl, neardup_heldout2.jsonl, the dev set (argument 4), hh.jsonl and
examples/hh-rlhf-helpful-base-500.jsonl.

held4 (a fourth held-out set, planted while the rule was being changed, by a reviewer who had not read the rule nor
the other sets' plants): the first 300 of the seed-6262 shuffle whose prompt is in none of the three other held-out
sets, the dev set (argument 4), hh.jsonl and examples/hh-rlhf-helpful-base-500.jsonl.

held5 (a fifth held-out set, planted by another reviewer who had not read the rule nor the other sets' plants): the
first 300 of the seed-7373 shuffle whose prompt is in none of the four other held-out sets, the dev set (argument 4),
hh.jsonl and examples/hh-rlhf-helpful-base-500.jsonl.

held6 (issue 36: reworded PROMPTS, written by a helper who had not read the rule): the first 300 of the seed-8484
shuffle whose prompt is in none of the five other held-out sets, hh.jsonl, the shipped example and the dev and held
sets' base rows (the first 600 of the default shuffle; the dev set's file is not needed): 99 rows are left. Its
plants carry their own prompt: P and H map a base row to (prompt, chosen, rejected), the prompt reworded (P) or
asking for something else on the same topic (H).

Usage: python scripts/make_neardup_sets.py PLANTS.py OUT.jsonl {dev,held,held2,held3,held4,held5,held6} [DEV_SET.jsonl]
"""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

from scripts.hh_split import distinct_rows, split_row


def _held2_base(dev_set: str) -> list[dict]:
    """300 base rows for held2: seed 4343, prompts unused by the other sets.

    Args:
        dev_set: path of the dev planted set (its prompts are excluded).

    Returns:
        prompt/chosen/rejected dicts.
    """
    used = set()
    for p in ("data/precision/neardup_heldout.jsonl", dev_set, "data/precision/hh.jsonl"):
        used |= {json.loads(line).get("prompt") for line in Path(p).open()}
    return [r for r in distinct_rows(seed=4343) if r["prompt"] not in used][:300]


def _prompts(path: str) -> set[str]:
    """Prompt texts of a JSONL file: its prompt field, or the HH split of a raw chosen/rejected dialogue.

    Args:
        path: a JSONL file of prompt/chosen/rejected records or raw HH dialogues.

    Returns:
        The set of prompt texts (rows whose dialogue histories differ give none).
    """
    out = set()
    for line in Path(path).open(encoding="utf-8"):
        rec = json.loads(line)
        split = {"prompt": rec["prompt"]} if "prompt" in rec else split_row(rec)
        if split:
            out.add(split["prompt"])
    return out


#: per later held-out set: its seed and the planted sets before it (their prompts, the dev set's, hh.jsonl's and
#: the shipped example's are excluded, so a set shares no prompt with any earlier one)
FRESH = {"held3": (5151, ("neardup_heldout.jsonl", "neardup_heldout2.jsonl")),
         "held4": (6262, ("neardup_heldout.jsonl", "neardup_heldout2.jsonl", "neardup_heldout3.jsonl")),
         "held5": (7373, ("neardup_heldout.jsonl", "neardup_heldout2.jsonl", "neardup_heldout3.jsonl",
                          "neardup_heldout4.jsonl"))}


def _fresh_base(which: str, dev_set: str) -> list[dict]:
    """300 base rows for ``which`` (held3, held4, held5): its seed's shuffle, prompts in no earlier planted set, the dev
    set, hh.jsonl or the shipped example.

    Args:
        which: "held3", "held4" or "held5".
        dev_set: path of the dev planted set (its prompts are excluded).

    Returns:
        prompt/chosen/rejected dicts.
    """
    seed, earlier = FRESH[which]
    used: set[str] = set()
    for p in (*(f"data/precision/{name}" for name in earlier), dev_set, "data/precision/hh.jsonl",
              "examples/hh-rlhf-helpful-base-500.jsonl"):
        used |= _prompts(p)
    return [r for r in distinct_rows(seed=seed) if r["prompt"] not in used][:300]


def _held6_base() -> list[dict]:
    """The base rows of held6 (at most 300; 99 are left): seed 8484, prompts in no earlier set.

    Returns:
        prompt/chosen/rejected dicts.
    """
    used = {r["prompt"] for r in distinct_rows()[:600]}
    for p in ("neardup_heldout.jsonl", *(f"neardup_heldout{k}.jsonl" for k in range(2, 6)), "hh.jsonl"):
        used |= _prompts(f"data/precision/{p}")
    used |= _prompts("examples/hh-rlhf-helpful-base-500.jsonl")
    return [r for r in distinct_rows(seed=8484) if r["prompt"] not in used][:300]


def build(plants: str, which: str) -> list[dict]:
    """Base rows plus plants.

    Args:
        plants: path of a module defining P (paraphrases) and H (hard negatives).
        which: "dev", "held", "held2", "held3", "held4", "held5" or "held6" (held2-held5 read the dev set's path from
            argv[4]).

    Returns:
        Rows with prompt/chosen/rejected/plant_id/plant_of/plant_kind.
    """
    if which == "held2":
        base = _held2_base(sys.argv[4])
    elif which in FRESH:
        base = _fresh_base(which, sys.argv[4])
    elif which == "held6":
        base = _held6_base()
    else:
        rows = distinct_rows()
        base = rows[:300] if which == "dev" else rows[300:600]
    mod = runpy.run_path(plants)
    out = [dict(r, plant_id=None, plant_of=None, plant_kind=None) for r in base]
    for kind, table in (("paraphrase", mod["P"]), ("hard_negative", mod["H"])):
        for i, plant in sorted(table.items()):
            prompt, c, r = plant if len(plant) == 3 else (base[i]["prompt"], *plant)  # held6: its own prompt
            pid = f"{which}-{kind[:4]}-{i}"
            out.append({"prompt": prompt, "chosen": c, "rejected": r,
                        "plant_id": pid, "plant_of": i, "plant_kind": kind})
    return out


if __name__ == "__main__":
    rows = build(sys.argv[1], sys.argv[3])
    with open(sys.argv[2], "w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(len(rows), "rows ->", sys.argv[2])

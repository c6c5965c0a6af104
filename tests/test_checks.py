"""Per-pair checks together in a scan: each planted fault is caught with the right check, row and field; clean rows
are silent (each check alone, called directly: tests/checks/)."""

from __future__ import annotations

from pathlib import Path

from conftest import write_jsonl
from support.checks import scan_cheap

import pairaudit

LONG = " ".join(f"word{i}" for i in range(120))
SHARED_START = "Here is a long shared opening that both answers use before they differ. " * 6
CLEAN = [
    {"prompt": "What is the boiling point of water at sea level?", "chosen": "It is 100 degrees Celsius.",
     "rejected": "Water boils at 50 degrees."},
    {"prompt": "Name a primary colour.", "chosen": "Red is a primary colour.", "rejected": "Green, obviously, always."},
    {"prompt": "Translate 'gato' to English.", "chosen": "Cat.", "rejected": "The Spanish word means dog."},
    {"prompt": "Café or tea?", "chosen": "I’d pick a café au lait.", "rejected": "Neither; water is better for you."},
]
PLANTED = [  # (record, {(check, field), ...})
    ({"prompt": "  \n ", "chosen": "Fine answer here.", "rejected": "Another fine answer."}, {("empty_prompt", "prompt")}),
    ({"prompt": "Say something.", "chosen": "\u200b  ", "rejected": "Something."}, {("empty_response", "chosen")}),
    ({"prompt": "Say something.", "chosen": "Something nice.", "rejected": "<|im_end|>"}, {("all_padding", "rejected")}),
    ({"prompt": "Describe it.", "chosen": "Itâ€™s a lovely day in the park.", "rejected": "It is a bad day to go out."},
     {("encoding_error", "chosen")}),
    ({"prompt": "Describe it.", "chosen": "It is nice.", "rejected": "It is\x00 bad."},  # one word changed (issue 12)
     {("encoding_error", "rejected"), ("near_identical_pair", "rejected")}),
    ({"prompt": "Write a lot.", "chosen": LONG, "rejected": "Short."}, {("too_long", "chosen")}),
    ({"prompt": "Continue.", "chosen": SHARED_START + "Answer A.", "rejected": SHARED_START + "Answer B."},
     # the sides differ in one word out of ~80: near-identical too
     {("truncation_identical", "rejected"), ("too_long", "chosen"), ("too_long", "rejected"),
      ("near_identical_pair", "rejected")}),
    ({"prompt": "Is it true?", "chosen": "Yes,   it is true.", "rejected": "Yes, it is true."},
     {("identical_pair", "rejected")}),
    ({"prompt": "Capital of France?",
      "chosen": "The capital of France is Paris, a city of about two million people on the Seine river.",
      "rejected": "The capital of France is Paris, a city of about two million people on the Seine river!"},
     {("near_identical_pair", "rejected")}),
]


def test_planted_faults_found_exactly(tmp_path: Path) -> None:
    records = CLEAN + [r for r, _ in PLANTED]
    audit = scan_cheap(tmp_path, records, max_length=64, max_prompt_length=None, truncation_mode="keep_start")
    got: dict[int, set] = {}
    for row in audit.findings.iter_rows(named=True):
        got.setdefault(row["row"], set()).add((row["check"], row["field"]))
    expected = {len(CLEAN) + i: want for i, (_, want) in enumerate(PLANTED)}
    assert got == expected  # clean rows (0..3) produce no finding at all
    t = audit.totals
    assert t["input"] == len(records) and t["kept"] + t["dropped"] == t["input"]
    # too_long and near_identical_pair only flag, and so does mojibake ftfy repairs ("Itâ€™s"); the rest drop
    flagged_only = {len(CLEAN) + 3, len(CLEAN) + 5, len(CLEAN) + 8}
    assert t["dropped"] == len(PLANTED) - len(flagged_only)


def test_pretokenized_faults(tmp_path: Path) -> None:
    ok = {"prompt_input_ids": [100, 200], "chosen_input_ids": [300, 2], "rejected_input_ids": [400, 2]}
    records = [
        ok,
        {**ok, "chosen_input_ids": [300, 49152, 2]},          # id == vocab size
        {**ok, "rejected_input_ids": [-1, 400, 2]},            # negative id
        {**ok, "chosen_input_ids": [2, 2, 2]},                 # all padding, pad == eos
        {**ok, "chosen_attention_mask": [0, 0]},               # all-zero attention mask
        {**ok, "rejected_labels": [-100, -100]},               # no loss tokens
        {"prompt_input_ids": [11, 12], "chosen_input_ids": [500, 600, 2], "rejected_input_ids": [700, 2]},
    ]
    audit = scan_cheap(tmp_path, records)
    assert audit.report["source"]["format"] == "pretokenized"
    got = sorted(audit.findings.select("row", "check", "field").rows())
    assert got == [(1, "out_of_vocab", "chosen"), (2, "out_of_vocab", "rejected"), (3, "all_padding", "chosen"),
                   (4, "all_padding", "chosen"), (5, "all_padding", "rejected")]
    assert audit.totals == {"input": 7, "kept": 2, "dropped": 5, "flagged": 0, "malformed": 0}


def test_length_outlier_flags_the_extreme_row(tmp_path: Path) -> None:
    records = [{"prompt": f"Question number {i} about topic {i % 7}?",
                "chosen": f"A helpful answer number {i} with some detail about the topic at hand.",
                "rejected": f"An unhelpful answer {i} that is wrong."} for i in range(40)]
    records[17]["chosen"] = LONG * 8
    src = write_jsonl(tmp_path / "pairs.jsonl", records)
    audit = pairaudit.scan(src, out=tmp_path / "out", only=["length_outlier"], log=lambda m: None)
    rows = audit.findings.filter(audit.findings["check"] == "length_outlier").select("row", "field").rows()
    assert rows == [(17, "chosen")]
    assert audit.totals["dropped"] == 0  # flag by default

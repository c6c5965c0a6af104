"""split_word: an implicit-prompt pair whose prompt, as TRL's extract_prompt takes it, ends inside a word;
the real SmolLM2 tokenizer under today's TRL."""

from __future__ import annotations

import pytest
from support.checks import found, run

from pairaudit.checks.prefix import SplitWord
from pairaudit.trainer.tokenizer import DPOTokenizer

HH = "\n\nHuman: Are you sure?\n\nAssistant:"


@pytest.mark.parametrize(("chosen", "rejected", "marked"), [
    (" You’re welcome.", " You’re welcoming, and kind.", "welcom|e."),
    (" Thanks! I think so.", " Thanks! I thought not.", "I th|ink"),
])
def test_a_prompt_that_ends_inside_a_word(chosen: str, rejected: str, marked: str, tok: DPOTokenizer) -> None:
    [(field, detail)] = found(SplitWord, {"chosen": HH + chosen, "rejected": HH + rejected}, tok)
    assert field == "prompt" and detail.startswith("the trainer's prompt ends inside a word")
    assert marked.split("|")[0][-3:] + "|" in detail


@pytest.mark.parametrize(("record", "metrics"), [
    ({"chosen": HH + " Yes.", "rejected": HH + " No."}, {"split_word_score": 0.0}),
    ({"chosen": HH + " Yes, sure.", "rejected": HH + " Yes, no."}, {"split_word_score": 0.0}),  # on a space
    ({"prompt": "Hi", "chosen": " welcome.", "rejected": " welcoming."}, None),              # explicit prompt
], ids=["different", "word-boundary", "explicit"])
def test_splits_on_a_word_boundary_pass(record: dict, metrics: dict | None, tok: DPOTokenizer) -> None:
    assert run(SplitWord, [record], tok) == ([], [metrics])

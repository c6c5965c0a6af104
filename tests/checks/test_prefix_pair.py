"""prefix_pair: implicit-prompt pairs whose prompt, as TRL's extract_prompt takes it, swallows response text
(one response a prefix of the other, or both opening alike); the real SmolLM2 tokenizer under today's TRL."""

from __future__ import annotations

import pytest
from support.checks import found, run

from pairaudit.checks.prefix import PrefixPair
from pairaudit.trainer.tokenizer import DPOTokenizer

HH = "\n\nHuman: Thanks for the help!\n\nAssistant:"
OPENING = " I understand what you are asking, and here is what I think."


def hh(chosen: str, rejected: str) -> dict[str, str]:
    return {"chosen": HH + chosen, "rejected": HH + rejected}


@pytest.mark.parametrize(("record", "what"), [
    (hh(" You’re welcome!", " You’re welcome! It was my pleasure."), "one response is a prefix of the other"),
    (hh(OPENING + " Yes.", OPENING + " No, never."), "both responses open with the same text"),
], ids=["prefix", "opening"])
def test_response_text_in_the_trainers_prompt(record: dict, what: str, tok: DPOTokenizer) -> None:
    [(field, detail)] = found(PrefixPair, record, tok)
    assert field == "prompt" and detail.startswith(f"severity high: {what}") and "so the trainer compares chosen" in detail


@pytest.mark.parametrize(("chosen", "rejected", "level"), [
    (" You’re welcome!", " You’re welcome! It was my pleasure.", "high"),  # a prefix: stop here vs go on
    (OPENING + " Yes.", OPENING + " No, never.", "high"),  # the shared opening is most of each response
    (" Sure, I can help with the recipe: preheat the oven to 200C first.",
     " Sure, the first thing to do is to check which flour you have at home.", "low"),  # 'Sure,' only
])
def test_severity_ranks_what_the_trainer_compares(chosen: str, rejected: str, level: str,
                                                  tok: DPOTokenizer) -> None:
    [(_, detail)] = found(PrefixPair, hh(chosen, rejected), tok, min_shared_tokens=1)
    assert detail.startswith(f"severity {level}: ")


@pytest.mark.parametrize(("record", "hit"), [
    (hh(" You’re welcome!", " You’re welcome! It was my pleasure."), True),  # a prefix: always
    (hh(OPENING + " Yes.", OPENING + " No, never."), False),                 # fewer shared tokens than asked
], ids=["prefix", "opening"])
def test_min_shared_tokens(record: dict, hit: bool, tok: DPOTokenizer) -> None:
    assert bool(found(PrefixPair, record, tok, min_shared_tokens=100)) is hit


def test_the_score_counts_shared_tokens_and_other_rows_pass(tok: DPOTokenizer) -> None:
    recs = [hh(OPENING + " Yes.", OPENING + " No, never."), hh(" Sure.", " No."),
            {"prompt": "Hi", "chosen": " You’re welcome!", "rejected": " You’re welcome! Bye."}]
    out, metrics = run(PrefixPair, recs, tok)
    assert [f.row for f in out] == [0] and metrics[0]["prefix_pair_score"] == out[0].score >= 10
    assert metrics[1] == {"prefix_pair_score": 0.0} and metrics[2] is None  # an explicit prompt is not split


def test_a_one_or_two_token_opening_is_scored_but_not_a_finding(tok: DPOTokenizer) -> None:
    """Issue 34: the reviewer labelled every 1-2 token shared opening on HH "barely changes what the trainer
    compares: not worth a person's time", every 3-4 token one worth reading; the default reads from 3."""
    rec = hh(" Sure, I can help with the recipe: preheat the oven to 200C first.",
             " Sure, the first thing to do is to check which flour you have at home.")
    out, metrics = run(PrefixPair, [rec], tok)
    assert out == [] and 1 <= metrics[0]["prefix_pair_score"] < 3
    assert found(PrefixPair, hh(OPENING + " Yes.", OPENING + " No, never."), tok)  # 14 shared tokens: read it

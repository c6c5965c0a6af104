"""too_long: prompt + response over the trainer's max_length (and TRL < 0.29's prompt / completion limits),
said the way the trainer's truncation mode cuts; the real SmolLM2 tokenizer."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.checks import found, run, to_pair

from pairaudit.checks.length import TooLong
from pairaudit.trainer.tokenizer import DPOTokenizer

LONG = " ".join(f"word{i}" for i in range(40))
REC = {"prompt": "Write a lot.", "chosen": LONG, "rejected": "Short."}


@pytest.mark.parametrize(("mode", "cut"), [("keep_start", "keep_start cuts its last"),
                                            ("keep_end", "keep_end cuts its first")])
def test_a_response_over_max_length(mode: str, cut: str, make_tok: Callable[..., DPOTokenizer]) -> None:
    [(field, detail)] = found(TooLong, REC, make_tok(max_length=32, truncation_mode=mode))
    assert field == "chosen" and "> max_length 32" in detail and cut in detail


def test_the_score_is_the_longer_side_over_max_length(make_tok: Callable[..., DPOTokenizer]) -> None:
    tok = make_tok(max_length=32)
    out, [metrics] = run(TooLong, [REC], tok)
    enc = tok.encode_pairs([to_pair(REC)])[0]
    assert metrics["too_long_score"] == pytest.approx((len(enc.prompt_ids) + len(enc.chosen_ids)) / 32)
    assert out[0].score == metrics["too_long_score"] > 1.0


def test_a_prompt_that_fills_max_length_keeps_no_completion(make_tok: Callable[..., DPOTokenizer]) -> None:
    got = found(TooLong, {"prompt": LONG, "chosen": "Yes.", "rejected": "No."}, make_tok(max_length=16))
    assert {f for f, _ in got} == {"chosen", "rejected"} and all("keeps no completion token" in d for _, d in got)


def test_legacy_prompt_and_completion_limits(make_tok: Callable[..., DPOTokenizer]) -> None:
    tok = make_tok("trl==0.28.0", max_length=1024, max_prompt_length=8, max_completion_length=16)
    got = dict(found(TooLong, {"prompt": LONG, "chosen": LONG, "rejected": "Short."}, tok))
    assert "max_prompt_length 8: its first" in got["prompt"] and "> max_completion_length 16" in got["chosen"]
    assert "rejected" not in got


def test_pairs_that_fit_pass_and_no_tokenizer_means_no_score(tok: DPOTokenizer) -> None:
    out, [metrics] = run(TooLong, [REC], tok)  # today's TRL default: max_length 1024
    assert out == [] and 0 < metrics["too_long_score"] < 0.2
    assert run(TooLong, [REC]) == ([], [None])

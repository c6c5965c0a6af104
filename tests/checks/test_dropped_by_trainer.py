"""dropped_by_trainer: rows the trainer itself drops (TRL >= 1.9, keep_start: a prompt alone of >= max_length
tokens); nothing under keep_end or with short prompts; the real SmolLM2 tokenizer."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.checks import run

from pairaudit.checks.trainer import DroppedByTrainer
from pairaudit.trainer.tokenizer import DPOTokenizer

LONG = " ".join(f"word{i}" for i in range(40))


def test_a_prompt_that_reaches_max_length_is_dropped_by_trl(make_tok: Callable[..., DPOTokenizer]) -> None:
    tok = make_tok(max_length=16)
    recs = [{"prompt": LONG, "chosen": "Yes.", "rejected": "No."}, {"prompt": "Hi?", "chosen": "Yes.", "rejected": "No."}]
    out, metrics = run(DroppedByTrainer, recs, tok)
    assert [(f.row, f.field) for f in out] == [(0, "prompt")] and "max_length" in out[0].detail
    assert out[0].score == metrics[0]["dropped_by_trainer_score"] >= 1.0 > metrics[1]["dropped_by_trainer_score"]


@pytest.mark.parametrize(("trainer", "limits"), [("trl", {"max_length": 16, "truncation_mode": "keep_end"}),
                                                 ("trl==0.28.0", {"max_length": 16})])
def test_trainers_that_drop_nothing(trainer: str, limits: dict, make_tok: Callable[..., DPOTokenizer]) -> None:
    out, metrics = run(DroppedByTrainer, [{"prompt": LONG, "chosen": "Yes.", "rejected": "No."}],
                       make_tok(trainer, **limits))
    assert out == [] and metrics == [None]

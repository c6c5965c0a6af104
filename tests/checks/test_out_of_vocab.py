"""out_of_vocab: ids outside [0, vocab_size) (vocab_size: the tokenizer's length, or the threshold), and an
unknown-token rate above max_unk_rate; the real SmolLM2 tokenizer (49,152 ids, unknown = <|endoftext|>)."""

from __future__ import annotations

import pytest
from support.checks import found, run

from pairaudit.checks.vocab import OutOfVocab
from pairaudit.trainer.tokenizer import DPOTokenizer

IDS = {"prompt_input_ids": [100, 200], "chosen_input_ids": [300, 2], "rejected_input_ids": [400, 2]}


@pytest.mark.parametrize(("change", "params", "got"), [
    ({"chosen_input_ids": [300, 49152, 2]}, {}, [("chosen", "1 chosen ids outside [0, 49152), e.g. [49152]")]),
    ({"rejected_input_ids": [-1, 400, 2]}, {}, [("rejected", "1 rejected ids outside [0, 49152), e.g. [-1]")]),
    ({"prompt_input_ids": [49151, 0]}, {}, []),                         # the last id is in range
    ({}, {"vocab_size": 256}, [("chosen", "1 chosen ids outside [0, 256), e.g. [300]"),
                               ("rejected", "1 rejected ids outside [0, 256), e.g. [400]")]),
    ({}, {"vocab_size": 1000}, []),
])
def test_ids_outside_the_vocabulary(change: dict, params: dict, got: list, tok: DPOTokenizer) -> None:
    assert found(OutOfVocab, {**IDS, **change}, tok, **params) == got


def test_the_score_of_an_id_finding_is_the_bad_share(tok: DPOTokenizer) -> None:
    out, _ = run(OutOfVocab, [{**IDS, "chosen_input_ids": [-5, 99999, 3, 2]}], tok)
    assert [(f.field, f.score) for f in out] == [("chosen", 0.5)]


@pytest.mark.parametrize(("params", "hit"), [({}, True), ({"max_unk_rate": 0.9}, False)])
def test_unknown_token_rate(params: dict, hit: bool, tok: DPOTokenizer) -> None:
    rec = {"prompt": "Say something.", "chosen": "Fine answer.", "rejected": "<|endoftext|>" * 3 + " ok"}
    out, [metrics] = run(OutOfVocab, [rec], tok, **params)
    assert [f.field for f in out] == (["rejected"] if hit else [])
    assert 0.05 < metrics["out_of_vocab_score"] < 0.9
    assert found(OutOfVocab, {"prompt": "Hi.", "chosen": "Fine.", "rejected": "Also fine."}, tok) == []

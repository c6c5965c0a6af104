"""all_padding: a side made only of special-token strings, or (pre-tokenized) of special ids, or fully masked;
the real SmolLM2 tokenizer (pad == eos == 2)."""

from __future__ import annotations

import pytest
from support.checks import found

from pairaudit.checks.padding import AllPadding
from pairaudit.trainer.tokenizer import DPOTokenizer

IDS = {"prompt_input_ids": [100, 200], "chosen_input_ids": [300, 2], "rejected_input_ids": [400, 2]}


@pytest.mark.parametrize(("side", "text"), [
    ("rejected", "<|im_end|>"), ("chosen", " <|endoftext|><|im_end|>\n"), ("prompt", "<|im_start|>")])
def test_special_token_strings_only(side: str, text: str, tok: DPOTokenizer) -> None:
    rec = {"prompt": "Say something.", "chosen": "Something nice.", "rejected": "Something."}
    rec[side] = text
    [(field, detail)] = found(AllPadding, rec, tok)
    assert field == side and detail.startswith(f"{side} holds only special-token strings")


@pytest.mark.parametrize("text", ["Something.", "  ", "<|im_end|> and a word", "<|not_a_token|>"])
def test_text_with_content_or_blank_passes(text: str, tok: DPOTokenizer) -> None:
    assert found(AllPadding, {"prompt": "Say something.", "chosen": "Fine.", "rejected": text}, tok) == []


@pytest.mark.parametrize(("change", "field", "detail"), [
    ({"chosen_input_ids": [2, 2, 2]}, "chosen", "all 3 chosen ids are special/padding ids [2]"),
    ({"rejected_input_ids": [0, 1, 2]}, "rejected", "all 3 rejected ids are special/padding ids [0, 1, 2]"),
    ({"chosen_attention_mask": [0, 0]}, "chosen", "chosen_attention_mask is all zero"),
    ({"rejected_labels": [-100, -100]}, "rejected", "rejected_labels are all -100: no token carries loss"),
    ({"chosen_attention_mask": [1, 0], "rejected_labels": [-100, 400]}, None, None),
    ({}, None, None),
])
def test_pretokenized_sides(change: dict, field: str | None, detail: str | None, tok: DPOTokenizer) -> None:
    got = found(AllPadding, {**IDS, **change}, tok)
    assert got == ([] if field is None else [(field, detail)])

"""empty_prompt: empty, whitespace- or invisible-only prompts in every format; prompts with content pass."""

from __future__ import annotations

import pytest
from support.checks import found, run

from pairaudit.checks.empty import EmptyPrompt

MSG = [{"role": "assistant", "content": "Sure."}]


@pytest.mark.parametrize("record", [
    {"prompt": "", "chosen": "A.", "rejected": "B."},
    {"prompt": "  \n\t ", "chosen": "A.", "rejected": "B."},
    {"prompt": "\u200b\u00ad\ufeff", "chosen": "A.", "rejected": "B."},  # invisible only
    {"prompt": [{"role": "user", "content": "   "}], "chosen": MSG, "rejected": MSG},
    {"prompt_input_ids": [], "chosen_input_ids": [5, 2], "rejected_input_ids": [6, 2]},
], ids=["empty", "whitespace", "invisible", "conversational", "pretokenized"])
def test_a_prompt_without_content_is_found(record: dict) -> None:
    assert found(EmptyPrompt, record) == [("prompt", "prompt has no content")]


@pytest.mark.parametrize("record", [
    {"prompt": "Hi", "chosen": "A.", "rejected": "B."},
    {"prompt": " ?", "chosen": "A.", "rejected": "B."},
    {"prompt": [{"role": "user", "content": "Help me."}], "chosen": MSG, "rejected": MSG},
    {"chosen_input_ids": [5, 2], "rejected_input_ids": [6, 2]},  # no prompt column: nothing to judge
    {"chosen": "\n\nHuman: Hi\n\nAssistant: Hello.", "rejected": "\n\nHuman: Hi\n\nAssistant: Go away."},
], ids=["word", "punctuation", "conversational", "pretokenized", "implicit"])
def test_a_prompt_with_content_passes(record: dict) -> None:
    out, metrics = run(EmptyPrompt, [record])
    assert out == [] and metrics == [None]

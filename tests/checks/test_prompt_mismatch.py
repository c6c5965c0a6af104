"""prompt_mismatch: implicit-prompt pairs whose chosen and rejected histories differ before the last
assistant turn (found by the normaliser, reported by the check)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.checks import found, scan_cheap

from pairaudit.checks.mismatch import PromptMismatch

U1, U2 = {"role": "user", "content": "Hi there"}, {"role": "user", "content": "Different question"}
A, B = {"role": "assistant", "content": "Hello!"}, {"role": "assistant", "content": "Go away."}


@pytest.mark.parametrize(("record", "hit"), [
    ({"chosen": [U1, A], "rejected": [U2, B]}, True),
    ({"chosen": [U1, A], "rejected": [U1, B]}, False),
    ({"chosen": "\n\nHuman: Hi there\n\nAssistant: Hello!", "rejected": "\n\nHuman: Other\n\nAssistant: Go away."}, True),
    ({"chosen": "\n\nHuman: Hi there\n\nAssistant: Hello!", "rejected": "\n\nHuman: Hi there\n\nAssistant: No."}, False),
    ({"prompt": "Hi there", "chosen": "Hello!", "rejected": "Go away."}, False),  # explicit prompt: one prompt
], ids=["messages", "same-messages", "hh", "same-hh", "explicit"])
def test_histories_that_differ(record: dict, hit: bool) -> None:
    got = found(PromptMismatch, record)
    assert [f for f, _ in got] == (["prompt"] if hit else []) and all(d for _, d in got)


def test_prompt_mismatch_on_implicit_conversations(tmp_path: Path) -> None:
    u1, u2 = {"role": "user", "content": "Hi there"}, {"role": "user", "content": "Different question"}
    a, b = {"role": "assistant", "content": "Hello!"}, {"role": "assistant", "content": "Go away."}
    audit = scan_cheap(tmp_path, [{"chosen": [u1, a], "rejected": [u1, b]}, {"chosen": [u1, a], "rejected": [u2, b]}])
    rows = audit.findings.select("row", "check", "field").rows()
    assert rows == [(1, "prompt_mismatch", "prompt")]
    assert audit.report["source"]["format"] == "implicit_conversational"

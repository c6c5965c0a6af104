"""encoding_error: U+FFFD, mojibake (ftfy), lone surrogates, NUL and control characters, on their field;
clean non-ASCII text, tabs and newlines pass."""

from __future__ import annotations

import pytest
from support.checks import found

from pairaudit.checks.encoding import EncodingError

OK = {"prompt": "Describe the day.", "chosen": "It is a lovely day.", "rejected": "It is a bad day."}


@pytest.mark.parametrize(("field", "text", "what"), [
    ("chosen", "It\ufffds a lovely day.", "1 U+FFFD replacement character(s)"),
    ("chosen", "Itâ€™s a lovely day in the park.", "mojibake near char 2"),
    ("rejected", "It is\x00 bad.", "NUL at char 5"),
    ("prompt", "Ring the bell\x07 now.", "control character U+0007 at char 13"),
    ("rejected", "A caf\u00c3\u00a9 au lait, please.", "mojibake"),
    ("prompt", "Lone \udc00 surrogate.", "lone surrogate U+DC00 at char 5"),
])
def test_broken_text_is_found_on_its_field(field: str, text: str, what: str) -> None:
    [(got_field, detail)] = found(EncodingError, {**OK, field: text})
    assert got_field == field and detail.startswith(f"{field}: ") and what in detail


@pytest.mark.parametrize("text", [
    "Tabs\tand\nnewlines\r\nare fine.",
    "I’d pick a café au lait — naïve façade.",
    "日本語のテキストです。",
    "Emoji are text too 🙂 ✓",
    "Â is a letter on its own.",
])
def test_clean_text_passes(text: str) -> None:
    assert found(EncodingError, {**OK, "chosen": text}) == []

"""``encoding_error``: replacement characters, mojibake, lone surrogates, NUL and control characters."""

from __future__ import annotations

import re

from pairaudit.checks.base import CheckInfo, PairCheck, text_sides
from pairaudit.tokenize import EncodedPair
from pairaudit.types import Finding, Pair

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def encoding_problem(text: str) -> str | None:
    """A short description of the first encoding problem in ``text``, or None."""
    m = _CONTROL.search(text)
    if m:
        what = "NUL" if m.group() == "\x00" else f"control character U+{ord(m.group()):04X}"
        return f"{what} at char {m.start()}"
    if text.isascii():
        return None
    if "\ufffd" in text:
        return f"{text.count(chr(0xFFFD))} U+FFFD replacement character(s) (bytes lost in decoding)"
    m = _SURROGATE.search(text)
    if m:
        return f"lone surrogate U+{ord(m.group()):04X} at char {m.start()}"
    from ftfy import badness, fix_text

    if badness.is_bad(text):
        fixed = fix_text(text)
        if fixed != text:
            i = next((k for k, (a, b) in enumerate(zip(text, fixed)) if a != b), 0)
            return f"mojibake near char {i}: {text[max(0, i - 10):i + 15]!r} -> ftfy: {fixed[max(0, i - 10):i + 15]!r}"
    return None


class EncodingError(PairCheck):
    info = CheckInfo(
        "encoding_error",
        "U+FFFD replacement characters, mojibake (detected and repaired by ftfy), lone surrogates, NUL and "
        "other control characters (tab, newline and carriage return are fine)",
        "drop",
        why="garbled text trains the model on garbage and often tokenizes into rare, high-loss ids",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> None:
        for side, text in text_sides(pair):
            if text:
                problem = encoding_problem(text)
                if problem:
                    out.append(Finding(pair.row, "encoding_error", side, 1.0, detail=f"{side}: {problem}"))

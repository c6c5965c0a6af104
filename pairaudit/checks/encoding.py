"""``encoding_error``: replacement characters, mojibake, lone surrogates, NUL and control characters."""

from __future__ import annotations

import re

from pairaudit.checks.base import CheckInfo, PairCheck, text_sides
from pairaudit.tokenize import EncodedPair
from pairaudit.types import Finding, Pair

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# UTF-8 read as cp1252/latin-1: a lead byte (U+00C2..U+00F4) followed by a continuation byte
# (0x80..0xBF as latin-1, or its cp1252 rendering). ftfy is only asked when this matches, which
# keeps the check fast on clean non-ASCII text (curly quotes, accents, CJK).
_MOJIBAKE_HINT = re.compile(
    "[\u00c2-\u00f4][\u0080-\u00bf\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc"
    "\u2013\u2014\u2018-\u201e\u2020-\u2022\u2026\u2030\u2039\u203a\u20ac\u2122]")


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
    if not _MOJIBAKE_HINT.search(text):
        return None
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

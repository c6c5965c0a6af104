"""``encoding_error``: replacement characters, mojibake, lone surrogates, NUL and control characters.

Unrepairable damage (U+FFFD: the bytes are gone; control characters, NUL, lone surrogates) drops under the
default action. Mojibake that ``ftfy.fix_text`` repairs (UTF-8 read as cp1252: "2Â°C" for "2°C") is a mild
finding: flagged, the detail showing ftfy's repair, so one such character does not drop a 600-token row.
The cleaned output keeps the text as read (pairaudit never rewrites records).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pairaudit.checks.base import CheckInfo, PairCheck, text_sides
from pairaudit.datatypes import Finding, Pair
from pairaudit.trainer.long_text import LONG_CHARS
from pairaudit.trainer.memo import TextMemo
from pairaudit.trainer.tokenizer import DPOTokenizer, EncodedPair

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# UTF-8 read as cp1252/latin-1: a lead byte (U+00C2..U+00F4) followed by a continuation byte
# (0x80..0xBF as latin-1, or its cp1252 rendering). ftfy is only asked when this matches, which
# keeps the check fast on clean non-ASCII text (curly quotes, accents, CJK).
_MOJIBAKE_HINT = re.compile(
    "[\u00c2-\u00f4][\u0080-\u00bf\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc"
    "\u2013\u2014\u2018-\u201e\u2020-\u2022\u2026\u2030\u2039\u203a\u20ac\u2122]")


MOJIBAKE = "repairable mojibake"


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
            return (f"{MOJIBAKE} near char {i}: {text[max(0, i - 10):i + 15]!r} -> ftfy: "
                    f"{fixed[max(0, i - 10):i + 15]!r}")
    return None


def _replace_surrogates(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def strip_surrogates(pair: Pair) -> Pair:
    """Replace lone surrogates (valid in JSON as ``\\udc00``, not encodable as UTF-8: tokenizers and
    embedders raise on them) by U+FFFD in every text of ``pair``, in place, and note where they were in
    ``pair.notes["lone_surrogate"]`` for ``encoding_error``. The record itself is written as read."""
    found = []
    for side in ("prompt", "chosen", "rejected"):
        text = getattr(pair, side)
        if text and not text.isascii():
            m = _SURROGATE.search(text)
            if m:
                found.append(f"{side}: lone surrogate U+{ord(m.group()):04X} at char {m.start()}")
                setattr(pair, side, _replace_surrogates(text))
    for attr in ("prompt_messages", "chosen_messages", "rejected_messages"):
        for msg in getattr(pair, attr) or []:
            content = msg.get("content")
            if isinstance(content, str) and _SURROGATE.search(content):
                msg["content"] = _replace_surrogates(content)
                if not found:
                    found.append(f"{attr.split('_')[0]}: lone surrogate in a message")
    if found:
        pair.notes["lone_surrogate"] = "; ".join(found)
    return pair


class EncodingError(PairCheck):
    info = CheckInfo(
        "encoding_error",
        "U+FFFD replacement characters, mojibake (found by ftfy; mojibake ftfy repairs is flagged, not dropped, "
        "the text left as read), lone surrogates, NUL and other control characters (tab, newline and carriage "
        "return are fine)",
        "drop",
        summary="U+FFFD / mojibake / controls",
        why="garbled text trains the model on garbage and often tokenizes into rare, high-loss ids; mojibake that "
            "ftfy repairs ('2Â°C' for '2°C') is only flagged, the detail showing the repair (--drop "
            "encoding_error drops it too)",
    )

    def __init__(self, params: Mapping[str, Any] | None = None, tok: DPOTokenizer | None = None) -> None:
        super().__init__(params, tok)
        self.memo: TextMemo[str | None] = TextMemo()  # a text repeated across pairs is read once

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> None:
        noted = pair.notes.get("lone_surrogate")
        if noted:  # found (and replaced by U+FFFD for the analysis) while normalising
            side = noted.split(":")[0]
            out.append(self.finding(pair.row, side, 1.0, detail=noted))
            return
        for side, text in text_sides(pair):
            if text:
                problem = self.memo.get(text, encoding_problem, LONG_CHARS)  # a huge text is not held
                if problem:  # mojibake ftfy repairs leaves the text readable: a flag under the default action
                    mild = "ftfy.fix_text repairs it" if problem.startswith(MOJIBAKE) else ""
                    out.append(self.finding(pair.row, side, 1.0, detail=f"{side}: {problem}", mild=mild))

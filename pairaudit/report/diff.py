"""Word-level diff of chosen vs rejected, rendered as escaped HTML or as rich Text."""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markupsafe import Markup
    from rich.text import Text

# words, runs of whitespace, single punctuation marks
_TOKEN = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)
# SequenceMatcher without the junk heuristic is quadratic in the worst case: use it on short texts only
_EXACT_LIMIT = 3000
Segment = tuple[str, str]  # (kind, text); kind in "same" | "del" | "ins"


def tokenize_words(text: str) -> list[str]:
    return _TOKEN.findall(text)


def elide(text: str, limit: int) -> tuple[str, int]:
    """Shorten ``text`` to about ``limit`` characters keeping head and tail; returns (text, omitted)."""
    if len(text) <= limit:
        return text, 0
    head = limit * 2 // 5
    tail = limit - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[… {omitted} characters omitted …]\n{text[-tail:]}", omitted


def word_diff(a: str, b: str) -> tuple[list[Segment], list[Segment], float]:
    """Diff ``a`` (chosen) against ``b`` (rejected) word by word.

    Returns the segments of ``a`` (``same``/``del``: text only in a), the segments of ``b``
    (``same``/``ins``: text only in b), and the word-level similarity ratio in [0, 1].
    """
    ta, tb = tokenize_words(a), tokenize_words(b)
    autojunk = len(ta) + len(tb) > _EXACT_LIMIT
    sm = difflib.SequenceMatcher(None, ta, tb, autojunk=autojunk)
    left: list[Segment] = []
    right: list[Segment] = []
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            _push(left, "same", "".join(ta[i1:i2]))
            _push(right, "same", "".join(tb[j1:j2]))
        else:
            if i2 > i1:
                _push(left, "del", "".join(ta[i1:i2]))
            if j2 > j1:
                _push(right, "ins", "".join(tb[j1:j2]))
    ratio = sm.ratio() if (ta or tb) else 1.0
    return left, right, ratio


def inline_diff(a: str, b: str) -> list[Segment]:
    """One sequence from ``a`` (chosen) to ``b`` (rejected): ``same`` text, ``del`` (only in a) before the
    ``ins`` (only in b) that replaces it, as ``git diff --word-diff`` shows it."""
    ta, tb = tokenize_words(a), tokenize_words(b)
    sm = difflib.SequenceMatcher(None, ta, tb, autojunk=len(ta) + len(tb) > _EXACT_LIMIT)
    out: list[Segment] = []
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            _push(out, "same", "".join(ta[i1:i2]))
            continue
        _push(out, "del", "".join(ta[i1:i2]))
        _push(out, "ins", "".join(tb[j1:j2]))
    return out


def segments_plain(segments: list[Segment]) -> str:
    """Diff segments as plain text, changes marked as ``git diff --word-diff=plain`` marks them:
    ``[-only in chosen-]{+only in rejected+}`` (readable without colour: piped, in a file, in a log)."""
    marks = {"same": ("", ""), "del": ("[-", "-]"), "ins": ("{+", "+}")}
    return "".join(marks[kind][0] + text + marks[kind][1] for kind, text in segments)


def _push(out: list[Segment], kind: str, text: str) -> None:
    if not text:
        return
    if out and out[-1][0] == kind:
        out[-1] = (kind, out[-1][1] + text)
    else:
        out.append((kind, text))


def segments_html(segments: list[Segment]) -> Markup:
    """Escaped HTML for diff segments: changed words wrapped in ``<mark class="del|ins">``."""
    from markupsafe import Markup, escape

    parts: list[str] = []
    for kind, text in segments:
        esc = str(escape(text))
        if kind == "same":
            parts.append(esc)
        else:
            parts.append(f'<mark class="{kind}">{esc}</mark>')
    return Markup("".join(parts))


def segments_text(segments: list[Segment]) -> Text:
    """rich Text with removed words red and added words green (no markup parsing of dataset text, control
    characters shown as visible escapes)."""
    from rich.text import Text

    from pairaudit.report.terminal import terminal_safe

    out = Text()
    for kind, text in segments:
        style = {"same": "", "del": "bold black on red3", "ins": "bold black on green3"}[kind]
        out.append(terminal_safe(text), style=style)
    return out

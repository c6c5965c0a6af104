"""Text that is safe to print to a terminal.

Dataset text can hold escape sequences (clear the screen, set the window title, hide text, rewrite
the current line) and bidirectional-override characters that reorder what a reader sees. Everything
printed to a terminal that may carry dataset text goes through :func:`terminal_safe`, which shows each
such character as a visible escape (``\\x1b``, ``\\u202e``) instead of sending it.
"""

from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, C1 controls, bidi embeddings/overrides/isolates, line and
# paragraph separators, and lone surrogates (which cannot even be encoded for the terminal)
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with every control character shown as a visible escape (tab and newline kept)."""
    return _UNSAFE.sub(_escape, text)

"""Text that is safe to print to a terminal: the one choke point for everything pairaudit prints.

Dataset text, paths, run-folder names, trainer log lines, config values and exception messages can hold
escape sequences (clear the screen, set the window title, hide text, rewrite the current line) and
bidirectional-override characters that reorder what a reader sees. Every line pairaudit prints goes
through this module:

- :func:`terminal_safe` shows each such character as a visible escape (``\\x1b``, ``\\u202e``);
- :func:`echo` prints a plain line (the CLI's messages, errors, paths);
- :func:`safe_console` is the rich console for tables, panels and the live progress display: every text
  segment is escaped as it is rendered, so no renderable (a table cell, a panel title, ``rich.text.Text``
  built elsewhere) can send a control character; rich's own styling codes are added after that;
- :func:`json_safe` does the same for JSON text (``trace --json``), as JSON escapes;
- :func:`install_guards` escapes the messages of Python warnings and of every ``logging`` record
  (libraries' log lines) for the lifetime of a CLI command.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable
from typing import Any

# C0 controls except tab and newline, DEL, C1 controls, bidi marks/embeddings/overrides/isolates, line and
# paragraph separators, and lone surrogates (which cannot even be encoded for the terminal)
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
                     "\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with every control character shown as a visible escape (tab and newline kept)."""
    return _UNSAFE.sub(_escape, text)


def echo(message: object, *, err: bool = False, nl: bool = True) -> None:
    """Print one message (any object, as ``str``) with control characters escaped."""
    stream = sys.stderr if err else sys.stdout
    stream.write(terminal_safe(str(message)) + ("\n" if nl else ""))
    stream.flush()


def safe_console(**kwargs: Any) -> Any:
    """A rich ``Console`` (same arguments) whose every rendered text segment is escaped."""
    from rich.console import Console
    from rich.segment import Segment

    class SafeConsole(Console):
        def render_str(self, text: str, **kw: Any) -> Any:  # before layout, so widths are measured escaped
            return super().render_str(terminal_safe(text), **kw)

        def render(self, renderable: Any, options: Any = None) -> Iterable[Segment]:
            for seg in super().render(renderable, options):
                # control segments are rich's own cursor moves (live display); everything else is text
                yield seg if seg.control else Segment(terminal_safe(seg.text), seg.style, seg.control)

    return SafeConsole(**kwargs)


def json_safe(text: str) -> str:
    """JSON text with every unsafe character inside its strings written as a JSON escape (``\\u202e``),
    so what is printed is still valid JSON that reads back to the same strings."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def install_guards() -> Callable[[], None]:
    """Escape the text of Python warnings and of every logging record (libraries log paths and messages
    that can carry control characters) until the returned function is called (the CLI: until the
    command ends)."""
    import logging
    import warnings

    make, show = logging.getLogRecordFactory(), warnings.showwarning

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is logging's to report, as before
            return record
        record.msg, record.args = terminal_safe(message), None
        return record

    def showwarning(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
                    line: str | None = None) -> None:
        show(terminal_safe(str(message)), category, terminal_safe(str(filename)), lineno, file,
             None if line is None else terminal_safe(line))

    logging.setLogRecordFactory(factory)
    warnings.showwarning = showwarning

    def restore() -> None:
        logging.setLogRecordFactory(make)
        warnings.showwarning = show

    return restore

"""Reports on a scan's output folder: ``report.html`` and ``pairaudit show``.

Everything heavy (jinja2, matplotlib, polars) is imported when a function runs, not at import time.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["render_report", "show_row"]


def render_report(out_dir: str | Path, *, max_examples: int = 5) -> Path:
    """Write ``out_dir/report.html`` (self-contained, deterministic) and return its path. Without the
    report extra (jinja2, matplotlib) a minimal plain page is written instead."""
    try:
        from pairaudit.report.html import render_report as _render
    except ImportError:
        from pairaudit.report.plain import render_plain

        return render_plain(Path(out_dir))
    return _render(out_dir, max_examples=max_examples)


def show_row(out_dir: str | Path, row: int, console: Console | None = None) -> None:
    """Print one pair with its findings and a chosen/rejected word diff."""
    from pairaudit.report.console import show_row as _show

    _show(out_dir, row, console)

"""``pairaudit show OUT ROW``: one pair with its findings, scores and a word diff, in the terminal."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pairaudit.errors import InputError
from pairaudit.outputs.reader import OutputFolder

if TYPE_CHECKING:
    from rich.console import Console

SIDE_LIMIT = 6000


def show_row(out_dir: str | Path, row: int, console: Console | None = None) -> None:
    """Print row ``row`` of the scan in ``out_dir``: findings, metrics, prompt, chosen | rejected diff.

    Dataset text is printed as plain ``rich.text.Text`` (never parsed as console markup) with control
    characters shown as visible escapes (:func:`~pairaudit.report.terminal.terminal_safe`).
    """
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text as RichText

    from pairaudit.report.diff import elide, segments_text, word_diff
    from pairaudit.report.terminal import safe_console, terminal_safe

    def Text(text: str = "", style: str = "") -> RichText:  # noqa: N802 - rich's Text, made safe
        return RichText(terminal_safe(text), style=style)

    console = console or safe_console()
    folder = OutputFolder.open(out_dir)
    if not folder.has_row(row):
        rows = folder.all_rows()
        span = f"rows {rows[0]}..{rows[-1]}" if rows else "no rows"
        raise InputError(f"row {row} is not in the scan at {folder.path} ({span})",
                         expected="a row number from findings.parquet or scores.parquet",
                         fix="list findings with `pairaudit` or polars: pl.read_parquet('OUT/findings.parquet')")
    pair = folder.pairs([row]).get(row)
    title = Text(f"row {row}", style="bold")
    if pair is not None:
        title.append(f"  ({pair.format})", style="dim")
    console.rule(title)

    findings = folder.row_findings(row)
    if findings:
        t = Table("check", "action", "field", "score", "group", "detail", title="findings", title_justify="left")
        for f in findings:
            t.add_row(Text(str(f["check"])), Text(str(f["action"]), style="red" if f["action"] == "drop" else "yellow"),
                      Text(str(f["field"] or "")), Text("" if f["score"] is None else f"{f['score']:.4g}"),
                      Text("" if f["group"] is None else str(f["group"])), Text(str(f["detail"] or "")))
        console.print(t)
    else:
        console.print(Text("no findings", style="green"))
    scores = {k: v for k, v in folder.row_scores(row).items() if k != "pair_hash"}
    if scores:
        console.print(Text("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                     for k, v in scores.items()), style="dim"))
    if pair is None:
        console.print(Text("text not available: the source could not be read for this row", style="yellow"))
        return
    if pair.chosen is None or pair.rejected is None:
        detail = pair.notes.get("raw", "") if pair.notes else ""
        if pair.ids:
            detail = ", ".join(f"{k}: {len(v)} ids" for k, v in sorted(pair.ids.items()))
        console.print(Panel(Text(detail or "(no text)"), title="record without text"))
        return
    if pair.prompt:
        console.print(Panel(Text(elide(pair.prompt, 2000)[0]), title="prompt", title_align="left"))
    left, right, ratio = word_diff(elide(pair.chosen, SIDE_LIMIT)[0], elide(pair.rejected, SIDE_LIMIT)[0])
    grid = Table(expand=True, show_lines=False, caption=f"word similarity {ratio:.2f}")
    grid.add_column(Text("chosen", style="bold blue"), ratio=1, overflow="fold")
    grid.add_column(Text("rejected", style="bold dark_orange"), ratio=1, overflow="fold")
    grid.add_row(segments_text(left), segments_text(right))
    console.print(grid)

"""``pairaudit show OUT ROW``: one pair with its findings, scores and a word diff, in the terminal (changes
marked ``[-...-]{+...+}`` in plain text when the output is not a terminal); ``pairaudit show OUT --check
NAME``: the rows of one check, most severe first, a page at a time."""

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

    from pairaudit.report.diff import elide, inline_diff, segments_plain, segments_text, word_diff
    from pairaudit.report.terminal import safe_console, terminal_safe

    def Text(text: str = "", style: str = "") -> RichText:  # rich's Text, made safe
        return RichText(terminal_safe(text), style=style)

    console = console or safe_console()
    folder = OutputFolder.open(out_dir)
    if not folder.has_row(row):
        rows = folder.all_rows()
        span = f"rows {rows[0]}..{rows[-1]}" if rows else "no rows"
        raise InputError(f"row {row} is not in the scan at {folder.path} ({span})",
                         expected="a row number from findings.parquet or scores.parquet",
                         fix=f"list a check's rows with `pairaudit show {folder.path} --check CHECK`")
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
    chosen, rejected = elide(pair.chosen, SIDE_LIMIT)[0], elide(pair.rejected, SIDE_LIMIT)[0]
    left, right, ratio = word_diff(chosen, rejected)
    if not console.is_terminal:  # no colour: the changes marked in the text itself
        console.print(Text(f"word diff, chosen -> rejected ([-only in chosen-] {{+only in rejected+}}; "
                           f"similarity {ratio:.2f}):", style="bold"))
        console.print(Text(segments_plain(inline_diff(chosen, rejected))), soft_wrap=True)
        return
    grid = Table(expand=True, show_lines=False, caption=f"word similarity {ratio:.2f}")
    grid.add_column(Text("chosen", style="bold blue"), ratio=1, overflow="fold")
    grid.add_column(Text("rejected", style="bold dark_orange"), ratio=1, overflow="fold")
    grid.add_row(segments_text(left), segments_text(right))
    console.print(grid)


def check_rows(folder: OutputFolder, check: str) -> list[dict]:
    """The findings of ``check``, most severe first: rows it drops, then by score (highest first), then row."""
    import polars as pl

    if check not in folder.checks:
        raise InputError(f"no check {check!r} in the scan at {folder.path}", expected=", ".join(folder.checks),
                         fix="pass one of the scan's checks (`pairaudit checks` describes them)")
    f = folder.findings.filter(pl.col("check") == check)
    f = f.with_columns(pl.when(pl.col("action") == "drop").then(0).otherwise(1).alias("_act"),
                       (-pl.col("score").fill_null(float("-inf"))).alias("_neg"))
    return f.sort(["_act", "_neg", "row"]).drop("_act", "_neg").to_dicts()


def show_check(out_dir: str | Path, check: str, page: int = 1, per_page: int = 20,
               console: Console | None = None) -> None:
    """Print page ``page`` (``per_page`` rows) of ``check``'s rows, most severe first: row, action, score,
    field, detail and the start of chosen / rejected, then the command for the next page."""
    from rich.table import Table
    from rich.text import Text as RichText

    from pairaudit.report.terminal import safe_console, terminal_safe

    console = console or safe_console()
    folder = OutputFolder.open(out_dir)
    rows = check_rows(folder, check)
    pages = max(1, -(-len(rows) // per_page))
    if not 1 <= page <= pages:
        raise InputError(f"page {page} of {check}: it has {len(rows)} rows, {pages} page(s) of {per_page}",
                         expected=f"a page from 1 to {pages}", fix=f"--page {pages}")
    chunk = rows[(page - 1) * per_page:page * per_page]
    pairs = folder.pairs([r["row"] for r in chunk])
    t = Table("row", "action", "score", "field", "detail", "chosen", "rejected", expand=True,
              title=f"{check}: {len(rows)} rows, most severe first (page {page} of {pages})", title_justify="left")
    for f in chunk:
        p = pairs.get(f["row"])
        t.add_row(str(f["row"]), f["action"], "" if f["score"] is None else f"{f['score']:.4g}", f["field"] or "",
                  *(RichText(terminal_safe(_short(x))) for x in (f["detail"], p and p.chosen, p and p.rejected)))
    console.print(t)
    if page < pages:
        console.print(RichText(terminal_safe(f"next: pairaudit show {folder.path} --check {check} --page {page + 1}"),
                               style="dim"), soft_wrap=True)
    console.print(RichText(terminal_safe(f"one row in full: pairaudit show {folder.path} ROW"), style="dim"),
                  soft_wrap=True)


def _short(text: str | None, limit: int = 80) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[:limit - 1] + "…"

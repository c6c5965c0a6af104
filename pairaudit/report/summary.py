"""The end-of-scan summary table (rich)."""

from __future__ import annotations

from typing import Any


def print_summary(audit: Any) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from pairaudit.report.terminal import terminal_safe

    def safe(text: object) -> str:  # paths and problems can carry dataset text: no markup, no escapes
        return escape(terminal_safe(str(text)))

    rep = audit.report
    t = rep["totals"]
    console = Console()
    table = Table(title=f"pairaudit: {safe(rep['source']['path'])} ({safe(rep['source']['format'])})")
    for col in ("check", "status", "action", "rows", "rate"):
        table.add_column(col, justify="right" if col in ("rows", "rate") else "left")
    for name, c in rep["checks"].items():
        if c["status"] == "off":
            continue
        style = "red" if c["status"] == "failed" else "yellow" if c["status"] == "skipped" else None
        table.add_row(name, c["status"], c["action"], str(c["rows"]), f"{c['rate']:.2%}", style=style)
    console.print(table)
    console.print(f"input {t['input']:,} = kept {t['kept']:,} + dropped {t['dropped']:,}   "
                  f"(flagged and kept: {t['flagged']:,}; malformed: {t['malformed']:,})")
    console.print(f"outputs in {safe(audit.out_dir)}/: clean, dropped, findings.parquet, scores.parquet, "
                  "report.json, report.html")
    if rep.get("status") != "ok":
        console.print("[bold red]incomplete:[/bold red] " + safe("; ".join(rep.get("problems", []))))

"""The end-of-scan summary table (rich)."""

from __future__ import annotations

from typing import Any


def print_summary(audit: Any) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from pairaudit.report.flip_section import flip_lines
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
    for line in assumption_lines(rep) + flip_lines(rep):
        console.print(terminal_safe(line), markup=False, highlight=False)
    console.print(f"outputs in {safe(audit.out_dir)}/: clean, dropped, findings.parquet, scores.parquet, "
                  "report.json, report.html")
    if rep.get("status") != "ok":
        console.print(f"[bold red]{safe(rep.get('status'))}:[/bold red] " + safe("; ".join(rep.get("problems", []))))


def assumption_lines(report: dict[str, Any]) -> list[str]:
    """What every length figure assumed (report.json ``assumptions``): tokenizer, trainer, limits, notes."""
    a = report.get("assumptions")
    if not isinstance(a, dict):
        return []
    tok, tr = a.get("tokenizer") or {}, a.get("trainer") or {}
    sha = (tok.get("sha256") or "")[:12]
    lines = [f"tokenizer: {tok.get('name') or '?'}" + (" (bundled default)" if tok.get("bundled_default") else "")
             + (f", sha256 {sha}…" if sha else "")]
    if tr:
        installed = tr.get("trl_installed")
        lines.append(f"trainer: {tr.get('profile')} = {tr.get('trainer')} (chosen by: {tr.get('chosen_by')}"
                     + (f"; TRL {installed} installed" if installed and "installed" not in str(tr.get("chosen_by"))
                        else "") + ")")

        def lim(key: str) -> str:
            v = tr.get(key)
            return "none" if v is None else str(v)

        parts = [f"max_length {lim('max_length')}", f"truncation_mode {tr.get('truncation_mode')}"]
        if tr.get("max_prompt_length") is not None or tr.get("max_completion_length") is not None:
            parts += [f"max_prompt_length {lim('max_prompt_length')}",
                      f"max_completion_length {lim('max_completion_length')}"]
        defaults = tr.get("from_profile_defaults") or []
        lines.append("limits: " + ", ".join(parts) + (" (the trainer's defaults)" if len(defaults) == 4 else ""))
        if tr.get("row_filter"):
            lines.append(f"trainer filter: {tr['row_filter']}")
    lines += [f"note: {n}" for n in a.get("notes") or []]
    return lines

"""The end-of-scan summary table (rich)."""

from __future__ import annotations

from typing import Any


def print_summary(audit: Any) -> None:
    from rich.markup import escape
    from rich.table import Table

    from pairaudit.report.flip_section import flip_lines
    from pairaudit.report.review_line import review_line
    from pairaudit.report.terminal import safe_console, terminal_safe

    def safe(text: object) -> str:  # paths and problems can carry dataset text: no markup, no escapes
        return escape(terminal_safe(str(text)))

    rep = audit.report
    t = rep["totals"]
    console = safe_console()
    console.print(f"[bold]pairaudit: {safe(rep['source']['path'])}[/bold] ({safe(rep['source']['format'])})")
    groups = summary_groups(rep["checks"])
    for action, title in (("drop", "dropped"), ("flag", "flagged (kept, for review)")):
        if not groups[action]:
            continue
        table = Table(title=title, title_justify="left", title_style="bold red" if action == "drop" else "bold yellow")
        table.add_column("check")
        table.add_column("rows", justify="right")
        table.add_column("rate", justify="right")
        if action == "flag":
            table.add_column("kept", justify="right")  # flagged rows no other check drops
        for name, c in groups[action]:
            kept = [f"{c.get('kept', c['rows']):,}"] if action == "flag" else []
            table.add_row(name, f"{c['rows']:,}", f"{c['rate']:.2%}", *kept)
        console.print(table)
    for name, remedy in (rep.get("remedies") or {}).items():
        console.print(terminal_safe(f"remedy, {name}: {remedy['text']}"), markup=False, highlight=False)
    if groups["none"]:
        console.print(f"{len(groups['none'])} checks found no rows: {', '.join(n for n, _ in groups['none'])}",
                      markup=False, highlight=False)
    for name, c in groups["not_run"]:
        console.print(f"[{'red' if c['status'] == 'failed' else 'yellow'}]{c['status']}: {name}[/]"
                      + (f" ({safe(c.get('reason') or '')})" if c.get("reason") else ""))
    console.print(f"input {t['input']:,} = kept {t['kept']:,} + dropped {t['dropped']:,}   "
                  f"(flagged and kept: {t['flagged']:,}; malformed: {t['malformed']:,})")
    review = review_line(rep, audit.out_dir)
    if review:
        console.print(terminal_safe(review), markup=False, highlight=False)
    for line in assumption_lines(rep) + flip_lines(rep) + cache_lines(rep):
        console.print(terminal_safe(line), markup=False, highlight=False)
    console.print(f"outputs in {safe(audit.out_dir)}/: clean, dropped, findings.parquet, scores.parquet, "
                  "report.json, report.html")
    if rep.get("status") != "ok":
        console.print(f"[bold red]{safe(rep.get('status'))}:[/bold red] " + safe("; ".join(rep.get("problems", []))))


def summary_groups(checks: dict[str, Any]) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """report.json checks split for the summary: ``drop`` / ``flag`` (ran, with rows), ``none`` (ran, no
    rows), ``not_run`` (skipped or failed); checks that are off are left out."""
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {"drop": [], "flag": [], "none": [], "not_run": []}
    for name, c in checks.items():
        if c["status"] == "off":
            continue
        if c["status"] in ("skipped", "failed"):
            out["not_run"].append((name, c))
        elif not c.get("rows"):
            out["none"].append((name, c))
        else:
            for action, part in by_action(c):
                out[action].append((name, part))
    return out


def by_action(c: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A check's report.json entry as the summary counts it: the rows it drops (``drop``) and the rows it
    only flags (``flag``): a drop check flags some findings (a fault of the rejected side alone, repairable
    mojibake), so it can be in both. Older report.json files (no ``dropped``) count by the check's action."""
    rows = int(c.get("rows") or 0)
    dropped = int(c["dropped"]) if "dropped" in c else rows if c.get("action") == "drop" else 0
    rate = float(c.get("rate") or 0.0)
    out = []
    if dropped:
        out.append(("drop", {**c, "rows": dropped, "rate": rate * dropped / rows if rows else 0.0}))
    if rows > dropped:
        out.append(("flag", {**c, "rows": rows - dropped, "rate": rate * (rows - dropped) / rows}))
    return out


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


def cache_lines(report: dict[str, Any]) -> list[str]:
    """report.json ``cache`` (only when the model cache could not be written): what ran uncached, the fix."""
    c = report.get("cache")
    if not isinstance(c, dict):
        return []
    return [f"cache: {c.get('folder')} could not be written ({c.get('error')}); ran uncached, same results: "
            f"{', '.join(map(str, c.get('uncached') or []))}. fix: {c.get('fix')}"]

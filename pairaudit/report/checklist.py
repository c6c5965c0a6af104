"""``pairaudit checks`` as plain text: a compact list (one line per check) or verbose blocks.

Plain text, no rich markup (so ``[embed]``-style text prints as written), fitted to a given width.
"""

from __future__ import annotations

import textwrap
from typing import Any

from pairaudit.checks.base import CheckInfo

KINDS = (("pair", "Per-pair checks (streaming, every row):"),
         ("global", "Whole-dataset checks (rows that survived the per-pair drops):"))


def on_text(name: str, info: CheckInfo) -> str:
    if name == "malformed_record":
        return "always"
    on = "yes" if info.default_enabled else "opt-in"
    return f"{on} ({info.extra})" if info.extra else on


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)].rstrip() + "…"


def check_lines(infos: dict[str, CheckInfo], thresholds: dict[str, dict[str, Any]] | None = None,
                width: int = 80) -> list[str]:
    """The compact list: per kind, one line per check (name, default action, on by default, summary)."""
    rows = {n: (n, i.default_action, on_text(n, i), i.summary) for n, i in infos.items()}
    w = [max(len(r[k]) for r in [("check", "action", "on"), *rows.values()]) for k in range(3)]
    room = max(12, width - sum(w) - 2 * 3 - 2)

    def line(cells: tuple[str, ...]) -> str:
        return "  " + "  ".join(c.ljust(w[k]) for k, c in enumerate(cells[:3])) + "  " + _fit(cells[3], room)

    out: list[str] = []
    for kind, title in KINDS:
        names = [n for n, i in infos.items() if i.kind == kind]
        if names:
            out += [title, line(("check", "action", "on", "flags")).rstrip()]
            out += [line(rows[n]).rstrip() for n in names]
            out.append("")
    notes = ["on: yes = runs by default, opt-in = only when asked for; (extra) = needs "
             "pip install 'pairaudit[extra]'. Actions: drop removes the row from the cleaned output, flag "
             "keeps it; change them with --drop / --flag.",
             "pairaudit checks --verbose for full descriptions, thresholds and why; --json for everything."]
    for text in notes:
        out += textwrap.wrap(text, width) or [""]
    return out


def verbose_blocks(infos: dict[str, CheckInfo], thresholds: dict[str, dict[str, Any]],
                   width: int = 80) -> list[str]:
    """One block per check: a header line, then description, why and thresholds wrapped to ``width``."""
    out: list[str] = []
    wrap = textwrap.TextWrapper(width=width, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False)
    for name, info in infos.items():
        out += textwrap.wrap(f"{name}  ({info.kind} check, default action {info.default_action}, "
                             f"on: {on_text(name, info)})", width, subsequent_indent="  ")
        out += wrap.wrap(info.description)
        if info.why:
            out += wrap.wrap(f"why {info.default_action}: {info.why}")
        th = ", ".join(f"{k}={v}" for k, v in (thresholds.get(name) or {}).items())
        if th:
            out += wrap.wrap(f"thresholds (--set {name}.NAME=VALUE): {th}")
        out.append("")
    return out


def markdown_table(infos: dict[str, CheckInfo], thresholds: dict[str, dict[str, Any]]) -> list[str]:
    """docs/checks.md's check table, generated from the checks themselves (``scripts/checks_table.py``)."""
    out = ["| check | kind | default action | on by default | flags | thresholds |", "|---|---|---|---|---|---|"]
    for name, info in infos.items():
        th = ", ".join(f"{k}={v}" for k, v in (thresholds.get(name) or {}).items()) or "-"
        out.append(f"| `{name}` | {info.kind} | {info.default_action} | {on_text(name, info)} | {info.summary} | {th} |")
    return out

"""What the applied review decisions did, in one line: the terminal summary and report.html's digest say the
same (a row dropped by a person's decision has the reason ``review`` and no check; without this line a
reader of the digest could not tell why the dropped count is higher than the checks' rows)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from pairaudit.output_files import DECISIONS_FILE
from pairaudit.outputs.folder import owner_folder


def review_counts(report: dict[str, Any], out_dir: str | Path) -> dict[str, int] | None:
    """Applied decisions per kind (``drop`` / ``keep`` / ``flip``), from the decisions file the scan or
    apply read, less the ignored ones; None when none was applied or the file no longer adds up to
    report.json's ``decisions.applied`` (changed since).

    Args:
        report: report.json's content.
        out_dir: the output folder (the decisions file's default place).

    Returns:
        ``{"drop": n, "keep": n, "flip": n}`` or None.

    Example:
        >>> review_counts({"decisions": {"total": 0, "applied": 0}}, ".") is None
        True
    """
    from pairaudit.decisions import load_decisions
    from pairaudit.errors import PairauditError

    dec = report.get("decisions") or {}
    if not dec.get("applied"):
        return None
    path = Path((report.get("config") or {}).get("decisions") or owner_folder(out_dir) / DECISIONS_FILE)
    try:
        final = load_decisions(path)
    except (OSError, ValueError, PairauditError):
        return None
    ignored = {i.get("row") for i in dec.get("ignored") or [] if isinstance(i, dict)}
    counts = Counter(d.decision for row, d in final.items() if row not in ignored)
    if sum(counts.values()) != dec["applied"]:
        return None
    return {k: counts.get(k, 0) for k in ("drop", "keep", "flip")}


def review_line(report: dict[str, Any], out_dir: str | Path) -> str | None:
    """``review decisions: 2 of 3 applied (1 dropped, 0 kept, 1 flipped); 1 ignored``, or None without
    decisions.

    Example:
        >>> review_line({"decisions": {"total": 0}}, ".") is None
        True
    """
    dec = report.get("decisions") or {}
    if not isinstance(dec, dict) or not dec.get("total"):
        return None
    counts = review_counts(report, out_dir)
    what = (f" ({counts['drop']:,} dropped, {counts['keep']:,} kept, {counts['flip']:,} flipped)" if counts
            else "")
    ignored = len(dec.get("ignored") or [])
    return (f"review decisions: {dec.get('applied', 0):,} of {dec['total']:,} applied{what}"
            + (f"; {ignored:,} ignored (report.html lists why)" if ignored else ""))

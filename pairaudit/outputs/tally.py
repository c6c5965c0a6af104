"""From findings to what the writers and report.json need: one finding per (row, check, field), the
rows to drop or flip, and per-check counts that add up over disjoint row ranges (shards).

Shared by the local engine (one range: the whole dataset) and the Ray engine (one range per shard,
computed where the shard is and summed on the driver), so both count the same way.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pairaudit.datatypes import Finding


def dedupe(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per (row, check, field), sorted: several stages may report the same thing."""
    uniq: dict[tuple[int, str, str | None], Finding] = {}
    for f in sorted(findings, key=lambda f: (f.row, f.check, f.field or "", f.detail)):
        uniq.setdefault((f.row, f.check, f.field), f)
    return list(uniq.values())


def drops_and_flips(findings: list[Finding], flip_checks: Iterable[str]) -> tuple[dict[int, list[str]], set[int]]:
    """row -> drop reasons (checks, in finding order) and the kept rows ``--flip CHECK`` reverses."""
    drops: dict[int, list[str]] = defaultdict(list)
    for f in findings:
        if f.action == "drop" and f.check not in drops[f.row]:
            drops[f.row].append(f.check)
    out = {r: v for r, v in drops.items() if v}
    flip_checks = set(flip_checks)
    flips = {f.row for f in findings if f.check in flip_checks} - set(out)
    return out, flips


@dataclass
class Tally:
    """Per-check finding and row counts, flagged rows: additive over disjoint row ranges."""

    findings: dict[str, int] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    flagged: int = 0
    kept: dict[str, int] = field(default_factory=dict)  # per check: its rows that no check drops
    # per check: the rows its own findings drop (a drop check flags some findings: a rejected-side fault...)
    dropped: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, findings: list[Finding], drops: dict[int, list[str]]) -> Tally:
        per_findings: dict[str, int] = defaultdict(int)
        per_rows: dict[str, set[int]] = defaultdict(set)
        for f in findings:
            per_findings[f.check] += 1
            per_rows[f.check].add(f.row)
        flagged = {f.row for f in findings if f.action == "flag"} - set(drops)
        per_dropped: dict[str, int] = defaultdict(int)
        for reasons in drops.values():
            for check in reasons:
                per_dropped[check] += 1
        return cls(dict(per_findings), {k: len(v) for k, v in per_rows.items()}, len(flagged),
                   {k: len(v - drops.keys()) for k, v in per_rows.items()}, dict(per_dropped))

    def add(self, other: Tally) -> None:
        for mine, theirs in ((self.findings, other.findings), (self.rows, other.rows), (self.kept, other.kept),
                             (self.dropped, other.dropped)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v
        self.flagged += other.flagged

    def to_json(self) -> dict[str, Any]:
        return {"findings": self.findings, "rows": self.rows, "flagged": self.flagged, "kept": self.kept,
                "dropped": self.dropped}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Tally:
        return cls(dict(d["findings"]), dict(d["rows"]), int(d["flagged"]), dict(d.get("kept", {})),
                   dict(d.get("dropped", {})))

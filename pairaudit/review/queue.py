"""Review queues: the flagged rows of a scan in severity order, narrowed by filters, decided one by one or
in bulk (with a guard on rows the scan dropped), with undo and a keyboard-driven notebook widget.

Severity order is defined by the checks: rows a check drops come before rows only flagged, then the
check's place in the scan's check order (malformed and empty records first, labels last), then that
check's score (highest first), then the row number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pairaudit.decisions import DECISIONS, Decision, row_number
from pairaudit.errors import ConfigError

if TYPE_CHECKING:
    import polars as pl

    from pairaudit.outputs.reader import OutputFolder


class Review(Protocol):
    """What a queue uses of its review session (:class:`pairaudit.review.Review`, which creates the queues: this
    module names the interface instead of importing the class, so the two modules do not import each other)."""

    @property
    def folder(self) -> OutputFolder: ...

    def findings(self, check: str | None = None, action: str | None = None) -> pl.DataFrame: ...

    def pair(self, row: int) -> Any: ...

    def decisions(self) -> dict[int, Decision]: ...

    def decide(self, row: Any, decision: str, note: str = "") -> Any: ...

    def decide_many(self, rows: Any, decision: str, note: str = "", force: bool | list[str] = False) -> Any: ...

    def undo(self) -> Any: ...

KEEPING = ("keep", "flip")  # decisions that put a row into the cleaned output


@dataclass(frozen=True)
class Filter:
    """Which findings make a row part of a queue; every given field must hold for one finding, and
    ``text`` (case-insensitive) must occur in the row's prompt, chosen, rejected or a finding's detail."""

    check: str | None = None
    action: str | None = None
    min_score: float | None = None
    text: str | None = None

    def narrowed(self, **kw: Any) -> Filter:
        merged = {k: getattr(self, k) for k in ("check", "action", "min_score", "text")}
        merged.update({k: v for k, v in kw.items() if v is not None})
        return Filter(**merged)

    def describe(self) -> str:
        parts = [f"check {self.check}" if self.check else "all checks"]
        if self.action:
            parts.append(f"action {self.action}")
        if self.min_score is not None:
            parts.append(f"score >= {self.min_score:g}")
        if self.text:
            parts.append(f"text {self.text!r}")
        return ", ".join(parts)


def ordered_rows(review: Review, flt: Filter) -> list[int]:
    """Rows matching ``flt`` in severity order (see the module docstring)."""
    import polars as pl

    folder = review.folder
    f = review.findings(check=flt.check, action=flt.action)
    if flt.check is None:
        f = f.filter(pl.col("check") != "malformed_record")  # cannot be kept: nothing to review
    if flt.min_score is not None:
        f = f.filter(pl.col("score") >= float(flt.min_score))
    if f.height == 0:
        return []
    order = {name: i for i, name in enumerate(folder.checks)}
    ranked = (f.with_columns(pl.when(pl.col("action") == "drop").then(0).otherwise(1).alias("_act"),
                             pl.col("check").replace_strict(order, default=len(order)).alias("_chk"),
                             (-pl.col("score").fill_null(float("-inf"))).alias("_neg"))
              .sort(["row", "_act", "_chk", "_neg"]).group_by("row", maintain_order=True).first()
              .sort(["_act", "_chk", "_neg", "row"]))
    rows = [int(r) for r in ranked["row"].to_list()]
    if flt.text:
        rows = _with_text(review, rows, f, flt.text.lower())
    return rows


def _with_text(review: Review, rows: list[int], findings: pl.DataFrame, needle: str) -> list[int]:
    details: dict[int, str] = {}
    for r, d in findings.select("row", "detail").iter_rows():
        details[int(r)] = details.get(int(r), "") + " " + (d or "")
    pairs = review.folder.pairs(rows)
    out = []
    for r in rows:
        p = pairs.get(r)
        texts = [details.get(r, "")] + ([p.prompt or "", p.chosen or "", p.rejected or ""] if p else [])
        if any(needle in t.lower() for t in texts):
            out.append(r)
    return out


def dropping_checks(review: Review, rows: list[int]) -> dict[int, set[str]]:
    """Per row, the checks whose finding drops it in the scan (rows without a drop left out)."""
    import polars as pl

    f = review.folder.findings
    sub = f.filter((pl.col("action") == "drop") & pl.col("row").is_in(rows)).select("row", "check").unique()
    out: dict[int, set[str]] = {}
    for r, c in sub.iter_rows():
        out.setdefault(int(r), set()).add(str(c))
    return out


class Bulk(list):
    """The decisions one bulk call recorded (a list of Decision) plus ``held``: check -> rows the guard
    left as the scan had them (dropped), because keeping them needs ``force``."""

    def __init__(self, decisions: list[Decision], decision: str, held: dict[str, list[int]]) -> None:
        super().__init__(decisions)
        self.decision, self.held = decision, held

    @property
    def held_rows(self) -> list[int]:
        return sorted({r for rows in self.held.values() for r in rows})

    def __repr__(self) -> str:
        return self.message

    @property
    def message(self) -> str:
        """What the call did, as ``Undo.message`` says what an undo did."""
        text = f"{len(self)} rows recorded as {self.decision}"
        if self.held:
            per = ", ".join(f"{c} {len(rows)}" for c, rows in sorted(self.held.items()))
            text += (f"; {len(self.held_rows)} rows left dropped ({per}): the scan drops them; "
                     f"force=True (or force=[check, ...]) to {self.decision} them too")
        if not self:
            text += "; nothing recorded, so this was no action: undo() right after it takes nothing back"
        return text


def guard(review: Review, rows: list[int], decision: str, force: bool | list[str] | tuple[str, ...]
          ) -> tuple[list[int], dict[str, list[int]]]:
    """(rows to record, held: check -> rows) for a bulk ``decision``. ``keep`` / ``flip`` never re-admit a
    row a check drops unless ``force`` is True or names every dropping check of that row."""
    if decision not in KEEPING or force is True:
        return rows, {}
    allowed = set(force or ())
    drops = dropping_checks(review, rows)
    held: dict[str, list[int]] = {}
    keep: list[int] = []
    for r in rows:
        blocking = drops.get(r, set()) - allowed
        if blocking:
            for c in sorted(blocking):
                held.setdefault(c, []).append(r)
        else:
            keep.append(r)
    return keep, held


class ReviewQueue:
    """Rows to review, most severe first (see :meth:`Review.queue`). ``reviewed`` counts rows with a
    decision (made here or anywhere else); ``skip`` passes over a row for this session only."""

    def __init__(self, review: Review, flt: Filter) -> None:
        self.review, self.flt = review, flt
        self.rows: list[int] = ordered_rows(review, flt)
        self.skipped: set[int] = set()
        self.current: int | None = None

    @property
    def label(self) -> str:
        return self.flt.describe()

    @property
    def action(self) -> str | None:
        return self.flt.action

    def filter(self, check: str | None = None, action: str | None = None, min_score: float | None = None,
               text: str | None = None) -> ReviewQueue:
        """A new queue: this one's rows narrowed further (the filters add up)."""
        return ReviewQueue(self.review, self.flt.narrowed(check=check, action=action, min_score=min_score,
                                                          text=text))

    def table(self) -> pl.DataFrame:
        """The queue as a table in queue order: row, checks, actions, top score, decision."""
        import polars as pl

        pos = {r: i for i, r in enumerate(self.rows)}
        decided = self.review.decisions()
        f = self.review.folder.findings.filter(pl.col("row").is_in(self.rows))
        t = (f.group_by("row").agg(pl.col("check").unique().sort().str.join(", ").alias("checks"),
                                   pl.col("action").unique().sort().str.join("/").alias("actions"),
                                   pl.col("score").max().alias("score"))
             .with_columns(pl.col("row").replace_strict(pos, default=None).alias("_pos"),
                           pl.col("row").replace_strict({r: d.decision for r, d in decided.items()},
                                                        default=None, return_dtype=pl.Utf8).alias("decision")))
        return t.sort("_pos").drop("_pos")

    @property
    def total(self) -> int:
        return len(self.rows)

    def reviewed_rows(self) -> list[int]:
        decided = self.review.decisions()
        return [r for r in self.rows if r in decided]

    @property
    def reviewed(self) -> int:
        return len(self.reviewed_rows())

    @property
    def remaining(self) -> int:
        return self.total - self.reviewed

    def pending(self) -> list[int]:
        """Rows without a decision, in queue order (skipped rows last)."""
        decided = self.review.decisions()
        todo = [r for r in self.rows if r not in decided]
        return [r for r in todo if r not in self.skipped] + [r for r in todo if r in self.skipped]

    def next(self) -> Any:
        """The next unreviewed row's pair (None when every row has a decision)."""
        todo = self.pending()
        self.current = todo[0] if todo else None
        return None if self.current is None else self.review.pair(self.current)

    def skip(self, row: int | None = None) -> None:
        """Pass over ``row`` (default: the current one) until the others are done."""
        row = self.current if row is None else row_number(row)
        if row is not None:
            self.skipped.add(row)

    def decide(self, row: int | None, decision: str, note: str = "") -> Decision:
        row = self.current if row is None else row_number(row)
        if row is None:
            raise ConfigError("no current row: call next() first, or pass a row",
                              fix="queue.next(); queue.decide(None, 'drop'), or queue.decide(12, 'drop')")
        return self.review.decide(row, decision, note)

    def decide_rest(self, decision: str, note: str = "", force: bool | list[str] = False) -> Bulk:
        """The same decision for every row of this (filtered) queue without one yet. ``keep`` / ``flip``
        leave rows the scan drops as they are unless ``force`` (True, or the dropping checks' names)."""
        return self.review.decide_many(self.pending(), decision, note, force=force)

    def undo(self) -> Any:
        """Take back the last decision (or bulk decision) of this review session (see :meth:`Review.undo`)."""
        return self.review.undo()

    def __iter__(self) -> Any:
        """Unreviewed pairs, one at a time (decisions made in between are taken into account)."""
        seen: set[int] = set()
        while True:
            todo = [r for r in self.pending() if r not in seen]
            if not todo:
                return
            seen.add(todo[0])
            self.current = todo[0]
            yield self.review.pair(todo[0])

    def __len__(self) -> int:
        return self.remaining

    def __repr__(self) -> str:
        return f"ReviewQueue({self.label}: {self.reviewed}/{self.total} reviewed, {self.remaining} left)"

    def widget(self) -> Any:
        from pairaudit.review.widget import queue_widget

        return queue_widget(self)

    def _repr_html_(self) -> str:
        from html import escape

        return f"<div class='pa-muted'>{escape(repr(self))}</div>"


__all__ = ["DECISIONS", "Bulk", "Filter", "ReviewQueue", "guard", "ordered_rows"]

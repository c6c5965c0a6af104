"""Notebook review of a scan: browse findings, look at pairs side by side, record decisions.

>>> from pairaudit.review import Review
>>> rv = Review("pairaudit-out")
>>> rv.findings(check="near_identical_pair")          # polars DataFrame
>>> rv.pair(12)                                         # renders side by side in Jupyter
>>> rv.decide(12, "flip", note="rejected is clearly better")
>>> rv.apply()                                          # rewrite clean/dropped with the decisions

Many flagged rows: a queue walks the unreviewed ones, most severe first, and counts what is left.

>>> q = rv.queue(check="near_identical_pair")          # rows with that finding (any action)
>>> q.next()                                            # the next unreviewed pair (a PairView)
>>> q.decide(q.current, "keep"); q.skip(row)            # record, or pass over for this session
>>> q.widget()                                          # pair + keep/drop/flip/skip buttons, moves on
>>> rv.progress()                                       # reviewed / total per check (polars)
>>> rv.decide_many(rows, "drop", note="spam")           # one decision for many rows, one write

Decisions go to ``OUT/decisions.jsonl``, one JSON object per line: ``{"row", "decision", "note",
"pair_hash"}``; later lines win. ``pair_hash`` is the row's content hash from scores.parquet so a
decision whose source row has changed since is ignored when applied (listed under
``report.json`` ``decisions.ignored``). ``Decision`` and ``load_decisions`` live in
:mod:`pairaudit.decisions` and are re-exported here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pairaudit.decisions import (
    DECISIONS,
    FILENAME,
    Decision,
    append_decision,
    append_decisions,
    load_decisions,
)
from pairaudit.errors import ConfigError, InputError

if TYPE_CHECKING:
    import polars as pl

    from pairaudit.outputs.reader import OutputFolder

DECISIONS_FILE = FILENAME
__all__ = ["DECISIONS", "Decision", "PairView", "Review", "ReviewQueue", "load_decisions", "open_review"]


class Review:
    """Review helper over one output folder (see module docstring)."""

    def __init__(self, out_dir: str | Path, source: Any = None) -> None:
        """``source``: the in-memory object a scan read (a Dataset, DataFrame, list...), needed by
        :meth:`apply` for such scans; paths are taken from report.json."""
        from pairaudit.outputs.reader import OutputFolder

        self.out_dir = Path(out_dir)
        self.source = source
        self._folder: OutputFolder = OutputFolder.open(self.out_dir)
        self._tok: Any = None

    @property
    def decisions_path(self) -> Path:
        return self.out_dir / DECISIONS_FILE

    def reload(self) -> Review:
        """Re-read the output folder (after a rescan or apply)."""
        from pairaudit.outputs.reader import OutputFolder

        self._folder = OutputFolder.open(self.out_dir)
        return self

    @property
    def report(self) -> dict[str, Any]:
        return self._folder.report

    # -------------------------------------------------------------------- browsing
    def findings(self, check: str | None = None, action: str | None = None) -> pl.DataFrame:
        """Findings, optionally of one check and/or one action, ordered by check, score (desc), row."""
        import polars as pl

        df = self._folder.findings
        if check is not None:
            known = set(self._folder.checks)
            if check not in known:
                raise ConfigError(f"unknown check {check!r} in this scan", expected=", ".join(sorted(known)))
            df = df.filter(pl.col("check") == check)
        if action is not None:
            if action not in ("drop", "flag"):
                raise ConfigError(f"unknown action {action!r}", expected="drop | flag")
            df = df.filter(pl.col("action") == action)
        return df.sort(["check", "score", "row"], descending=[False, True, False], nulls_last=True)

    def pair(self, row: int) -> PairView:
        """The pair at ``row`` with its findings; displays side by side in Jupyter."""
        row = int(row)
        if not self._folder.has_row(row):
            raise InputError(f"row {row} is not in the scan at {self.out_dir}")
        return PairView(self, row)

    def decisions(self) -> dict[int, Decision]:
        """Decisions recorded so far (later lines win); {} when none."""
        if not self.decisions_path.exists():
            return {}
        return load_decisions(self.decisions_path)

    # -------------------------------------------------------------------- deciding
    def decide(self, row: int, decision: str, note: str = "") -> Decision:
        """Record ``keep`` (override drops), ``drop`` (reason "review") or ``flip`` (swap chosen and
        rejected) for ``row``; appended to decisions.jsonl and fsynced."""
        row = int(row)
        if decision not in DECISIONS:
            raise ConfigError(f"unknown decision {decision!r} for row {row}", expected=" | ".join(DECISIONS))
        if not self._folder.has_row(row):
            raise InputError(f"row {row} is not in the scan at {self.out_dir}",
                             fix="use a row number from review.findings() or scores.parquet")
        d = Decision(row=row, decision=decision, note=str(note), pair_hash=self._folder.pair_hash(row))
        append_decision(self.decisions_path, d)
        return d

    def decide_many(self, rows: Any, decision: str, note: str = "") -> list[Decision]:
        """Record the same decision for many rows (validated first, then one append and one fsync)."""
        rows = sorted({int(r) for r in rows})
        if decision not in DECISIONS:
            raise ConfigError(f"unknown decision {decision!r}", expected=" | ".join(DECISIONS))
        hashes = self._hashes(rows)
        missing = [r for r in rows if r not in hashes]
        if missing:
            raise InputError(f"row(s) {missing[:10]} are not in the scan at {self.out_dir}",
                             fix="use row numbers from review.findings() or scores.parquet")
        decisions = [Decision(row=r, decision=decision, note=str(note), pair_hash=hashes[r]) for r in rows]
        append_decisions(self.decisions_path, decisions)
        return decisions

    def _hashes(self, rows: list[int]) -> dict[int, str | None]:
        import polars as pl

        scores = self._folder.scores
        if scores is None or "row" not in scores.columns:
            return {r: None for r in rows if self._folder.has_row(r)}
        cols = ["row"] + (["pair_hash"] if "pair_hash" in scores.columns else [])
        sub = scores.select(cols).filter(pl.col("row").is_in(rows))
        return {int(r["row"]): r.get("pair_hash") for r in sub.iter_rows(named=True)}

    # -------------------------------------------------------------------- queues
    def queue(self, check: str | None = None, action: str | None = None) -> ReviewQueue:
        """The rows to review: with a finding of ``check`` (default: any check but
        ``malformed_record``, which cannot be kept) and/or ``action``, most severe first (the order of
        :meth:`findings`: by check, score descending, row)."""
        import polars as pl

        df = self.findings(check=check, action=action)
        if check is None:
            df = df.filter(pl.col("check") != "malformed_record")
        rows = list(dict.fromkeys(int(r) for r in df["row"].to_list()))
        return ReviewQueue(self, rows, check or "all checks", action)

    def progress(self) -> pl.DataFrame:
        """Per check: flagged rows, rows with a decision, rows left (plus a total over all checks)."""
        import polars as pl

        decided = set(self.decisions())
        f = self._folder.findings.select("row", "check").unique()
        per = (f.with_columns(pl.col("row").is_in(sorted(decided)).alias("reviewed"))
               .group_by("check").agg(pl.len().alias("rows"), pl.col("reviewed").sum().alias("reviewed")))
        rows = set(f.filter(pl.col("check") != "malformed_record")["row"].to_list())
        total = pl.DataFrame({"check": ["(all but malformed_record)"], "rows": [len(rows)],
                              "reviewed": [len(rows & decided)]})
        out = pl.concat([per.sort("check"), total], how="vertical_relaxed")
        return out.with_columns((pl.col("rows") - pl.col("reviewed")).alias("remaining"))

    def trainer_tokenizer(self) -> Any:
        """The scan's tokenizer with its truncation settings (for the trainer's view), loaded once."""
        if self._tok is None:
            from pairaudit.report.trainer_view import trainer_tokenizer

            self._tok = trainer_tokenizer(self.report)[0] or False
        return self._tok or None

    def apply(self, source: Any = None) -> Any:
        """Apply decisions.jsonl: rewrite clean/dropped (``pairaudit.api.apply_decisions``). A scan of
        an in-memory object needs it again (``source=`` here or in ``Review(out, source=...)``)."""
        from pairaudit.api import apply_decisions

        result = apply_decisions(self.out_dir, source=source if source is not None else self.source)
        self.reload()
        return result

    def __repr__(self) -> str:
        t = self._folder.totals
        return (f"Review({str(self.out_dir)!r}: {t.get('input', '?')} rows, {self._folder.findings.height} findings,"
                f" {len(self.decisions())} decisions)")


class PairView:
    """One pair for display: ``_repr_html_`` (escaped, side by side, word diff); with ipywidgets
    installed, Jupyter shows keep/drop/flip buttons under it."""

    def __init__(self, review: Review, row: int) -> None:
        from pairaudit.report.html import pair_context

        self.review, self.row = review, row
        folder = review._folder
        self.pair = folder.pairs([row]).get(row)
        self.findings: list[dict[str, Any]] = folder.row_findings(row)
        self.scores: dict[str, Any] = folder.row_scores(row)
        self._ctx = pair_context(folder, self.pair, row, trainer=review.trainer_tokenizer())

    def _repr_html_(self) -> str:
        from pairaudit.report.template import CSS, environment

        decision = self.review.decisions().get(self.row)
        return environment().get_template("review_pair.html").render(p=self._ctx, css=CSS, decision=decision)

    def __repr__(self) -> str:
        p = self.pair
        checks = ", ".join(sorted({f["check"] for f in self.findings})) or "no findings"
        if p is None or p.chosen is None or p.rejected is None:
            return f"<pair row {self.row}: {checks}; text not available>"
        return (f"<pair row {self.row}: {checks}\n  chosen:   {p.chosen[:100]!r}\n"
                f"  rejected: {p.rejected[:100]!r}>")

    def widget(self) -> Any:
        """An ipywidgets box with the pair and keep/drop/flip buttons (needs ``pairaudit[review]``)."""
        from pairaudit.errors import require

        w = require("ipywidgets", "review", "review buttons")
        html = w.HTML(self._repr_html_())
        note = w.Text(placeholder="note (optional)")
        status = w.HTML("")

        def make(decision: str) -> Any:
            button = w.Button(description=decision, tooltip=f"record '{decision}' for row {self.row}")

            def on_click(_: Any) -> None:
                self.review.decide(self.row, decision, note.value)
                status.value = f"recorded <b>{decision}</b> for row {self.row}"

            button.on_click(on_click)
            return button

        return w.VBox([html, w.HBox([make(d) for d in DECISIONS] + [note]), status])

    def _ipython_display_(self) -> None:
        _display(self, self.widget)


def _display(obj: Any, make_widget: Any) -> None:
    """The widget where ipywidgets is installed, with the static HTML in the same output so that
    notebook viewers without a widget manager (nbconvert, GitHub) still show the pair."""
    from IPython.display import display

    bundle = {"text/html": obj._repr_html_(), "text/plain": repr(obj)}
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        display(bundle, raw=True)
        return
    widget = make_widget()
    display({**bundle, **widget._repr_mimebundle_()}, raw=True)


class ReviewQueue:
    """Flagged rows still to review, in order (see :meth:`Review.queue`). ``reviewed`` counts rows of
    the queue with a decision in decisions.jsonl (made here or anywhere else); ``skip`` passes over a
    row for this session only."""

    def __init__(self, review: Review, rows: list[int], label: str, action: str | None = None) -> None:
        self.review, self.rows, self.label, self.action = review, rows, label, action
        self.skipped: set[int] = set()
        self.current: int | None = None

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

    def next(self) -> PairView | None:
        """The next unreviewed row's pair (None when every row has a decision)."""
        todo = self.pending()
        self.current = todo[0] if todo else None
        return None if self.current is None else self.review.pair(self.current)

    def skip(self, row: int | None = None) -> None:
        """Pass over ``row`` (default: the current one) until the others are done."""
        row = self.current if row is None else int(row)
        if row is not None:
            self.skipped.add(row)

    def decide(self, row: int | None, decision: str, note: str = "") -> Decision:
        row = self.current if row is None else int(row)
        if row is None:
            raise ConfigError("no current row: call next() first, or pass a row")
        return self.review.decide(row, decision, note)

    def decide_rest(self, decision: str, note: str = "") -> list[Decision]:
        """The same decision for every row of the queue that has none yet."""
        return self.review.decide_many(self.pending(), decision, note)

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
        what = self.label + (f", action {self.action}" if self.action else "")
        return f"ReviewQueue({what}: {self.reviewed}/{self.total} reviewed, {self.remaining} left)"

    def widget(self) -> Any:
        """Pair + keep/drop/flip/skip buttons and a note; each click records and moves to the next
        unreviewed row (needs ``pairaudit[review]``)."""
        from pairaudit.errors import require

        w = require("ipywidgets", "review", "review buttons")
        status, pair_html, note = w.HTML(), w.HTML(), w.Text(placeholder="note (optional)")
        buttons = {d: w.Button(description=d, tooltip=f"record '{d}' and go to the next row") for d in DECISIONS}
        buttons["skip"] = w.Button(description="skip", tooltip="next row without a decision")

        def show() -> None:
            view = self.next()
            done = view is None
            status.value = (f"<b>{self.label}</b>: {self.reviewed} of {self.total} reviewed"
                            + ("" if done else f" · row {self.current}"))
            pair_html.value = "<p>every row of this queue has a decision</p>" if done else view._repr_html_()
            for b in buttons.values():
                b.disabled = done

        def on(decision: str) -> Any:
            def click(_: Any) -> None:
                if self.current is None:
                    return
                if decision == "skip":
                    self.skip()
                else:
                    self.decide(self.current, decision, note.value)
                note.value = ""
                show()
            return click

        for d, b in buttons.items():
            b.on_click(on(d))
        show()
        return w.VBox([status, pair_html, w.HBox([*buttons.values(), note])])

    def _repr_html_(self) -> str:
        from html import escape

        return f"<div class='pa-muted'>{escape(repr(self))}</div>"


def open_review(out_dir: str | Path) -> Review:
    return Review(out_dir)

"""Notebook review of a scan: browse findings, look at pairs side by side, record decisions.

>>> from pairaudit.review import Review
>>> rv = Review("pairaudit-out")
>>> rv.findings(check="near_identical_pair")          # polars DataFrame
>>> rv.pair(12)                                         # renders side by side in Jupyter
>>> rv.decide(12, "flip", note="rejected is clearly better")
>>> rv.apply()                                          # rewrite clean/dropped with the decisions

Many flagged rows: a queue walks the unreviewed ones, most severe first (:mod:`pairaudit.review.queue`).

>>> q = rv.queue(action="flag").filter(check="length_outlier", min_score=4, text="sorry")
>>> q.next()                                            # the next unreviewed pair (a PairView)
>>> q.decide(q.current, "keep"); q.skip(row)            # record, or pass over for this session
>>> q.decide_rest("keep")                               # bulk: keeping rows the scan drops needs force=True
>>> rv.undo()                                           # take back exactly the last action
>>> q.widget()                                          # buttons, filters, keys k/d/f/s/u
>>> rv.merge("../ana/decisions.jsonl")                  # another reviewer's decisions; conflicts listed

Decisions go to ``OUT/decisions.jsonl`` (or ``decisions_file=``), an append-only log, one JSON object per
line: ``{"row", "decision", "note", "pair_hash", "reviewer", "time", "action"}``; later lines win, ``undo``
lines take back exactly the action they name (a bulk call that recorded nothing is no action).
``pair_hash`` is the row's content hash from scores.parquet so a decision whose source row has changed
since is ignored when applied (listed under ``report.json`` ``decisions.ignored``). ``Decision`` and
``load_decisions`` live in :mod:`pairaudit.decisions` and are re-exported here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pairaudit.decisions import (
    DECISIONS,
    UNDO,
    Decision,
    Merge,
    actions,
    append_decisions,
    final_decisions,
    load_decisions,
    merge_decisions,
    next_action,
    now,
    read_log,
    row_number,
)
from pairaudit.errors import ConfigError, InputError
from pairaudit.output_files import DECISIONS_FILE
from pairaudit.review.queue import Bulk, Filter, ReviewQueue, guard

if TYPE_CHECKING:
    import polars as pl

    from pairaudit.outputs.reader import OutputFolder

__all__ = ["DECISIONS", "Bulk", "Decision", "Merge", "PairView", "Review", "ReviewQueue", "Undo", "load_decisions"]


class Undo(list):
    """The undo lines one :meth:`Review.undo` wrote (a list of Decision; empty when it took nothing back)
    plus ``message``: what it took back, or why nothing."""

    def __init__(self, lines: list[Decision], message: str) -> None:
        super().__init__(lines)
        self.message = message

    def __repr__(self) -> str:
        return self.message


class Review:
    """Review the findings of one output folder and record decisions (keep / drop / flip) that ``pairaudit apply``
    and the next ``pairaudit scan`` read (see the module docstring).

    Args:
        out_dir: the scan's output folder.
        source: the source, when report.json's path is not readable from here.
        reviewer: recorded with every decision (default ``$PAIRAUDIT_REVIEWER``, else the login name).
        decisions_file: where decisions go (default ``OUT/decisions.jsonl``).

    Example:
        >>> import pairaudit, tempfile
        >>> from pairaudit.review import Review
        >>> out = tempfile.mkdtemp()
        >>> pairs = [{"prompt": "Hi", "chosen": "Hello!", "rejected": "Hello!"},
        ...          {"prompt": "Hi", "chosen": "Hello!", "rejected": "Go away."}]
        >>> _ = pairaudit.scan(pairs, out=out, only=["identical_pair"], quiet=True)
        >>> rv = Review(out, reviewer="me")
        >>> rv.decide(0, "keep").decision, sorted(rv.decisions())
        ('keep', [0])
        >>> _ = rv.undo(); rv.decisions()
        {}
    """

    def __init__(self, out_dir: str | Path, source: Any = None, reviewer: str | None = None,
                 decisions_file: str | Path | None = None) -> None:
        """``source``: the in-memory object a scan read (a Dataset, DataFrame, list...), needed by
        :meth:`apply` for such scans; paths are taken from report.json. ``reviewer``: the name written
        with every decision (default ``$PAIRAUDIT_REVIEWER``, else the login name). ``decisions_file``:
        where decisions go (default ``OUT/decisions.jsonl``, which ``apply`` and ``scan`` read)."""
        from pairaudit.outputs.reader import OutputFolder

        self.out_dir = Path(out_dir)
        self.source = source
        self.reviewer = reviewer if reviewer is not None else _default_reviewer()
        self._path = Path(decisions_file) if decisions_file is not None else self.out_dir / DECISIONS_FILE
        self._folder: OutputFolder = OutputFolder.open(self.out_dir)
        self._tok: Any = None
        self._session: list[int | None] = []  # this session's actions, newest last (None: recorded nothing)
        self._log_size, self._next_action = -1, 0

    @property
    def decisions_path(self) -> Path:
        return self._path

    def reload(self) -> Review:
        """Re-read the output folder (after a rescan or apply)."""
        from pairaudit.outputs.reader import OutputFolder

        self._folder = OutputFolder.open(self.out_dir)
        return self

    @property
    def report(self) -> dict[str, Any]:
        return self._folder.report

    @property
    def folder(self) -> OutputFolder:
        """The output folder read back (findings, scores, pairs)."""
        return self._folder

    # -------------------------------------------------------------------- browsing
    def findings(self, check: str | None = None, action: str | None = None) -> pl.DataFrame:
        """Findings, optionally of one check and/or one action, ordered by check, score (desc), row."""
        import polars as pl

        df = self._folder.findings
        if check is not None:
            known = set(self._folder.checks)
            if check not in known:
                raise ConfigError(f"unknown check {check!r} in this scan", expected=", ".join(sorted(known)),
                                  fix="pass one of the checks above, e.g. review.findings(check=" +
                                      repr(min(known) if known else "identical_pair") + ")")
            df = df.filter(pl.col("check") == check)
        if action is not None:
            if action not in ("drop", "flag"):
                raise ConfigError(f"unknown action {action!r}", expected="drop | flag",
                                  fix="review.findings(action='drop') or review.findings(action='flag')")
            df = df.filter(pl.col("action") == action)
        return df.sort(["check", "score", "row"], descending=[False, True, False], nulls_last=True)

    def pair(self, row: int) -> PairView:
        """The pair at ``row`` with its findings; displays side by side in Jupyter."""
        row = row_number(row)
        if not self._folder.has_row(row):
            raise InputError(f"row {row} is not in the scan at {self.out_dir}",
                             fix="use a row number from review.findings() or scores.parquet")
        return PairView(self, row)

    def decisions(self) -> dict[int, Decision]:
        """Decisions recorded so far (later lines win); {} when none."""
        if not self.decisions_path.exists():
            return {}
        return load_decisions(self.decisions_path)

    # -------------------------------------------------------------------- deciding
    def decide(self, row: int, decision: str, note: str = "") -> Decision:
        """Record ``keep`` (override drops), ``drop`` (reason "review") or ``flip`` (swap chosen and
        rejected) for ``row``; appended to decisions.jsonl and fsynced. ``row``: a whole number >= 0, checked
        as the decisions file checks it (3.7, "6", True, nan: a ConfigError)."""
        row = row_number(row)
        if decision not in DECISIONS:
            raise ConfigError(f"unknown decision {decision!r} for row {row}", expected=" | ".join(DECISIONS),
                              fix=f"review.decide({row}, 'drop') (or 'keep', 'flip')")
        if not self._folder.has_row(row):
            raise InputError(f"row {row} is not in the scan at {self.out_dir}",
                             fix="use a row number from review.findings() or scores.parquet")
        d = Decision(row=row, decision=decision, note=str(note), pair_hash=self._folder.pair_hash(row),
                     reviewer=self.reviewer, time=now(), action=self._new_action())
        self._record([d])
        return d

    def decide_many(self, rows: Any, decision: str, note: str = "", force: bool | list[str] = False) -> Bulk:
        """Record the same decision for many rows (validated first, then one append and one fsync).
        ``keep`` / ``flip`` leave rows the scan drops as they are (listed in the result's ``held``)
        unless ``force`` is True or names the checks that drop them."""
        if isinstance(rows, (str, bytes)) or not hasattr(rows, "__iter__"):  # "12" would be rows 1 and 2
            raise ConfigError(f"rows = {rows!r} is not a collection of row numbers", expected="a list of ints",
                              fix=f"review.decide_many([12, 40], {decision!r}) (or review.decide(12, {decision!r}))")
        rows = sorted({row_number(r, f"rows[{i}]") for i, r in enumerate(rows)})
        if decision not in DECISIONS:
            raise ConfigError(f"unknown decision {decision!r}", expected=" | ".join(DECISIONS),
                              fix="review.decide_many(rows, 'drop') (or 'keep', 'flip')")
        hashes = self._hashes(rows)
        missing = [r for r in rows if r not in hashes]
        if missing:
            raise InputError(f"row(s) {missing[:10]} are not in the scan at {self.out_dir}",
                             fix="use row numbers from review.findings() or scores.parquet")
        allowed, held = guard(self, rows, decision, force)
        if not allowed:  # not an action: nothing written, and undo() right after it takes nothing back
            self._session.append(None)
            return Bulk([], decision, held)
        t, action = now(), self._new_action()
        decisions = [Decision(row=r, decision=decision, note=str(note), pair_hash=hashes[r],
                              reviewer=self.reviewer, time=t, action=action) for r in allowed]
        self._record(decisions)
        return Bulk(decisions, decision, held)

    def undo(self) -> Undo:
        """Take back exactly the last action: this session's last decision or bulk decision (a bulk call
        that recorded nothing takes nothing back), else this reviewer's last action in the decisions file
        not yet undone. Appends ``undo`` lines naming that action, so each of its rows' previous decision
        (or none) holds again; the result is empty, with a message saying why, when nothing is taken back."""
        live = dict(actions(read_log(self.decisions_path), self.reviewer))
        while self._session:
            entry = self._session.pop()
            if entry is None:
                return Undo([], "nothing taken back: the last bulk decision recorded no row (undo again to take "
                                "back the action before it)")
            if entry in live:
                return self._take_back(entry, live[entry])
        if live:
            last = list(live)[-1]
            return self._take_back(last, live[last])
        return Undo([], f"nothing to undo: reviewer {self.reviewer!r} has no decision left to take back in "
                        f"{self.decisions_path}")

    def _take_back(self, action: int, lines: list[Decision]) -> Undo:
        t = now()
        undo = [Decision(row=d.row, decision=UNDO, reviewer=self.reviewer, time=t, action=action) for d in lines]
        self._record(undo)
        rows = ", ".join(str(d.row) for d in lines[:10]) + (", ..." if len(lines) > 10 else "")
        what = lines[0].decision
        return Undo(undo, f"took back {what} of row {rows}" if len(lines) == 1
                    else f"took back {what} of {len(lines)} rows ({rows})")

    def _sync(self) -> None:
        """Catch up with the decisions file's action numbers when it changed since this session last wrote it
        (another writer, or a session that starts with ``undo``)."""
        path = self.decisions_path
        size = path.stat().st_size if path.exists() else 0
        if size != self._log_size:
            self._next_action = max(self._next_action, next_action(read_log(path)))
            self._log_size = size

    def _new_action(self) -> int:
        """The next action number of the decisions file."""
        self._sync()
        self._next_action += 1
        return self._next_action - 1

    def _record(self, lines: list[Decision]) -> None:
        self._sync()  # before this write: what the file held is counted, whatever this session wrote first
        append_decisions(self.decisions_path, lines)
        self._log_size = self.decisions_path.stat().st_size
        if lines[0].decision != UNDO:
            self._session.append(lines[0].action)

    def merge(self, other: str | Path | Review) -> Merge:
        """Join another reviewer's decisions (a decisions file or a Review) into this one's file: rows
        only they decided are added, rows decided differently are listed as conflicts and left as here."""
        if isinstance(other, Review) and not other.decisions_path.exists():
            return Merge()  # a Review that has decided nothing yet
        path = other.decisions_path if isinstance(other, Review) else Path(other)
        return merge_decisions(self.decisions_path, path)  # a path that does not exist: an InputError

    def conflicts(self) -> list[dict[str, Any]]:
        """Rows of this decisions file on which reviewers' last decisions differ."""
        log = read_log(self.decisions_path)
        per = {name: final_decisions(log, name) for name in dict.fromkeys(d.reviewer for d in log)}
        rows = sorted({r for finals in per.values() for r in finals})
        out = []
        for r in rows:
            ds = [(name, finals[r]) for name, finals in per.items() if r in finals]
            if len({d.decision for _, d in ds}) > 1:
                out.append({"row": r, "decisions": [{"reviewer": n, "decision": d.decision, "note": d.note,
                                                     "time": d.time} for n, d in ds]})
        return out

    def _hashes(self, rows: list[int]) -> dict[int, str | None]:
        import polars as pl

        scores = self._folder.scores
        if scores is None or "row" not in scores.columns:
            return {r: None for r in rows if self._folder.has_row(r)}
        cols = ["row"] + (["pair_hash"] if "pair_hash" in scores.columns else [])
        sub = scores.select(cols).filter(pl.col("row").is_in(rows))
        return {int(r["row"]): r.get("pair_hash") for r in sub.iter_rows(named=True)}

    # -------------------------------------------------------------------- queues
    def queue(self, check: str | None = None, action: str | None = None, min_score: float | None = None,
              text: str | None = None) -> ReviewQueue:
        """The rows to review: with a finding of ``check`` (default: any check but
        ``malformed_record``, which cannot be kept), ``action``, score >= ``min_score``, and ``text`` in
        the pair or a finding's detail; most severe first (rows the scan drops, then by the checks' order,
        then score): :mod:`pairaudit.review.queue`."""
        return ReviewQueue(self, Filter(check=check, action=action, min_score=min_score, text=text))

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
        folder = review.folder
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

    def widget(self, with_pair: bool = True) -> Any:
        """An ipywidgets box with the pair (unless ``with_pair=False``) and keep/drop/flip buttons (needs
        ``pairaudit[review]``)."""
        from pairaudit.errors import require

        w = require("ipywidgets", "review", "review buttons")
        note = w.Text(placeholder="note (optional)")
        status = w.HTML("")

        def make(decision: str) -> Any:
            button = w.Button(description=decision, tooltip=f"record '{decision}' for row {self.row}")

            def on_click(_: Any) -> None:
                self.review.decide(self.row, decision, note.value)
                status.value = f"recorded <b>{decision}</b> for row {self.row}"

            button.on_click(on_click)
            return button

        controls = [w.HBox([make(d) for d in DECISIONS] + [note]), status]
        return w.VBox(([w.HTML(self._repr_html_())] if with_pair else []) + controls)

    def _ipython_display_(self) -> None:
        _display(self, lambda: self.widget(with_pair=False))


def _display(obj: Any, make_controls: Any) -> None:
    """The pair as static HTML (one output: every viewer shows it, nbconvert and GitHub included), then,
    where ipywidgets is installed, the buttons as a second output (a widget output holding the pair
    would show blank in a static export: viewers prefer the widget view and have no widget state)."""
    from IPython.display import display

    display({"text/html": obj._repr_html_(), "text/plain": repr(obj)}, raw=True)
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return
    display(make_controls())


def _default_reviewer() -> str:
    import getpass
    import os

    try:
        return os.environ.get("PAIRAUDIT_REVIEWER") or getpass.getuser()
    except (KeyError, OSError):  # no login name (some containers)
        return ""

"""Notebook review of a scan: browse findings, look at pairs side by side, record decisions.

>>> from pairaudit.review import Review
>>> rv = Review("pairaudit-out")
>>> rv.findings(check="near_identical_pair")          # polars DataFrame
>>> rv.pair(12)                                         # renders side by side in Jupyter
>>> rv.decide(12, "flip", note="rejected is clearly better")
>>> rv.apply()                                          # rewrite clean/dropped with the decisions

Decisions go to ``OUT/decisions.jsonl``, one JSON object per line: ``{"row", "decision", "note",
"pair_hash"}``; later lines win. ``pair_hash`` is the row's content hash from scores.parquet so a
decision whose source row has changed since is ignored when applied (listed under
``report.json`` ``decisions.ignored``). ``Decision`` and ``load_decisions`` live in
:mod:`pairaudit.decisions` and are re-exported here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pairaudit.decisions import DECISIONS, FILENAME, Decision, append_decision, load_decisions
from pairaudit.errors import ConfigError, InputError

if TYPE_CHECKING:
    import polars as pl

    from pairaudit.report.data import OutputFolder

DECISIONS_FILE = FILENAME
__all__ = ["DECISIONS", "Decision", "PairView", "Review", "load_decisions", "open_review"]


class Review:
    """Review helper over one output folder (see module docstring)."""

    def __init__(self, out_dir: str | Path) -> None:
        from pairaudit.report.data import OutputFolder

        self.out_dir = Path(out_dir)
        self._folder: OutputFolder = OutputFolder.open(self.out_dir)

    @property
    def decisions_path(self) -> Path:
        return self.out_dir / DECISIONS_FILE

    def reload(self) -> Review:
        """Re-read the output folder (after a rescan or apply)."""
        from pairaudit.report.data import OutputFolder

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

    def apply(self) -> Any:
        """Apply decisions.jsonl: rewrite clean/dropped (``pairaudit.api.apply_decisions``)."""
        from pairaudit.api import apply_decisions

        result = apply_decisions(self.out_dir)
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
        self._ctx = pair_context(folder, self.pair, row)

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
        from IPython.display import display

        try:
            import ipywidgets  # noqa: F401
        except ImportError:
            display({"text/html": self._repr_html_(), "text/plain": repr(self)}, raw=True)
            return
        display(self.widget())


def open_review(out_dir: str | Path) -> Review:
    return Review(out_dir)

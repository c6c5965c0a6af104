"""The whole-dataset stage base class: observe every batch, keep compact per-row data, finalize."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from pairaudit.checks.base import CheckInfo
from pairaudit.datatypes import Finding, Pair, StageResult
from pairaudit.stages.contract import check_stage_class
from pairaudit.stages.state import Kind

if TYPE_CHECKING:
    from pairaudit.config import Context
    from pairaudit.trainer.tokenizer import EncodedPair


class Stage:
    """A whole-dataset stage. It sees every pair that survived the per-pair drops, batch by batch,
    keeps only compact per-row data, and computes its findings in ``finalize``.

    ``infos`` lists the checks the stage produces (a stage may produce several, e.g. exact
    ``duplicate_pair`` and ``contradictory_pair`` come from one hashing stage). ``enabled`` is the
    subset of those check names the user asked for. Findings are made with ``info.finding(...)``,
    score columns named ``info.score_key``, thresholds read with ``self.params(info)``.

    Optional hooks, with defaults that do nothing: ``not_applicable`` (a stage that cannot apply to
    this source is off, not failed), ``set_findings`` (called before ``finalize`` when
    ``reads_findings``), ``refines`` (checks of other modules it adds findings to).
    """

    infos: ClassVar[tuple[CheckInfo, ...]]
    #: checks this stage adds findings to but that do not, on their own, start it (e.g. the embedding stage
    #: adds near contradictions and the embedding view of near_identical_pair only when near-duplicate
    #: search runs anyway); their findings are kept when the user enabled them
    refines: ClassVar[frozenset[str]] = frozenset()
    #: True: ``set_findings`` is called before ``finalize`` with the findings of the stages finalized
    #: before this one (e.g. split_leakage reads the near_duplicate_pair groups)
    reads_findings: ClassVar[bool] = False
    #: what ``observe`` keeps, declared once: ``{attribute: kind}`` with the kinds of :mod:`.state` (``Column``:
    #: per-row arrays, ``Columns``, ``Count``, ``Items``, ``Tally``). The base class creates these attributes,
    #: exports and merges them (the worker pool and the Ray engine run ``observe`` in other processes), and a
    #: class whose ``observe`` changes an undeclared attribute fails when it is defined (:mod:`.contract`).
    state: ClassVar[dict[str, Kind]]
    #: attributes ``observe`` may change that stay in each process and are never merged: lazily loaded models,
    #: caches, spill files
    local: ClassVar[tuple[str, ...]] = ()
    #: the state attribute holding each row's number (a ``Column`` of int64), when the stage keeps one
    rows_attr: ClassVar[str] = "_rows"
    #: True: the stage runs models (an embedder, a reference model); the Ray engine puts its actors on GPUs
    uses_models: ClassVar[bool] = False
    #: how the Ray engine spreads ``finalize`` over the cluster (the same code runs in every engine):
    #: ``"hash"``: every state attribute is a per-row ``Column`` and rows with equal ``partition_key``
    #: values (a 2-D column: its first column) must meet, so ``finalize`` on one hash partition of the rows
    #: gives exactly that partition's findings and scores (a stage with ``set_findings`` is cut once earlier
    #: stages' findings are known; ``partition_aliases(findings)`` names rows whose keys must share a
    #: partition; ``merge_partition_stats`` merges the partitions' statistics when adding them up is wrong);
    #: ``"summary"``: ``summary()`` (small, merged with ``merge_summaries``) is all ``finalize(summary)`` needs
    #: besides the instance's own rows, so each shard scores its rows where they are; ``"cells"``: the
    #: near-duplicate stage's phases (``stages/near_duplicates/cells.py``: cell groups searched and verified on
    #: the workers, edges to the driver); ``"sample"``: ``fit(model)`` fits on a bounded seeded sample on one
    #: worker and ``apply(model)`` scores every other row where it is (the flip stage); ``None``: the state goes
    #: to the driver, which finalizes.
    distribute: ClassVar[str | None] = None
    partition_key: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        check_stage_class(cls, Stage)

    def __init__(self, ctx: Context, enabled: set[str]) -> None:
        self.ctx = ctx
        self.enabled = enabled
        for name, kind in self.state.items():
            setattr(self, name, kind.empty())

    @classmethod
    def not_applicable(cls, ctx: Context) -> str | None:
        """Why the stage cannot apply to this source (e.g. one split only), or None when it can."""
        return None

    def params(self, info: CheckInfo) -> dict[str, Any]:
        """The thresholds of one of this stage's checks in this run."""
        return info.params(self.ctx.params)

    def set_findings(self, findings: list[Finding], ran: set[str]) -> None:
        """Findings of the stages finalized before this one; ``ran``: checks that ran to completion.
        Called only when ``reads_findings``."""

    def export_state(self) -> dict[str, Any]:
        """Hand over (and reset) what ``observe`` accumulated since the last call."""
        out = {}
        for name, kind in self.state.items():
            out[name] = getattr(self, name)
            setattr(self, name, kind.empty())
        return out

    def absorb_state(self, part: dict[str, Any]) -> None:
        """Merge a state exported by another instance of this stage (in row order)."""
        for name, value in part.items():
            setattr(self, name, self.state[name].merge(getattr(self, name), value))

    @classmethod
    def take_rows(cls, state: dict[str, Any], idx: np.ndarray | None) -> dict[str, Any]:
        """An exported ``state`` restricted to the rows ``idx`` (positions in its row order; None: every row),
        each per-row column as one array; values that are not per row as they are."""
        return {name: cls.state[name].take(value, idx) for name, value in state.items()}

    @classmethod
    def row_numbers(cls, state: dict[str, Any]) -> np.ndarray:
        """The row numbers of an exported ``state`` (``rows_attr``), in its order."""
        parts = state.get(cls.rows_attr) or []
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)

    def with_state(self, state: dict[str, Any]) -> Stage:
        """A copy of this stage (same settings and models) holding ``state`` instead of its own."""
        clone = copy.copy(self)
        for name, kind in self.state.items():
            setattr(clone, name, state.get(name, kind.empty()))
        clone.fresh_local()
        return clone

    def fresh_local(self) -> None:
        """Give this instance its own per-process helpers (``local``) after a copy; default: nothing to do."""

    def one_process_reason(self) -> str | None:
        """Why this stage needs every batch observed in the main process (None: workers may observe)."""
        return None

    def on_partition(self) -> None:
        """This instance finalizes one hash partition of the rows (``distribute = "hash"``); default: nothing
        changes."""

    def in_worker(self) -> None:
        """This instance observes in a pool worker; the main process holds the stage's models (default: nothing
        changes)."""

    def spill_every_batch(self) -> None:
        """A stage that spills its columns (stages/spill.py) moves them to disk after every batch from now on (a
        Ray shard actor: its shards' columns never stay in memory); default: nothing to do."""

    def export_spilled(self) -> tuple[dict[str, Any], Any]:
        """``export_state``, with the columns this stage spilled left on disk: each a one-part list holding the
        column's read-only view (``Spill.hand_over``); returns the state and the ``Spill`` owning the files (None:
        nothing spilled), which the caller closes when it is done with the state.

        Returns:
            (state, spill or None).
        """
        return self.export_state(), None

    def release(self) -> None:
        """Free what finalizing held (temporary files); called by engines after ``fit`` / ``apply``."""

    def fit(self, model: dict[str, Any], totals: dict[str, Any] | None = None) -> StageResult:
        """``distribute = "sample"``: finalize on the rows held (a sample) and put what ``apply`` needs in ``model``;
        ``totals``: ``sample_totals`` of every shard's ``sample_summary``."""
        raise NotImplementedError

    @classmethod
    def sample_summary(cls, state: dict[str, Any]) -> dict[str, Any]:
        """``distribute = "sample"``: what the driver needs of one shard's exported state (at least ``n``, its rows)."""
        return {"n": len(cls.row_numbers(state))}

    @staticmethod
    def sample_totals(summaries: list[dict[str, Any]]) -> dict[str, Any] | None:
        """``distribute = "sample"``: the shards' summaries combined for ``fit`` (None: ``fit`` needs nothing)."""
        return None

    def apply(self, model: dict[str, Any]) -> StageResult:
        """``distribute = "sample"``: score the rows held with a ``model`` that ``fit`` filled elsewhere."""
        raise NotImplementedError

    def observe(self, pairs: list[Pair], encoded: list[EncodedPair] | None) -> None:
        raise NotImplementedError

    def finalize(self) -> StageResult:
        raise NotImplementedError


"""The whole-dataset stage base class: observe every batch, keep compact per-row data, finalize."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pairaudit.checks.base import CheckInfo
from pairaudit.datatypes import Finding, Pair, StageResult

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
    #: attributes holding what ``observe`` accumulates (lists of per-batch arrays, dicts of such
    #: lists or of counters, numbers). Engines that run ``observe`` elsewhere (the Ray engine, in
    #: actors) ship them to the driver with ``export_state`` and merge them with ``absorb_state``.
    state_attrs: ClassVar[tuple[str, ...]] = ()
    #: how the Ray engine spreads ``finalize`` over the cluster (the same code runs in both engines):
    #: ``"hash"``: every attribute in ``state_attrs`` is a list of row-aligned arrays and rows with equal
    #: ``partition_key`` values (a 2-D column: its first column) must meet, so ``finalize`` on one hash
    #: partition of the rows gives exactly that partition's findings and scores (a stage with
    #: ``set_findings`` is cut once earlier stages' findings are known; ``partition_aliases(findings)``
    #: names rows whose keys must share a partition; ``merge_partition_stats`` merges the partitions'
    #: statistics when adding them up is wrong); ``"summary"``: ``summary()`` (small, merged with
    #: ``merge_summaries``) is all ``finalize(summary)`` needs besides the instance's own rows, so each
    #: shard scores its rows where they are; ``"cells"``: the near-duplicate stage's phases
    #: (``stages/near_duplicates/cells.py``: cell groups searched and verified on the workers, edges to the
    #: driver); ``"sample"``: ``_finalize(model)`` fits on a bounded seeded sample on one worker and
    #: ``apply(model)`` scores every other row where it is (the flip stage); ``None``: the state goes to the
    #: driver, which finalizes.
    distribute: ClassVar[str | None] = None
    partition_key: ClassVar[str | None] = None

    def __init__(self, ctx: Context, enabled: set[str]) -> None:
        self.ctx = ctx
        self.enabled = enabled

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
        for name in self.state_attrs:
            value = getattr(self, name)
            out[name] = value
            setattr(self, name, type(value)())
        return out

    def absorb_state(self, part: dict[str, Any]) -> None:
        """Merge a state exported by another instance of this stage (in row order)."""
        for name, value in part.items():
            setattr(self, name, _merge(getattr(self, name), value))

    def observe(self, pairs: list[Pair], encoded: list[EncodedPair] | None) -> None:
        raise NotImplementedError

    def finalize(self) -> StageResult:
        raise NotImplementedError


def _merge(current: Any, new: Any) -> Any:
    if isinstance(current, list):
        return current + list(new)
    if isinstance(current, dict):
        out = dict(current)
        for k, v in new.items():
            out[k] = _merge(out[k], v) if k in out else v
        return out
    return current + new

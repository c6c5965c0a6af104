"""Check metadata and the per-pair check base class (the whole-dataset stage base: :mod:`pairaudit.stages.base`).

A check's ``name`` is its contract: the CLI value (``--drop NAME``), the config key, the findings
``check`` value, the ``<name>_score`` column and the report section. Everything else about a check is
declared once, in its :class:`CheckInfo`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pairaudit.datatypes import Finding, Pair

if TYPE_CHECKING:
    from pairaudit.trainer.tokenizer import DPOTokenizer, EncodedPair


@dataclass(frozen=True)
class CheckInfo:
    """Everything about one check, declared once: the CLI, the config file, the plan, the outputs, the
    report and ``pairaudit checks`` read it from here."""

    name: str
    description: str  # the full description (``pairaudit checks --verbose``, report.json, the report)
    default_action: str  # "drop" | "flag"
    thresholds: dict[str, Any] = field(default_factory=dict)  # defaults of ``--set NAME.KEY=VALUE``
    kind: str = "pair"  # "pair" (streaming) | "global" (stage over the whole dataset)
    # optional extra needed to run it (None = base install); see MissingDependency
    extra: str | None = None
    # on by default? (expensive model-based checks are opt-in)
    default_enabled: bool = True
    why: str = ""  # why the default action is what it is
    # set: a finding on the rejected side only flags under the default action (the check reports the side, the
    # plan sets the action); the words say why, e.g. "a looping rejected reply is a useful negative"
    rejected_negative: str = ""
    summary: str = field(kw_only=True)  # one short line for the compact ``pairaudit checks`` list

    @property
    def score_key(self) -> str:
        """The check's column in scores.parquet."""
        return f"{self.name}_score"

    def finding(self, row: int, field: str | None = None, score: float | None = None, group: int | None = None,
                detail: str = "", *, unsure: bool = False, mild: str = "") -> Finding:
        """A finding of this check (its action is set by the plan afterwards: ``unsure`` at most a flag,
        ``mild`` a flag unless the user set the check's action, the words saying why)."""
        return Finding(row, self.name, field, score, group, detail, unsure=unsure, mild=mild)

    def params(self, resolved: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
        """This check's thresholds in a run: the declared defaults, overridden by ``resolved[name]`` (the
        plan's values: defaults < config file < ``--set``; a bare Context has none)."""
        return {**self.thresholds, **resolved.get(self.name, {})}


class PairCheck:
    """A streaming per-pair check: one method, called for every well-formed pair.

    ``check`` appends findings (``self.finding(pair.row, field, score, detail=...)``) to ``out`` and returns
    per-row metrics (column -> value, e.g. ``{self.info.score_key: score}``) that go to ``scores.parquet``.
    ``self.params`` are the resolved thresholds (the declared defaults overridden by the run's values).
    ``self.enabled`` names the run's enabled checks, so a check can leave a cause to the check that names
    it better (empty: none known, the check reports everything it sees).
    """

    info: ClassVar[CheckInfo]

    enabled: frozenset[str] = frozenset()

    def __init__(self, params: Mapping[str, Any] | None = None, tok: DPOTokenizer | None = None) -> None:
        self.params = self.info.params({self.info.name: params or {}})
        self.tok = tok

    def finding(self, row: int, field: str | None = None, score: float | None = None, group: int | None = None,
                detail: str = "", *, mild: str = "") -> Finding:
        return self.info.finding(row, field, score, group, detail, mild=mild)

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> dict[str, float] | None:
        raise NotImplementedError


INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad"


def is_blank(text: str | None) -> bool:
    """Empty, whitespace-only or invisible-only (zero-width spaces, BOM, soft hyphen)."""
    return text is None or not text.strip().strip(INVISIBLE).strip()


def text_sides(pair: Pair) -> tuple[tuple[str, str | None], ...]:
    return (("prompt", pair.prompt), ("chosen", pair.chosen), ("rejected", pair.rejected))

"""Check metadata and the per-pair check base class (the whole-dataset stage base: :mod:`pairaudit.stages.base`).

A check's ``name`` is its contract: the CLI value (``--drop NAME``), the config key, the findings
``check`` value, the ``<name>_score`` column and the report section.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pairaudit.datatypes import Finding, Pair

if TYPE_CHECKING:
    from pairaudit.trainer.tokenizer import DPOTokenizer, EncodedPair


@dataclass(frozen=True)
class CheckInfo:
    name: str
    description: str
    default_action: str  # "drop" | "flag"
    thresholds: dict[str, Any] = field(default_factory=dict)
    kind: str = "pair"  # "pair" (streaming) | "global" (stage over the whole dataset)
    # optional extra needed to run it (None = base install); see MissingDependency
    extra: str | None = None
    # on by default? (expensive model-based checks are opt-in)
    default_enabled: bool = True
    why: str = ""  # why the default action is what it is


class PairCheck:
    """A streaming per-pair check: one method, called for every well-formed pair.

    ``check`` appends findings to ``out`` and returns per-row metrics (column -> value) that go to
    ``scores.parquet``. ``params`` are the resolved thresholds (defaults overridden by config).
    """

    info: ClassVar[CheckInfo]

    def __init__(self, params: dict[str, Any], tok: DPOTokenizer | None = None) -> None:
        self.params = params
        self.tok = tok

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> dict[str, float] | None:
        raise NotImplementedError


INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad"


def is_blank(text: str | None) -> bool:
    """Empty, whitespace-only or invisible-only (zero-width spaces, BOM, soft hyphen)."""
    return text is None or not text.strip().strip(INVISIBLE).strip()


def text_sides(pair: Pair) -> tuple[tuple[str, str | None], ...]:
    return (("prompt", pair.prompt), ("chosen", pair.chosen), ("rejected", pair.rejected))

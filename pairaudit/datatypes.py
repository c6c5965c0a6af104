"""Core data types shared by readers, checks, stages and writers.

``Pair`` is the canonical, format-independent view of one preference record. ``Finding`` is one
row of ``findings.parquet`` (see docs/contract.md). ``StageResult`` is what a whole-dataset stage
returns after it has observed every batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Messages = list[dict[str, Any]]


@dataclass(slots=True)
class Pair:
    """One preference pair in canonical form.

    ``prompt``/``chosen``/``rejected`` are always plain text: for conversational data they hold the
    text of the turns (used for hashing, similarity and embeddings); the messages themselves are kept
    in ``*_messages`` so the tokenizer can apply its chat template. For pre-tokenized data the text
    fields are ``None`` and the ids live in ``ids``.
    """

    row: int
    format: str
    prompt: str | None
    chosen: str | None
    rejected: str | None
    prompt_messages: Messages | None = None
    chosen_messages: Messages | None = None
    rejected_messages: Messages | None = None
    # pre-tokenized columns, e.g. {"chosen_input_ids": [...], "chosen_attention_mask": [...]}
    ids: dict[str, list[int]] | None = None
    # problems found while normalising (e.g. implicit-prompt histories that differ)
    notes: dict[str, str] = field(default_factory=dict)
    # content digests of (prompt, chosen, rejected), computed once by hashing.side_digests
    digests: tuple[bytes, bytes, bytes] | None = None

    @property
    def conversational(self) -> bool:
        return self.chosen_messages is not None

    @property
    def pretokenized(self) -> bool:
        return self.ids is not None


@dataclass(slots=True)
class Finding:
    """One finding; ``action`` is filled in by the policy after all checks ran."""

    row: int
    check: str
    field: str | None = None
    score: float | None = None
    group: int | None = None
    detail: str = ""
    action: str = "flag"
    # the rule was unsure (e.g. a similarity between the copy threshold and the band below it): at most a flag
    unsure: bool = False
    # why this finding only flags under the check's default action (repairable mojibake, a fault of the rejected
    # side alone that makes a useful negative); ``--drop CHECK`` or a config action drops it all the same
    mild: str = ""


@dataclass
class StageResult:
    """Output of a whole-dataset stage.

    ``scores`` maps column name -> list/array aligned with ``rows`` (row numbers, int64). Column names
    of check scores follow ``<check>_score``. ``stats`` is free-form JSON-able data for report.json and
    must be the same for the same input and config; run-specific figures (seconds, cache hit counters)
    go to ``timings`` instead, which the scanner merges into timings.json.
    """

    findings: list[Finding] = field(default_factory=list)
    rows: Any = None  # row numbers (list or int64 array) aligned with scores
    scores: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

"""The registry: every check by name, in report order, with the class that computes it.

Stages from optional extras are named by import path and imported only when they run, so listing
checks (``pairaudit checks``) needs no torch. Their modules must not import heavy packages at top level.
"""

from __future__ import annotations

import importlib
from typing import Any

from pairaudit.checks import (
    empty,
    encoding,
    identical,
    length,
    malformed,
    mismatch,
    padding,
    repetition,
    trainer,
    vocab,
)
from pairaudit.checks.base import CheckInfo, PairCheck, Stage
from pairaudit.errors import ConfigError

PAIR_CHECKS: tuple[type[PairCheck], ...] = (
    empty.EmptyPrompt, empty.EmptyResponse, padding.AllPadding, vocab.OutOfVocab, encoding.EncodingError,
    length.TooLong, trainer.DroppedByTrainer, length.TruncationIdentical, identical.IdenticalPair,
    identical.NearIdenticalPair, repetition.DegenerateRepetition, mismatch.PromptMismatch,
)
# whole-dataset stages, run in this order
STAGE_PATHS: tuple[str, ...] = (
    "pairaudit.stages.exact:ExactStage",
    "pairaudit.stages.lengths:LengthStage",
    "pairaudit.stages.near_duplicates:NearDuplicateStage",
    "pairaudit.stages.preference_graph:PreferenceGraphStage",  # after near duplicates: their groups join nodes
    "pairaudit.stages.flips:FlipStage",
    "pairaudit.stages.leakage:SplitLeakageStage",  # after near duplicates: it reads their findings
)

# checks a stage refines but that do not, on their own, start it (e.g. the embedding stage adds near
# contradictions only when near-duplicate search runs anyway)
SHARED_CHECKS: dict[str, frozenset[str]] = {
    "NearDuplicateStage": frozenset({"contradictory_pair", "near_identical_pair"}),
}


def load_stage(path: str) -> type[Stage] | None:
    mod, _, cls = path.partition(":")
    try:
        return getattr(importlib.import_module(mod), cls)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("pairaudit"):
            return None  # stage not part of this build
        raise


def stage_classes() -> list[type[Stage]]:
    return [c for c in (load_stage(p) for p in STAGE_PATHS) if c is not None]


def all_checks() -> dict[str, CheckInfo]:
    """name -> CheckInfo in report order. A stage may refine a check another one also emits (e.g.
    near contradictions); the first definition wins for the description and defaults."""
    out: dict[str, CheckInfo] = {"malformed_record": malformed.INFO}
    for cls in PAIR_CHECKS:
        out.setdefault(cls.info.name, cls.info)
    for st in stage_classes():
        for info in st.infos:
            out.setdefault(info.name, info)
    return out


def merged_thresholds(name: str) -> dict[str, Any]:
    """Defaults of every definition of a check (a stage may add thresholds for a shared name)."""
    params: dict[str, Any] = {}
    for st in stage_classes():
        for info in st.infos:
            if info.name == name:
                params = {**info.thresholds, **params}
    params = {**params, **all_checks()[name].thresholds}
    return params


def check_names() -> list[str]:
    return list(all_checks())


def validate_names(names: list[str] | None, option: str) -> list[str]:
    known = all_checks()
    for n in names or []:
        if n not in known:
            raise ConfigError(f"{option} names unknown check {n!r}", expected=f"one of: {', '.join(known)}",
                              fix="run `pairaudit checks` to list them")
    return list(names or [])

"""The stage registry: every whole-dataset stage by import path, in run order.

Stages from optional extras are named by import path and imported only when they run, so listing
checks (``pairaudit checks``) needs no torch. Their modules must not import heavy packages at top level.
"""

from __future__ import annotations

import importlib

from pairaudit.stages.base import Stage

# whole-dataset stages, run in this order
STAGE_PATHS: tuple[str, ...] = (
    "pairaudit.stages.exact:ExactStage",
    "pairaudit.stages.lengths:LengthStage",
    "pairaudit.stages.near_duplicates.stage:NearDuplicateStage",
    "pairaudit.stages.preference_graph:PreferenceGraphStage",  # after near duplicates: their groups join nodes
    "pairaudit.stages.flips.stage:FlipStage",
    "pairaudit.stages.leakage:SplitLeakageStage",  # after near duplicates: it reads their findings
)


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

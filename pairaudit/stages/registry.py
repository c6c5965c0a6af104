"""The stage registry: every whole-dataset stage by import path, in run order.

Stages from optional extras are named by import path and imported only when they run, so listing
checks (``pairaudit checks``) needs no torch. Their modules must not import heavy packages at top level.

A stage of your own package runs without editing pairaudit: name it in the environment variable
``PAIRAUDIT_STAGES`` (``"my_pkg.stages:MyStage"``, several separated by commas); it runs after the built-in
stages, in every engine (worker processes and Ray workers started from this environment inherit it).
"""

from __future__ import annotations

import importlib
import os

from pairaudit.errors import ConfigError
from pairaudit.schema import did_you_mean
from pairaudit.stages.base import Stage
from pairaudit.stages.contract import StageDeclarationError

#: extra stages by import path, comma separated (your own package's stages)
ENV_VAR = "PAIRAUDIT_STAGES"

# whole-dataset stages, run in this order
STAGE_PATHS: tuple[str, ...] = (
    "pairaudit.stages.exact:ExactStage",
    "pairaudit.stages.lengths:LengthStage",
    "pairaudit.stages.near_duplicates.stage:NearDuplicateStage",
    "pairaudit.stages.preference_graph:PreferenceGraphStage",  # after near duplicates: their groups join nodes
    "pairaudit.stages.flips.stage:FlipStage",
    "pairaudit.stages.leakage:SplitLeakageStage",  # after near duplicates: it reads their findings
)


def stage_paths() -> tuple[str, ...]:
    """The built-in stages, then those named in ``PAIRAUDIT_STAGES``, in run order."""
    extra = [p.strip() for p in os.environ.get(ENV_VAR, "").split(",") if p.strip()]
    for p in extra:
        if p.count(":") != 1:
            raise ConfigError(f"{ENV_VAR} names {p!r}, not a stage's import path",
                              expected="module:Class, e.g. my_pkg.stages:MyStage (several: comma separated)",
                              fix=f"set {ENV_VAR} to module:Class paths, or unset it")
    return tuple(dict.fromkeys((*STAGE_PATHS, *extra)))


def load_stage(path: str) -> type[Stage] | None:
    """The stage class at ``path`` (``module:Class``); None when a built-in stage is not part of this build."""
    mod, _, cls = path.partition(":")
    try:
        module = importlib.import_module(mod)
    except StageDeclarationError as exc:  # a stage class declared wrongly: a usage error, said as one
        raise ConfigError(f"stage {path!r} cannot run: {exc}",
                          fix="correct the class's declaration (docs/layout.md, \"Adding a stage\")") from exc
    except ModuleNotFoundError as exc:
        if path not in STAGE_PATHS:
            raise ConfigError(f"stage {path!r} ({ENV_VAR}) cannot be imported: {exc}",
                              fix=f"install the package that holds it, or remove it from {ENV_VAR}") from exc
        if exc.name and exc.name.startswith("pairaudit"):
            return None  # stage not part of this build
        raise
    loaded = getattr(module, cls, None)
    if loaded is None:
        classes = [n for n, v in vars(module).items() if isinstance(v, type) and issubclass(v, Stage) and v is not Stage]
        raise ConfigError(f"stage {path!r}: module {mod!r} has no {cls!r}{did_you_mean(cls, classes)}",
                          expected=f"one of its stage classes: {', '.join(classes) or 'none'}",
                          fix=f"correct the class name in {ENV_VAR}")
    if not (isinstance(loaded, type) and issubclass(loaded, Stage)):
        raise ConfigError(f"{path!r} is not a Stage subclass (found {loaded!r})",
                          fix=f"name a subclass of pairaudit.stages.base.Stage in {ENV_VAR}")
    return loaded


def stage_classes() -> list[type[Stage]]:
    """Every registered stage class of this build, in run order."""
    return [c for c in (load_stage(p) for p in stage_paths()) if c is not None]

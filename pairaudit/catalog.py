"""Every check by name, in report order: the per-pair checks, then the whole-dataset stages' checks."""

from __future__ import annotations

from typing import Any

from pairaudit.checks import registry
from pairaudit.checks.base import CheckInfo
from pairaudit.errors import ConfigError
from pairaudit.schema import did_you_mean
from pairaudit.stages.registry import stage_classes


def all_checks() -> dict[str, CheckInfo]:
    """name -> CheckInfo in report order. A stage may refine a check another one also emits (e.g.
    near contradictions); the first definition wins for the description and defaults."""
    out: dict[str, CheckInfo] = {info.name: info for info in registry.BUILTIN}
    for cls in registry.PAIR_CHECKS:
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


def validate_names(names: list[str] | None, option: str) -> list[str]:
    known = all_checks()
    for n in names or []:
        if n not in known:
            raise ConfigError(f"{option} names unknown check {n!r}{did_you_mean(n, known)}",
                              expected=f"one of: {', '.join(known)}",
                              fix="run `pairaudit checks` to list them (a stage of your own package: name it in "
                                  "PAIRAUDIT_STAGES)")
    return list(names or [])

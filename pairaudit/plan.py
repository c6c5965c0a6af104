"""Which checks run, with which thresholds, and what their findings do (drop or flag).

Precedence: command-line flags (``--drop``/``--flag``/``--only``/``--skip``) > config file > defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pairaudit.catalog import all_checks, merged_thresholds, validate_names
from pairaudit.checks.base import CheckInfo
from pairaudit.checks.registry import BUILTIN
from pairaudit.config import ACTIONS, ScanConfig
from pairaudit.datatypes import Finding
from pairaudit.errors import ConfigError
from pairaudit.io.formats import parse_columns
from pairaudit.schema import did_you_mean

#: checks that cannot be skipped nor flagged: the ones the pipeline itself emits (a malformed record cannot be
#: written to the cleaned output)
ALWAYS_ON = tuple(info.name for info in BUILTIN)


@dataclass
class CheckPlan:
    infos: dict[str, CheckInfo]
    enabled: set[str]
    actions: dict[str, str]
    params: dict[str, dict[str, Any]]
    explicit: set[str] = field(default_factory=set)  # checks the user asked for by name
    action_set: set[str] = field(default_factory=set)  # checks whose action the user set (flags, config file)

    def action(self, check: str) -> str:
        return self.actions.get(check, "flag")

    def settle(self, f: Finding) -> None:
        """Set ``f.action``: the check's action, but a flag when the rule was unsure, and a flag under the
        check's default action when the finding is mild: its own reason (repairable mojibake) or a fault of
        the rejected side alone where the check declares that a useful negative (``rejected_negative``).
        A mild finding's detail says that it was kept and how to drop it."""
        action = self.action(f.check)
        if f.unsure:
            f.action = "flag"
            return
        info = self.infos.get(f.check)
        mild = f.mild
        if not mild and info is not None and info.rejected_negative and f.field == "rejected":
            mild = f"a fault of the rejected side alone: {info.rejected_negative}"
        if mild and action == "drop" and f.check not in self.action_set:
            f.action = "flag"
            f.detail = f"{f.detail}; {mild}: flagged, not dropped (--drop {f.check} drops it)"
            return
        f.action = action



def build_plan(cfg: ScanConfig) -> CheckPlan:
    """The checks that run, their actions and thresholds, from ``cfg`` (flags > config file > defaults)."""
    infos = all_checks()
    only, skip, drop, flag, flip = _validated_names(cfg)
    explicit = set(only) | set(drop) | set(flag) | set(flip)
    if cfg.reference or cfg.reward_model:
        explicit.add("likely_flipped")
    if cfg.policy:
        explicit.add("dpo_overflow_risk")
    if cfg.embedder:
        explicit.add("near_duplicate_pair")
    if only:
        enabled = set(only) | set(ALWAYS_ON)
    else:
        enabled = {n for n, i in infos.items() if i.default_enabled} | explicit
    enabled -= set(skip)
    enabled |= set(ALWAYS_ON)
    actions = {name: _action(cfg, name, info, drop, flag + flip) for name, info in infos.items()}
    params = {name: _thresholds(cfg, name) for name in infos}
    action_set = set(drop) | set(flag) | set(flip) | set(cfg.actions)
    return CheckPlan(infos, enabled, actions, params, explicit, action_set)


def _validated_names(cfg: ScanConfig) -> tuple[list[str], list[str], list[str], list[str], list[str]]:
    """--only, --skip, --drop, --flag, --flip, every name known and no check given two actions."""
    only = validate_names(cfg.only, "--only")
    skip = validate_names(cfg.skip, "--skip")
    drop = validate_names(cfg.drop, "--drop")
    flag = validate_names(cfg.flag, "--flag")
    flip = validate_names(cfg.flip, "--flip")
    if set(flip) & set(drop):
        raise ConfigError(f"check(s) {sorted(set(flip) & set(drop))} given to both --flip and --drop",
                          fix="a row is either dropped or flipped")
    validate_names(list(cfg.actions), "config file [checks]")
    validate_names(list(cfg.thresholds), "config file / --set")
    both = set(drop) & set(flag)
    if both:
        raise ConfigError(f"check(s) {sorted(both)} given to both --drop and --flag", fix="pick one action per check")
    for name in ALWAYS_ON:
        if name in skip:
            raise ConfigError(f"{name} cannot be skipped: such records cannot be written to the cleaned output")
        if name in flag or cfg.actions.get(name) == "flag":
            raise ConfigError(f"{name} cannot be flagged: such records cannot be written to the cleaned output")
    return only, skip, drop, flag, flip


def _action(cfg: ScanConfig, name: str, info: CheckInfo, drop: list[str], kept: list[str]) -> str:
    """A check's action: --drop / --flag / --flip (``kept``: flagged or flipped rows stay) > config file > default."""
    action = info.default_action
    if name in cfg.actions:
        action = cfg.actions[name]
        if action not in ACTIONS:
            raise ConfigError(f"config file sets action {action!r} for {name}", expected="drop or flag")
    if name in drop:
        action = "drop"
    if name in kept:
        action = "flag"  # flipped rows are kept; the finding itself stays a flag
    return action


def _thresholds(cfg: ScanConfig, name: str) -> dict[str, Any]:
    """A check's thresholds: its defaults, overridden by the config file and --set (each value checked)."""
    p = merged_thresholds(name)
    for key, value in cfg.thresholds.get(name, {}).items():
        if key not in p:
            raise ConfigError(f"{name} has no threshold {key!r}{did_you_mean(key, p)}",
                              expected=f"one of {sorted(p)}")
        p[key] = check_threshold(name, key, value, p[key])
    return p


# thresholds whose code needs more than "a whole number >= 1" (cross-fitting needs two folds)
MINIMUMS = {("likely_flipped", "folds"): 2}
#: upper limits that do not follow from the default (more folds than 100 is never a fit pairaudit makes)
MAXIMUMS = {("likely_flipped", "folds"): 100}


def check_threshold(check: str, key: str, value: Any, default: Any) -> Any:
    """``value`` for ``check.key`` if it has the default's type and a value in its range, else a ConfigError.

    Ranges follow from the default: a fraction in [0, 1] stays in [0, 1] (similarities, rates,
    probabilities); a positive default stays > 0 (counts >= 1 when whole); a negative default stays
    < 0 (log-prob limits); booleans stay booleans; None defaults take a whole number >= 1 or none.
    NaN and infinities are refused: NaN silently disables a comparison.
    """
    import math

    where = f"threshold {check}.{key} = {value!r}"
    if (check, key) in MINIMUMS and isinstance(value, (int, float)) and not isinstance(value, bool) \
            and value < MINIMUMS[(check, key)]:
        raise ConfigError(where, expected=f"at least {MINIMUMS[(check, key)]}", fix=f"the default is {default}")
    if (check, key) in MAXIMUMS and isinstance(value, (int, float)) and not isinstance(value, bool) \
            and value > MAXIMUMS[(check, key)]:
        raise ConfigError(where, expected=f"at most {MAXIMUMS[(check, key)]}", fix=f"the default is {default}")
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(where, expected="true or false")
        return value
    if default is None or isinstance(default, (int, float)):
        if value is None and default is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(where, expected="a number", fix=f"e.g. --set {check}.{key}={default}")
        if not math.isfinite(value):
            raise ConfigError(where, expected="a finite number", fix=f"e.g. --set {check}.{key}={default}")
        whole = default is None or (isinstance(default, int) and not isinstance(default, float))
        if whole and value != int(value):
            raise ConfigError(where, expected="a whole number", fix=f"e.g. --set {check}.{key}={default}")
        if default is None or (whole and default >= 1):
            lo, hi, what = 1, math.inf, "a whole number >= 1"
        elif isinstance(default, float) and 0 < default <= 1:
            lo, hi, what = 0.0, 1.0, "a value in [0, 1]"
        elif default >= 0:
            lo, hi, what = 0, math.inf, "a value >= 0"
        else:
            lo, hi, what = -math.inf, 0, "a value <= 0"
        if not lo <= value <= hi:
            raise ConfigError(where, expected=what, fix=f"the default is {default}")
        return int(value) if whole else float(value)
    if not isinstance(value, type(default)):
        raise ConfigError(where, expected=f"a {type(default).__name__} like the default {default!r}")
    return value


def apply_config_file(cfg: ScanConfig, data: dict[str, Any]) -> ScanConfig:
    """Merge a parsed config file into ``cfg`` (file values only fill what flags left at default)."""
    data = dict(data)
    checks = data.pop("checks", {}) or {}
    if not isinstance(checks, dict):
        raise ConfigError("config file 'checks' must be a table of check name -> settings")
    for name, settings in checks.items():
        _apply_check_table(cfg, name, settings)
    _apply_options(cfg, data)
    return cfg


def _apply_check_table(cfg: ScanConfig, name: str, settings: Any) -> None:
    """One ``[checks.NAME]`` table: its action, ``enabled`` and thresholds."""
    from pairaudit import schema

    known = all_checks()
    if name not in known:
        raise schema.unknown_key("config file [checks]", name, known, fix="run `pairaudit checks` to list them")
    if not isinstance(settings, dict):
        raise ConfigError(f"config file checks.{name} must be a table", expected='e.g. {action = "drop"}')
    settings = dict(settings)
    allowed = {"action", "enabled", *merged_thresholds(name)}
    for key in settings:
        if key not in allowed:
            raise schema.unknown_key(f"config file [checks.{name}]", key, allowed)
    if "action" in settings:
        cfg.actions[name] = schema.string(settings.pop("action"), f"checks.{name}.action", ACTIONS)
    if not schema.boolean(settings.pop("enabled", True), f"checks.{name}.enabled") and name not in cfg.skip:
        cfg.skip.append(name)
    if settings:
        cfg.thresholds.setdefault(name, {})
        for k, v in settings.items():
            cfg.thresholds[name].setdefault(k, v)


def _apply_options(cfg: ScanConfig, data: dict[str, Any]) -> None:
    """The config file's scan options, each typed as ``ScanConfig`` declares it."""
    import typing

    from pairaudit import schema
    from pairaudit.config import _type_ok

    defaults = ScanConfig()
    if isinstance(data.get("columns"), str):
        data["columns"] = parse_columns(data["columns"])
    for key in ("only", "skip", "drop", "flag", "flip"):  # a single name is a list of one
        if key in data:
            data[key] = schema.string_list(data[key], f"config file option {key}")
    options = sorted(vars(defaults))
    hints = typing.get_type_hints(ScanConfig)
    for key, value in data.items():
        if not hasattr(cfg, key):
            raise schema.unknown_key("config file", key, options, fix="see `pairaudit scan --help`, or use a "
                                     "[checks.NAME] table for a check's settings")
        if not _type_ok(value, hints[key]):
            raise ConfigError(f"config file option {key} = {value!r} ({type(value).__name__})",
                              expected=str(hints[key]).replace("typing.", ""), fix=f"set {key} to a valid value")
        if getattr(cfg, key) == getattr(defaults, key):
            setattr(cfg, key, value)

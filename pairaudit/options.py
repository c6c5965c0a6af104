"""Option values as the command line writes them turned into configuration: check lists, --set, --fail-on,
length limits (shared by `pairaudit scan` and `pairaudit.scan`)."""

from __future__ import annotations

import json
import re

from pairaudit.errors import ConfigError

CHECKS = "CHECK[,CHECK...]"


def names(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def parse_set(values: list[str] | None) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for v in values or []:
        m = re.fullmatch(r"([a-z_]+)\.([a-z_]+)=(.+)", v.strip())
        if not m:
            raise ConfigError(f"--set {v!r} is not CHECK.PARAM=VALUE", expected="e.g. --set too_long.max_z=4")
        try:
            value: object = json.loads(m.group(3))
        except json.JSONDecodeError:
            value = m.group(3)
        out.setdefault(m.group(1), {})[m.group(2)] = value
    return out


def parse_fail_on(values: list[str] | None) -> list[tuple[str, float]]:
    out = []
    for v in values or []:
        m = re.fullmatch(r"\s*([a-z_]+)\s*>\s*(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*", v)
        rate = float(m.group(2)) / (100 if m.group(3) else 1) if m else -1.0
        if not m or not 0 <= rate <= 1:
            raise ConfigError(f"--fail-on {v!r} is not CHECK>RATE with a rate between 0 and 1 (or 0% and 100%)",
                              expected="e.g. --fail-on 'duplicate_pair>0.05' or 'duplicate_pair>5%'")
        out.append((m.group(1), rate))
    return out


def check_fail_on(limits: list[tuple[str, float]], cfg: object) -> None:
    """Before scanning: every --fail-on gate names a check that will run (a gate on a check that does not
    run would always pass)."""
    from pairaudit.plan import build_plan

    plan = build_plan(cfg)  # type: ignore[arg-type]
    for check, _ in limits:
        if check not in plan.infos:
            raise ConfigError(f"--fail-on names unknown check {check!r}", expected=", ".join(plan.infos),
                              fix="run `pairaudit checks` to list them")
        if check not in plan.enabled:
            raise ConfigError(f"--fail-on {check} gates a check that does not run in this scan, so it would "
                              "always pass", fix=f"enable it (e.g. --only ...,{check}) or drop the gate")


def limit(value: str | None, option: str) -> int | str | None:
    """A length option: not given = "auto" (the trainer's default), "none" = no limit, else a positive int."""
    from pairaudit.trainer.profiles import AUTO, parse_limit

    return AUTO if value is None else parse_limit(value, option)

"""One validation layer for every file pairaudit reads back (config files, review decisions,
report.json, a training run's folder): types, ranges, finite numbers, whole numbers that are not
booleans, and unknown keys rejected with a "did you mean". Each failure is a ``ConfigError`` (exit 2)
naming the file, the key, what was found and what is expected."""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from typing import Any

from pairaudit.errors import ConfigError

NON_FINITE_STRINGS = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, or nothing: the one helper for every name a user
    types (options, check names, thresholds, config keys). Case and ``-`` / ``_`` are ignored first
    (``Max-Length`` -> ``'max_length'``)."""
    options = [str(c) for c in choices]
    folded = {c.lower().replace("-", "_"): c for c in options}
    key = str(word).lower().replace("-", "_").lstrip("_")
    if key in folded and folded[key] != str(word):
        return f" (did you mean {folded[key]!r}?)"
    close = difflib.get_close_matches(str(word), options, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_key(where: str, key: str, allowed: Iterable[str], *, fix: str | None = None) -> ConfigError:
    allowed = sorted(allowed)
    return ConfigError(f"{where}: unknown key {key!r}{did_you_mean(key, allowed)}",
                       expected="one of " + ", ".join(allowed), fix=fix or f"remove {key!r} or correct its name")


def check_keys(obj: Mapping[str, Any], allowed: Iterable[str], where: str) -> None:
    allowed = set(allowed)
    for key in obj:
        if key not in allowed:
            raise unknown_key(where, key, allowed)


def _found(value: Any) -> str:
    text = repr(value)
    return f"{text[:80]}{'…' if len(text) > 80 else ''} ({type(value).__name__})"


def integer(value: Any, where: str, *, lo: int | None = None, hi: int | None = None) -> int:
    """A whole number (a JSON int: not a bool, not 3.7, not Infinity/1e400) within [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{where} = {_found(value)}", expected="a whole number"
                          + (f" >= {lo}" if lo is not None else "") + (f" and <= {hi:,}" if hi is not None else ""))
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ConfigError(f"{where} = {value:,} is out of range",
                          expected=f"a whole number in [{lo if lo is not None else '-inf'}, "
                                   f"{f'{hi:,}' if hi is not None else 'inf'}]")
    return value


def number(value: Any, where: str, *, lo: float | None = None, hi: float | None = None) -> float:
    """A finite number (int or float, not a bool) within [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{where} = {_found(value)}", expected="a finite number")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ConfigError(f"{where} = {value} is out of range", expected=f"a number in [{lo}, {hi}]")
    return float(value)


def boolean(value: Any, where: str) -> bool:
    """true or false (a string "false" is an error, not a truthy value)."""
    if not isinstance(value, bool):
        raise ConfigError(f"{where} = {_found(value)}", expected="true or false (without quotes)")
    return value


def string(value: Any, where: str, choices: Iterable[str] | None = None) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where} = {_found(value)}", expected="a string")
    if choices is not None:
        choices = list(choices)
        if value not in choices:
            raise ConfigError(f"{where} = {value!r}{did_you_mean(value, choices)}", expected=" | ".join(choices))
    return value


def string_list(value: Any, where: str) -> list[str]:
    """A list of strings; one string is read as a comma-separated list (``only = "identical_pair"``)."""
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} = {_found(value)}", expected='a list of strings, e.g. ["identical_pair"]')
    return list(value)


def mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where} holds {_found(value)}", expected="an object / table")
    return value


def finite_or_none(value: Any) -> float | None:
    """A logged metric as a float: numbers as they are, the strings some loggers write for non-finite
    values ("NaN", "Infinity", "-inf") as those values; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in NON_FINITE_STRINGS:
            return float(text.replace("infinity", "inf"))
        try:
            return float(text)
        except ValueError:
            return None
    return None


def _optional_parts(data: dict[str, Any], p: str) -> None:
    """The parts of report.json ``apply`` and ``report`` read when they are there: decisions, assumptions.trainer,
    problems (a list of strings), remedies (per check: rows and text)."""
    for key in ("decisions", "assumptions"):
        if data.get(key) is not None:
            mapping(data[key], f"{p}: {key}")
    problems = data.get("problems")
    if problems is not None and (not isinstance(problems, list) or not all(isinstance(v, str) for v in problems)):
        raise ConfigError(f"{p}: problems = {_found(problems)}", expected="a list of strings")
    for name, remedy in mapping(data.get("remedies") or {}, f"{p}: remedies").items():
        remedy = mapping(remedy, f"{p}: remedies.{name}")
        integer(remedy.get("rows"), f"{p}: remedies.{name}.rows", lo=0)
        string(remedy.get("text"), f"{p}: remedies.{name}.text")
    trainer = (data.get("assumptions") or {}).get("trainer")
    if trainer is not None:
        mapping(trainer, f"{p}: assumptions.trainer")
        if trainer.get("requested") is not None:
            string(trainer["requested"], f"{p}: assumptions.trainer.requested")
        defaults = trainer.get("from_profile_defaults")
        if defaults is not None and (not isinstance(defaults, list) or not all(isinstance(v, str) for v in defaults)):
            raise ConfigError(f"{p}: assumptions.trainer.from_profile_defaults = {_found(defaults)}",
                              expected="a list of option names")


def rescan_fix(out_dir: Any, changed: str = "report.json") -> str:
    """The fix for a damaged or changed output (``changed``: its name), as a command that works: scan the source
    again into a new folder (pairaudit never replaces an output changed since it wrote it, so the same --out
    would refuse). The source is the one report.json records when that part can still be read and exists, else
    SOURCE."""
    import json
    import os
    import shlex
    from pathlib import Path

    out = Path(out_dir)
    try:
        source = json.loads((out / "report.json").read_text(encoding="utf-8"))["source"]["path"]
    except Exception:  # noqa: BLE001 - the file is damaged: any part may be missing or of another type
        source = None
    if source is None:  # the scan's own record of its source (reapply's fingerprint), when report.json is gone
        source = (recorded_scan(out) or {}).get("source")
    src = shlex.quote(source) if isinstance(source, str) and os.path.exists(source) else "SOURCE"
    new = shlex.quote(str(out).rstrip("/") + "-rescan")
    options = ""
    if isinstance((recorded_scan(out) or {}).get("config"), dict):  # the scan's own options, all of them
        from pairaudit.output_files import SCAN_RECORD

        options = f" --config {shlex.quote(str(out / '.pairaudit' / 'current' / SCAN_RECORD))}"
    return (f"scan again into a new folder: pairaudit scan {src} --out {new}{options} (the same --out keeps the "
            f"changed {changed}: pairaudit never replaces a file changed since it wrote it)")


def recorded_scan(out_dir: Any) -> dict[str, Any] | None:
    """The committed generation's record of its scan (``SCAN_RECORD``: source, configuration), or None when it is
    absent or damaged.

    Args:
        out_dir: the output folder.

    Returns:
        The record as a dict, or None.
    """
    import json
    from pathlib import Path

    from pairaudit.output_files import SCAN_RECORD

    try:
        data = json.loads((Path(out_dir) / ".pairaudit" / "current" / SCAN_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def missing_report_fix(out_dir: Any) -> str:
    """The fix when ``OUT/report.json`` is missing: scan into the folder; but when its link is left and the file
    it led to was deleted, the same --out refuses (a removed output is a changed one): a new folder then.

    Args:
        out_dir: the output folder.

    Returns:
        The fix, as a command that works.
    """
    import os
    from pathlib import Path

    link = Path(out_dir) / "report.json"
    if os.path.islink(link) and not link.exists():
        return rescan_fix(out_dir, "report.json")
    return "run `pairaudit scan SOURCE --out DIR` first"


def read_report_json(path: Any) -> dict[str, Any]:
    """``OUT/report.json`` parsed and checked to have the parts ``report``, ``show``, ``apply`` and the
    review helper read (status, source, totals, checks, config), or an ``InputError`` naming the file."""
    import json
    from pathlib import Path

    from pairaudit.errors import InputError

    p = Path(path)
    fix = rescan_fix(p.parent)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InputError(f"{p} is not a readable JSON file ({str(exc)[:200]})", fix=fix) from exc
    try:
        mapping(data, str(p))
        for key in ("source", "totals", "checks", "config"):
            if key not in data:
                raise ConfigError(f"{p} has no {key!r}")
        if "status" in data:
            string(data["status"], f"{p}: status")
        mapping(data["source"], f"{p}: source")
        mapping(data["config"], f"{p}: config")
        totals = mapping(data["totals"], f"{p}: totals")
        for key in ("input", "kept", "dropped", "flagged"):
            integer(totals.get(key), f"{p}: totals.{key}", lo=0)
        for name, check in mapping(data["checks"], f"{p}: checks").items():
            check = mapping(check, f"{p}: checks.{name}")
            for key in ("status", "action", "description"):
                string(check.get(key), f"{p}: checks.{name}.{key}")
            for key in ("findings", "rows"):
                integer(check.get(key), f"{p}: checks.{name}.{key}", lo=0)
        _optional_parts(data, str(p))
    except ConfigError as exc:
        raise InputError(f"{exc.what} (a damaged report.json)", expected=exc.expected, fix=fix) from exc
    return data

"""Run configuration: options, per-check thresholds and actions, and the run context."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pairaudit.errors import ConfigError

ACTIONS = ("drop", "flag")

#: ``progress(phase, done, total)``: absolute count of items done so far in a named phase ("read":
#: rows, "embed": texts, "reference": sequences, ...); ``total`` None when unknown
Progress = Callable[[str, int, "int | None"], None]


def no_progress(phase: str, done: int, total: int | None) -> None:
    return None


def usable_cpus() -> int:
    """The CPUs this process may use (its affinity on Linux, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def default_cache_dir() -> Path:
    env = os.environ.get("PAIRAUDIT_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pairaudit"


@dataclass
class ScanConfig:
    """Everything that changes a scan's result. Serialised into report.json."""

    format: str | None = None  # forced format, else auto-detected
    columns: dict[str, str] = field(default_factory=dict)  # canonical -> source column
    split: str | list[str] | None = None  # None: train if present; a name, "all" or "a,b" (io.hf)
    subset: str | None = None
    tokenizer: str | None = None  # HF folder/id or GGUF file; None = bundled SmolLM2
    # the trainer whose preprocessing is reproduced (pairaudit.trainer.profiles): "trl" = the installed TRL's
    # version (else the newest known), "trl==X.Y.Z", or a profile name such as "trl-0.28"
    trainer: str = "trl"
    # limits: a positive int, None (or "none") for no limit, "auto" for the trainer profile's default;
    # a scan makes them concrete (report.json records the resolved values and profile name)
    max_length: int | str | None = "auto"
    max_prompt_length: int | str | None = "auto"  # only trainers that have it (TRL < 0.29)
    max_completion_length: int | str | None = "auto"  # only trainers that have it (TRL < 0.29)
    truncation_mode: str = "auto"  # keep_start | keep_end | auto (TRL DPOConfig.truncation_mode)
    # write an explicit prompt column into the cleaned output of implicit-prompt data (io.writers)
    explicit_prompt: bool = False
    batch_size: int = 1000
    only: list[str] | None = None  # run only these checks
    skip: list[str] = field(default_factory=list)
    drop: list[str] = field(default_factory=list)  # force action=drop
    flag: list[str] = field(default_factory=list)  # force action=flag
    flip: list[str] = field(default_factory=list)  # checks whose (kept) rows are flipped in the clean output
    thresholds: dict[str, dict[str, Any]] = field(default_factory=dict)  # check -> param -> value
    actions: dict[str, str] = field(default_factory=dict)  # from a config file
    embedder: str | None = None
    # near duplicates: auto (= hybrid: static model finds candidates, the embedder decides), static (--fast:
    # the static model decides alone), transformer (the embedder embeds every text)
    embed_mode: str = "auto"
    embed_batch_size: int = 64
    precision: str = "auto"  # auto | fp32 (force fp32 on CPU) | bf16 | fp16
    reference: str | None = None
    reward_model: str | None = None
    policy: str | None = None
    beta: float = 0.1
    reference_max_rows: int | None = None
    device: str = "auto"
    decisions: str | None = None
    trust_remote_code: bool = False
    engine: str = "local"  # local | ray
    # local engine: worker processes that read, check and observe batches (None: the CPUs this process may
    # use; 1: everything in this process). Run-specific: not in report.json (the outputs do not depend on it)
    workers: int | None = None
    ray_address: str | None = None  # None: start an embedded local Ray
    ray_workers: int | None = None  # actors (default: one per cluster CPU)
    ray_shards: int | None = None  # source shards (default: 2 per actor, more for a large source: io.shards.SHARD_BYTES)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a JSON or TOML config file: top-level options plus ``[checks.NAME]`` tables holding
    ``action`` and thresholds, e.g. ``[checks.too_long] action = "drop"``."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"config file {p} does not exist", fix="pass an existing .toml or .json file")
    if not p.is_file():
        raise ConfigError(f"config file {p} is a folder", fix="pass the .toml or .json file itself")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {p} cannot be read: {exc}", expected="a UTF-8 TOML or JSON file") from exc
    try:
        if p.suffix == ".json":
            data = json.loads(text)
        else:
            import tomllib

            data = tomllib.loads(text)
    except Exception as exc:
        raise ConfigError(f"config file {p} cannot be parsed: {exc}", expected="valid TOML or JSON") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config file {p} must hold a table/object at top level")
    if SCAN_RECORD_KEYS <= data.keys() and isinstance(data["config"], dict):
        # an output folder's record of its scan (.scan.json): the configuration it ran with; a None there is an
        # option left at its default (``only`` of a default scan), which a config file states by leaving it out
        return {k: v for k, v in data["config"].items() if v is not None}
    return data


#: the keys of an output folder's scan record (``.pairaudit/current/.scan.json``), which ``--config`` reads as the
#: configuration that scan ran with (the rescan fix of a damaged output names it: pairaudit.schema.rescan_fix)
SCAN_RECORD_KEYS = {"config", "pairaudit_version", "source", "files"}


@dataclass
class Context:
    """What stages need at run time besides the data."""

    config: ScanConfig
    cache_dir: Path = field(default_factory=default_cache_dir)
    log: Callable[[str], None] = lambda msg: None
    # resolved parameters per check name (defaults overridden by config)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    # filled by stages: model ids and hashes for report.json
    models: dict[str, Any] = field(default_factory=dict)
    progress: Progress = no_progress
    # (split, first row, rows) when several splits are scanned as one source (io.hf), else None
    splits: list[tuple[str, int, int]] | None = None
    # run-time objects the stages share (e.g. ``models.batch_vectors``: one embedding pass per text)
    shared: dict[str, Any] = field(default_factory=dict)
    # thresholds a stage ran with another value than the one asked for (:meth:`clamp`): check -> key -> record
    clamped: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def clamp(self, check: str, key: str, requested: Any, used: Any, why: str) -> Any:
        """Say that ``check.key`` ran with ``used`` instead of the ``requested`` value (``why``: in words, from
        the data). The one way a stage reports a clamped threshold: report.json shows the value used in
        ``checks.<check>.thresholds`` and ``config``, both values and the reason in ``checks.<check>.clamped``,
        and a log line says it as it happens.

        Args:
            check: the check whose threshold it is.
            key: the threshold's name (``--set CHECK.KEY``).
            requested: the value the run asked for (default, config file or ``--set``).
            used: the value the stage ran with.
            why: the reason, e.g. "at most one fold per 10 of the 60 scored rows".

        Returns:
            ``used``.
        """
        if used != requested and key not in self.clamped.get(check, {}):
            self.clamped.setdefault(check, {})[key] = {"requested": requested, "used": used, "why": why}
            self.log(f"{check}: {key}={requested} was asked; {used} was used ({why})")
        return used


def clamp_record(stats: dict[str, Any], check: str, key: str, requested: Any, used: Any, why: str) -> None:
    """Note in a stage's ``stats`` (in any process, any engine) that ``check.key`` ran with ``used`` instead of
    ``requested`` (nothing when they are equal); the scanner hands each note to :meth:`Context.clamp` when it
    lays out report.json (:func:`take_clamps`)."""
    if used != requested:
        stats.setdefault(CLAMPED, {})[f"{check}.{key}"] = {"requested": requested, "used": used, "why": why}


def take_clamps(stats: dict[str, Any], ctx: Context) -> None:
    """Move every :func:`clamp_record` note out of the stages' ``stats`` (report.json ``stats``, at any depth,
    e.g. ``stats.near_duplicates.calibration``) into ``ctx`` (:meth:`Context.clamp`)."""
    for part in stats.values():
        if isinstance(part, dict):
            for name, c in (part.pop(CLAMPED, None) or {}).items():
                check, key = name.split(".", 1)
                ctx.clamp(check, key, c["requested"], c["used"], c["why"])
            take_clamps(part, ctx)


CLAMPED = "clamped"  #: the key of clamp_record's notes in a stage's stats

# options that must be whole numbers >= 1 when set (None = no limit / default)
POSITIVE_INTS = ("max_length", "max_prompt_length", "max_completion_length", "batch_size", "embed_batch_size",
                 "reference_max_rows", "ray_workers", "ray_shards", "workers")
# the words a length limit may be instead of a number (trainer.profiles.parse_limit reads them)
LIMIT_WORDS = ("auto", "none", "null", "no")
# the options with a fixed set of values: one list each, which the modules that take them check against
TRUNCATION_MODES = ("keep_end", "keep_start")
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
EMBED_MODES = ("hybrid", "static", "transformer")  # near duplicates; "auto" = hybrid
CHOICES = {"truncation_mode": TRUNCATION_MODES, "precision": PRECISIONS, "embed_mode": ("auto", *EMBED_MODES)}


def _type_ok(value: Any, hint: Any) -> bool:
    """isinstance against a resolved type hint (unions, parametrised list/dict by their origin)."""
    import types
    import typing

    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_type_ok(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is Any:
        return True
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if not isinstance(value, origin or hint):
        return False
    args = typing.get_args(hint)
    if origin is list and args:
        return all(_type_ok(v, args[0]) for v in value)
    if origin is dict and args:
        return all(_type_ok(k, args[0]) and _type_ok(v, args[1]) for k, v in value.items())
    return True


def validate_config(cfg: ScanConfig) -> None:
    """Every option has the type its field declares and a sensible value, or a ConfigError naming the
    option, what was found and what is expected (a config file can hold anything)."""
    import math
    import typing

    hints = typing.get_type_hints(ScanConfig)
    for name, hint in hints.items():
        value = getattr(cfg, name)
        if not _type_ok(value, hint):
            raise ConfigError(f"option {name} = {value!r} ({type(value).__name__})",
                              expected=f"{str(hint).replace('typing.', '')}", fix=f"set {name} to a valid value")
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"option {name} = {value!r} is not a finite number", fix=f"set {name} to a number")
    for name in POSITIVE_INTS:
        value = getattr(cfg, name, None)
        if isinstance(value, str):  # the length limits also take words (trainer.profiles.parse_limit)
            word = value.strip().lower()
            if word in LIMIT_WORDS:
                continue
            if not word.lstrip("+").isdigit():
                raise ConfigError(f"option {name} = {value!r}", expected="a whole number >= 1, 'none' (no limit) "
                                                                         "or 'auto' (the trainer's default)",
                                  fix=f"set {name} to a number of tokens, e.g. 2048, or to none")
            value = int(word)
        if value is not None and value < 1:
            raise ConfigError(f"option {name} = {value}", expected="a whole number >= 1 (or none for no limit)",
                              fix=f"set {name} to at least 1, or leave it unset")
    for name, allowed in CHOICES.items():
        if getattr(cfg, name, None) not in allowed:
            raise ConfigError(f"option {name} = {getattr(cfg, name)!r}", expected=" or ".join(allowed))
    if cfg.beta <= 0:
        raise ConfigError(f"option beta = {cfg.beta}", expected="a DPO beta > 0, e.g. 0.1")
    given = [name for name in RAY_OPTIONS if getattr(cfg, name) is not None]
    if given and cfg.engine != "ray":  # they would change nothing, yet be recorded in report.json's config
        flags = ", ".join(f"--{name.replace('_', '-')}" for name in given)
        verb = "applies" if len(given) == 1 else "apply"
        raise ConfigError(f"{flags} ({', '.join(given)} in Python or a config file) {verb} only to the Ray engine, "
                          f"but the engine is {cfg.engine!r}",
                          fix="add --engine ray (engine='ray'), or leave them out")


RAY_OPTIONS = ("ray_address", "ray_workers", "ray_shards")  # options of --engine ray only


def without_ray_options(cfg: ScanConfig) -> ScanConfig:
    """``cfg`` without the Ray engine's options when another engine runs (a report.json written before they
    were refused there holds them; they never had an effect).

    Args:
        cfg: a scan's configuration.

    Returns:
        ``cfg``, or a copy with the Ray options unset.
    """
    if cfg.engine == "ray":
        return cfg
    from dataclasses import replace

    return replace(cfg, **{name: None for name in RAY_OPTIONS})

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
    max_length: int | None = 1024
    max_prompt_length: int | None = 512
    max_completion_length: int | None = None
    truncation_mode: str = "keep_end"  # TRL DPOConfig.truncation_mode
    batch_size: int = 1000
    only: list[str] | None = None  # run only these checks
    skip: list[str] = field(default_factory=list)
    drop: list[str] = field(default_factory=list)  # force action=drop
    flag: list[str] = field(default_factory=list)  # force action=flag
    flip: list[str] = field(default_factory=list)  # checks whose (kept) rows are flipped in the clean output
    thresholds: dict[str, dict[str, Any]] = field(default_factory=dict)  # check -> param -> value
    actions: dict[str, str] = field(default_factory=dict)  # from a config file
    embedder: str | None = None
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
    ray_address: str | None = None  # None: start an embedded local Ray
    ray_workers: int | None = None  # actor pool size (default: cluster CPUs - 1)
    ray_shards: int | None = None  # number of source shards (default: 4 per worker)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a JSON or TOML config file: top-level options plus ``[checks.NAME]`` tables holding
    ``action`` and thresholds, e.g. ``[checks.too_long] action = "drop"``."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"config file {p} does not exist", fix="pass an existing .toml or .json file")
    text = p.read_text(encoding="utf-8")
    try:
        if p.suffix == ".json":
            data = json.loads(text)
        else:
            import tomllib

            data = tomllib.loads(text)
    except Exception as exc:  # noqa: BLE001 - parser errors vary
        raise ConfigError(f"config file {p} cannot be parsed: {exc}", expected="valid TOML or JSON") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config file {p} must hold a table/object at top level")
    return data


@dataclass
class Context:
    """What stages need at run time besides the data."""

    config: ScanConfig
    cache_dir: Path = field(default_factory=default_cache_dir)
    log: Callable[[str], None] = lambda msg: None  # noqa: E731
    # resolved parameters per check name (defaults overridden by config)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    # filled by stages: model ids and hashes for report.json
    models: dict[str, Any] = field(default_factory=dict)
    progress: Progress = no_progress
    # (split, first row, rows) when several splits are scanned as one source (io.hf), else None
    splits: list[tuple[str, int, int]] | None = None

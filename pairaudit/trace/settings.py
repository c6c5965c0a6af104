"""The trainer settings that decide which rows a step saw, and where each value came from.

Priority, lowest first: transformers / TRL defaults < ``training_args.bin`` (read by
:mod:`~pairaudit.trace.args_pickle` without running code; anything beyond argument classes, their enums and
plain values only with ``--trust-pickle``) < ``training_args.json`` (plain ``TrainingArguments.to_dict()``) < ``trainer_state.json``
(``train_batch_size``, ``logging_steps``, ``max_steps``, ``num_train_epochs``: what the trainer really used)
< the recording callback's ``meta.json`` < a ``--settings`` JSON/TOML file < ``--set KEY=VALUE``.

Every order-changing setting that was found nowhere is listed in :attr:`TraceSettings.assumed`, so the
output can say which default it relied on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pairaudit.errors import ConfigError
from pairaudit.schema import did_you_mean, integer, number
from pairaudit.trace.checkpoints import checkpoint_step

# name -> (default, changes the order, what it is)
SPEC: dict[str, tuple[Any, bool, str]] = {
    "train_batch_size": (8, True, "per-process micro-batch size (per_device_train_batch_size x GPUs of one process)"),
    "gradient_accumulation_steps": (1, True, "micro-batches per optimizer step"),
    "world_size": (1, True, "number of data-parallel processes"),
    "seed": (42, True, "TrainingArguments.seed (seeds the sampler when data_seed is None)"),
    "data_seed": (None, True, "TrainingArguments.data_seed"),
    "dataloader_drop_last": (False, True, "drop the last incomplete batch"),
    "num_train_epochs": (3.0, True, "epochs"),
    "max_steps": (-1, True, "optimizer steps (wins over epochs when > 0)"),
    "split_batches": (False, True, "accelerator_config.split_batches"),
    "even_batches": (True, True, "accelerator_config.even_batches"),
    "dispatch_batches": (None, True, "accelerator_config.dispatch_batches"),
    "use_seedable_sampler": (True, True, "accelerator_config.use_seedable_sampler"),
    "train_sampling_strategy": ("random", True, "random or sequential (group_by_length is not reproducible)"),
    "ignore_data_skip": (False, True, "resume without skipping seen batches"),
    "resumed_at": ([], True, "global steps at which the run was resumed from a checkpoint"),
    "trainer": ("auto", True, "trl-dpo (TRL 1.x DPOTrainer filters rows) or transformers (every record)"),
    "max_length": (1024, True, "DPOConfig.max_length (rows whose prompt reaches it are dropped)"),
    "truncation_mode": ("keep_start", True, "DPOConfig.truncation_mode"),
    "tokenizer": (None, True, "training tokenizer (folder/id/gguf); default: the run's saved tokenizer"),
    "columns": ({}, False, "column mapping canonical=source, as for scan"),
    "logging_steps": (500, False, "steps per log_history entry"),
    "logging_nan_inf_filter": (True, False, "the logged loss hides non-finite steps"),
    "beta": (0.1, False, "DPO beta"),
}
ORDER_KEYS = [k for k, (_, order, _) in SPEC.items() if order]
_ARGS_KEYS = {"gradient_accumulation_steps", "seed", "data_seed", "dataloader_drop_last", "num_train_epochs",
              "max_steps", "train_sampling_strategy", "ignore_data_skip", "logging_steps", "logging_nan_inf_filter",
              "max_length", "truncation_mode", "beta"}
_COUNTS = {"train_batch_size", "gradient_accumulation_steps", "world_size", "seed", "num_train_epochs", "max_steps",
           "logging_steps"}  # settings whose null is no value (the order cannot be rebuilt from None)
_AT_LEAST_ONE = {"train_batch_size", "gradient_accumulation_steps", "world_size"}
_ACCEL_KEYS = ("split_batches", "even_batches", "dispatch_batches", "use_seedable_sampler")


@dataclass
class TraceSettings:
    values: dict[str, Any] = field(default_factory=lambda: {k: _copy(v[0]) for k, v in SPEC.items()})
    sources: dict[str, str] = field(default_factory=dict)  # key -> where the value came from
    notes: list[str] = field(default_factory=list)
    run_args: dict[str, Any] = field(default_factory=dict)  # the run's arguments as read (for the diagnosis)
    run_args_source: str | None = None
    given: set[str] = field(default_factory=set)  # keys --set gives (resolve)

    def __getattr__(self, name: str) -> Any:
        if name in SPEC and "values" in self.__dict__:
            return self.values[name]
        raise AttributeError(name)

    def set(self, key: str, value: Any, source: str) -> None:
        if key not in SPEC:
            raise ConfigError(f"unknown trace setting {key!r} (from {source}){did_you_mean(key, SPEC)}",
                              expected=", ".join(sorted(SPEC)))
        if source != "--set" and key in self.given:
            return  # --set gives it (applied last): the file's value is not read, good or bad
        fix = (f"pass a whole number, e.g. --set {key}={SPEC[key][0]!r}" if source == "--set" else
               f"correct {key} in {source}, or give the run's value with --set {key}=N")
        try:
            v = _coerce(key, value)
        except ConfigError as exc:
            where = "" if source == "--set" else f" (from {source})"
            raise ConfigError(exc.what + where, expected=exc.expected, fix=fix) from exc
        if key in _AT_LEAST_ONE and isinstance(v, int) and v < 1:
            raise ConfigError(f"trace setting {key}={value!r} (from {source}) is not a count", expected=">= 1",
                              fix=fix)
        if isinstance(value, str) and source != "--set" and isinstance(v, (int, float)) and not isinstance(v, bool):
            self.notes.append(f"{key} is the text {value!r} in {source}: read as {v!r}")
        if v is None and key in _COUNTS:  # a count the order needs: null is no value
            if source == "--set":
                raise ConfigError(f"trace setting {key}={value!r} has no value",
                                  expected=f"a number like the default {SPEC[key][0]!r} ({SPEC[key][2]})")
            self.notes.append(f"{key} is null in {source}: read as not given")
            return
        self.values[key] = v
        self.sources[key] = source

    def update(self, data: dict[str, Any], source: str, *, only_known: bool = False) -> None:
        for k, v in data.items():
            if k in SPEC:
                self.set(k, v, source)
            elif not only_known:
                raise ConfigError(f"unknown trace setting {k!r} in {source}{did_you_mean(k, SPEC)}", expected=", ".join(sorted(SPEC)))

    @property
    def assumed(self) -> list[str]:
        """Order-changing settings found nowhere (their default was used)."""
        return [k for k in ORDER_KEYS if k not in self.sources]

    def to_json(self) -> dict[str, Any]:
        return {"values": {k: self.values[k] for k in SPEC}, "sources": dict(sorted(self.sources.items())),
                "assumed": self.assumed, "notes": list(self.notes)}


# optimizer steps a trace reproduces at most (the data order is rebuilt step by step)
MAX_STEPS = 100_000_000


def _copy(v: Any) -> Any:
    return list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v


def _coerce(key: str, value: Any) -> Any:
    default = SPEC[key][0]
    if isinstance(value, str) and value.strip().lower() in ("none", "null") and key not in ("trainer",):
        return None
    try:
        if key == "resumed_at":
            if isinstance(value, str):
                value = [v for v in value.replace(";", ",").split(",") if v.strip()]
            return sorted({int(v) for v in (value if isinstance(value, (list, tuple)) else [value])})
        if key == "columns":
            from pairaudit.io.formats import parse_columns

            return parse_columns(value) if value else {}
        if isinstance(default, bool) or key in ("dispatch_batches",):
            if isinstance(value, str):
                low = value.strip().lower()
                if low not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(value)
                return low in ("true", "1", "yes")
            return None if value is None else bool(value)
        if key in ("num_train_epochs", "beta"):
            return None if value is None and key == "beta" else number(value, f"trace setting {key}")
        if isinstance(default, int) or key in ("data_seed", "max_length"):
            if value is None:
                return None
            if isinstance(value, str) and value.strip().lstrip("-").isdigit():
                value = int(value)
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            hi = MAX_STEPS if key == "max_steps" else 2 ** 64 if "seed" in key else 10 ** 9
            return integer(value, f"trace setting {key}", lo=-1 if key == "max_steps" else None, hi=hi)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ConfigError(f"trace setting {key}={value!r} has the wrong type",
                          expected=f"like the default {default!r} ({SPEC[key][2]})") from exc
    return value


def parse_assignments(items: list[str] | None) -> dict[str, Any]:
    """``["seed=3", "world_size=2"]`` -> dict (values parsed as JSON when possible)."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r} is not KEY=VALUE", expected="e.g. --set gradient_accumulation_steps=4")
        try:
            out[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            out[key.strip()] = raw
    return out


def load_file(path: Path) -> dict[str, Any]:
    """A JSON or TOML settings file (a flat table of SPEC keys)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read settings file {path}: {exc}") from exc
    try:
        if str(path).endswith(".toml"):
            import tomllib

            return tomllib.loads(text)
        return json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"settings file {path} is not valid {'TOML' if str(path).endswith('.toml') else 'JSON'}: "
                          f"{exc}") from exc


def from_training_args(args: dict[str, Any], source: str, settings: TraceSettings) -> None:
    """Apply a ``TrainingArguments`` / ``DPOConfig`` dict (``to_dict()`` form)."""
    for k in _ARGS_KEYS:
        if k in args:
            settings.set(k, args[k], source)
    bs = args.get("per_device_train_batch_size")
    if bs is not None and "train_batch_size" not in settings.sources:
        settings.set("train_batch_size", bs, f"{source} (per_device_train_batch_size)")
    accel = args.get("accelerator_config") or {}
    if isinstance(accel, str):
        try:
            accel = json.loads(accel)
        except json.JSONDecodeError:
            accel = {}
    for k in _ACCEL_KEYS:
        if isinstance(accel, dict) and k in accel:
            settings.set(k, accel[k], f"{source} (accelerator_config)")
    dist = args.get("distributed_state")
    if isinstance(dist, dict) and isinstance(dist.get("num_processes"), int):
        settings.set("world_size", dist["num_processes"], f"{source} (distributed_state.num_processes)")
    settings.run_args = {**settings.run_args, **{k: v for k, v in args.items() if _plain_value(v)}}
    settings.run_args_source = source


def _plain_value(v: Any) -> bool:
    return v is None or isinstance(v, (bool, int, float, str)) or (
        isinstance(v, (list, dict)) and all(_plain_value(x) for x in (v.values() if isinstance(v, dict) else v)))


def from_trainer_state(state: dict[str, Any], source: str, settings: TraceSettings) -> None:
    for key, name in (("train_batch_size", "train_batch_size"), ("logging_steps", "logging_steps"),
                      ("max_steps", "max_steps"), ("num_train_epochs", "num_train_epochs")):
        if state.get(key) is not None:
            settings.set(name, state[key], source)


def read_training_args_bin(path: Path) -> dict[str, Any]:
    """Fully unpickle ``training_args.bin`` (only with ``--trust-pickle``, after the safe reader refused it)."""
    import shlex

    import torch

    fix = (f"move it aside and give the settings another way: mv {shlex.quote(str(path))} "
           f"{shlex.quote(str(path) + '.unreadable')}, then run the same trace with --set KEY=VALUE (or --settings "
           "FILE) for the settings it names as assumed")
    try:
        obj = torch.load(str(path), weights_only=False)  # explicit user opt-in
    except Exception as exc:  # noqa: BLE001 - unpickling damaged or foreign bytes raises anything
        raise ConfigError(f"{path} cannot be read even with --trust-pickle ({type(exc).__name__}: "
                          f"{str(exc)[:200]})", expected="a training_args.bin written by transformers "
                          "(torch.save of TrainingArguments)", fix=fix) from exc
    try:
        if hasattr(obj, "to_dict"):
            return dict(obj.to_dict())
    except Exception as exc:  # noqa: BLE001 - an object of someone else's class
        raise ConfigError(f"{path} holds a {type(obj).__name__} whose to_dict() failed ({exc})", fix=fix) from exc
    if isinstance(obj, dict):
        return obj
    raise ConfigError(f"{path} holds a {type(obj).__name__}, not TrainingArguments",
                      expected="a training_args.bin written by transformers (torch.save of TrainingArguments)",
                      fix=fix)


def _from_bins(paths: list[Path], s: TraceSettings, trust_pickle: bool) -> None:
    """The run's arguments from the first ``training_args.bin`` (the run folder's, then the newest checkpoint's)
    that holds TrainingArguments; each one passed over is named in a note with why, and so is the one used when
    it is not the first (B8: a run folder's ``torch.save({...})`` hid a valid checkpoint's, silently). When none
    holds them and ``--trust-pickle`` found one unreadable, that error stands (exit 2 with its fix)."""
    from pairaudit.trace.args_pickle import NotArguments, Refused, read_args

    skipped: list[str] = []
    error: ConfigError | None = None
    for path in paths:
        try:
            args, source = read_args(path), str(path)
        except NotArguments as exc:  # read in full: --trust-pickle would read the same thing
            skipped.append(f"{path} was not read: {exc}; give the settings with --set")
            continue
        except Refused as exc:
            if not trust_pickle:
                hint = "pass --trust-pickle if you trust this run folder, or " if exc.trust_helps else ""
                skipped.append(f"{path} was not read: {exc}; {hint}give the settings with --set")
                continue
            try:
                args, source = _trusted(path), f"{path} (--trust-pickle)"
            except ConfigError as err:
                error = error or err
                skipped.append(f"{path} was not read even with --trust-pickle: {err.what}")
                continue
        s.notes.extend(skipped)
        if skipped:
            s.notes.append(f"the run's arguments were read from {source}")
        from_training_args(args, source, s)
        return
    if error is not None:
        raise error
    s.notes.extend(skipped)


def _trusted(path: Path) -> dict[str, Any]:
    """``read_training_args_bin``, refusing a dict that names no TrainingArguments field (``{'x': 1}``)."""
    import shlex

    from pairaudit.trace.args_pickle import names_arguments

    args = read_training_args_bin(path)
    if not names_arguments(args):
        raise ConfigError(f"{path} holds a dict without any TrainingArguments field (keys: {sorted(args)[:8]})",
                          expected="a training_args.bin written by transformers (torch.save of TrainingArguments)",
                          fix=f"move it aside (mv {shlex.quote(str(path))} {shlex.quote(str(path) + '.unreadable')}) "
                              "or give the settings with --set")
    return args


def resolve(run_dir: Path, *, meta: dict[str, Any] | None, state: dict[str, Any] | None, state_path: Path | None,
            settings_file: Path | None, assignments: dict[str, Any], trust_pickle: bool) -> TraceSettings:
    s = TraceSettings()
    s.given = set(assignments)  # what --set gives wins: a bad value of the same key in a file is not read
    candidates = [run_dir, *sorted(run_dir.glob("checkpoint-*"), key=checkpoint_step, reverse=True)]
    _from_bins([d / "training_args.bin" for d in candidates if (d / "training_args.bin").exists()], s, trust_pickle)
    json_path = next((d / n for d in candidates for n in ("training_args.json", "args.json")
                      if (d / n).exists()), None)
    if json_path is not None:
        try:
            args = json.loads(json_path.read_text(encoding="utf-8"))
            if not isinstance(args, dict):
                raise ValueError(f"it holds a JSON {type(args).__name__}, not an object of TrainingArguments")
            from_training_args(args, str(json_path), s)
        except (ValueError, RecursionError, ConfigError) as exc:
            s.notes.append(f"{json_path} ignored: {exc}")
    if state is not None:
        from_trainer_state(state, str(state_path), s)
    if meta is not None:
        s.update(meta.get("settings") or {}, "recording callback meta.json", only_known=True)
    if settings_file is not None:
        s.update(load_file(settings_file), str(settings_file))
    s.update(assignments, "--set")
    return s

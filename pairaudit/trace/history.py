"""``log_history`` analysis: the first logged training value that is non-finite or jumps.

``trainer_state.json`` is written into each ``checkpoint-N/`` (and into the output folder by
``trainer.save_state()``); the one with the highest ``global_step`` holds the longest history. Its
``log_history`` has one entry per logging step (``logging_steps``). A training entry's ``loss`` and TRL's
metrics (``rewards/margins``, ``logits/chosen``, ...) average every micro-batch since the previous entry, so
a value logged at step s covers the window ``(previous logged step, s]``; ``grad_norm`` is that of step s
alone, but a non-finite update poisons every later step, so the first failing step can be anywhere in the
window. With ``logging_nan_inf_filter`` (the default) transformers replaces a non-finite loss by the running
mean before logging it: then the loss hides the failure and ``grad_norm`` / the DPO metrics show it.

A jump is a value whose robust z-score (median / MAD of the previous ``JUMP_HISTORY`` values of the same
metric, scale floored at 1% of the median) exceeds ``jump_z``; only upward jumps of ``loss`` and ``grad_norm``
are looked for by default (DPO metrics drift by design).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pairaudit.errors import InputError
from pairaudit.schema import finite_or_none
from pairaudit.trace.settings import MAX_STEPS

SKIP_KEYS = {"step", "epoch", "learning_rate", "num_tokens", "num_input_tokens_seen", "total_flos"}
JUMP_METRICS = ("loss", "grad_norm")
JUMP_HISTORY = 50
MIN_HISTORY = 5


@dataclass
class Event:
    """The first failing logging window."""

    kind: str  # nonfinite | jump | chosen (a step the user asked for)
    step: int  # the logged step
    first_step: int  # first step of the window the logged values cover
    metrics: dict[str, float] = field(default_factory=dict)
    detail: str = ""
    source: str = "log_history"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "step": self.step, "first_step": self.first_step, "last_step": self.step,
                "metrics": {k: _num(v) for k, v in sorted(self.metrics.items())}, "detail": self.detail,
                "source": self.source}


@dataclass
class History:
    entries: list[dict[str, Any]]  # training entries, by step
    state_path: Path | None
    event: Event | None
    first_nonfinite: Event | None
    first_jump: Event | None

    def window_of(self, step: int) -> tuple[int, int]:
        """(first, last) step of the logging window that contains ``step``."""
        logged = [e["step"] for e in self.entries]
        prev = 0
        for s in logged:
            if s >= step:
                return prev + 1, s
            prev = s
        return prev + 1, step

    def previous_window(self, first: int) -> tuple[int, int] | None:
        if first <= 1:
            return None
        return self.window_of(first - 1)


def _num(v: float) -> float | str:
    return v if math.isfinite(v) else str(v)


def find_state(run_dir: Path, notes: list[str] | None = None) -> tuple[dict[str, Any] | None, Path | None]:
    """The ``trainer_state.json`` with the highest ``global_step`` in ``run_dir`` or its checkpoints. A damaged
    one (not JSON, not a trainer state) is skipped, with a line in ``notes``, when another one can be read; when
    none can, an InputError whose fix is a command that works (move it aside and trace a given step)."""
    best: tuple[int, Path, dict[str, Any]] | None = None
    damaged: list[tuple[Path, str, str | None]] = []
    for path in [run_dir / "trainer_state.json", *run_dir.glob("checkpoint-*/trainer_state.json")]:
        if not path.is_file():
            continue
        state, problem, expected = _read_state(path)
        if state is None:
            damaged.append((path, problem or "", expected))
            continue
        step = state.get("global_step")
        key = (step if isinstance(step, int) and not isinstance(step, bool) else 0), len(state.get("log_history") or [])
        if best is None or key > (best[0], len(best[2].get("log_history") or [])):
            best = (key[0], path, state)
    if damaged and best is None:
        path, problem, expected = damaged[0]
        raise InputError(problem, expected=expected, fix=state_fix(run_dir, path))
    for _, problem, _ in damaged:
        if notes is not None and best is not None:
            notes.append(f"{problem}: ignored, {best[1]} was read instead")
    return (best[2], best[1]) if best else (None, None)


def state_fix(run_dir: Path, path: Path) -> str:
    """A command that works without the damaged ``path``: move it aside and trace a given step."""
    import shlex

    return (f"restore {path} from the trainer's output, or move it aside and trace a given step: "
            f"mv {shlex.quote(str(path))} {shlex.quote(str(path) + '.damaged')} && pairaudit trace "
            f"{shlex.quote(str(run_dir))} --data DATA --step N")


def _read_state(path: Path) -> tuple[dict[str, Any] | None, str | None, str | None]:
    """(state, None, None), or (None, what is wrong, what was expected)."""
    try:
        state = json.loads(path.read_text(encoding="utf-8"))  # accepts NaN / Infinity literals
    except (OSError, ValueError, RecursionError) as exc:
        return None, f"{path} is not readable JSON: {str(exc)[:200]}", None
    if not isinstance(state, dict) or not isinstance(state.get("log_history", []), list):
        what = type(state).__name__ if not isinstance(state, dict) else "log_history " + type(
            state["log_history"]).__name__
        return None, f"{path} is not a trainer_state.json: it holds a {what}", \
            'an object with "global_step" and a "log_history" list'
    return state, None, None


def training_entries(log_history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-logging-step training entries (evaluation entries and the final summary left out), one per step."""
    out: dict[int, dict[str, Any]] = {}
    for n, e in enumerate(log_history):
        if not isinstance(e, dict) or "step" not in e:
            continue
        if any(str(k).startswith(("eval_", "test_")) for k in e) or "train_runtime" in e:
            continue
        # a value some loggers write as a string ("NaN", "Infinity") counts as the number it names
        vals = {k: x for k, v in e.items() if k not in SKIP_KEYS and (x := finite_or_none(v)) is not None}
        if not vals:
            continue
        step = e["step"]
        if isinstance(step, float) and step.is_integer():
            step = int(step)
        if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= MAX_STEPS:
            raise InputError(f"log_history[{n}].step = {str(step)[:40]!r} is not a step number",
                             expected=f"a whole number in [0, {MAX_STEPS:,}]",
                             fix="correct that entry of trainer_state.json's log_history to the step the trainer "
                                 "logged, or move the file aside and trace a given step: pairaudit trace RUN_DIR "
                                 "--data DATA --step N")
        out.setdefault(step, {"step": step, "epoch": e.get("epoch")}).update(vals)
    return [out[s] for s in sorted(out)]


def analyse(log_history: list[dict[str, Any]], *, state_path: Path | None = None, jump_z: float = 10.0,
            jump_metrics: tuple[str, ...] = JUMP_METRICS) -> History:
    entries = training_entries(log_history)
    first_bad: Event | None = None
    first_jump: Event | None = None
    past: dict[str, list[float]] = {}
    prev_step = 0
    for e in entries:
        values = {k: float(v) for k, v in e.items() if k not in ("step", "epoch")}
        bad = {k: v for k, v in values.items() if not math.isfinite(v)}
        if bad and first_bad is None:
            first_bad = Event("nonfinite", e["step"], prev_step + 1, bad,
                              "non-finite " + ", ".join(f"{k}={v}" for k, v in sorted(bad.items())))
        if first_jump is None and first_bad is None:
            jumps = {}
            for k in jump_metrics:
                hist = past.get(k, [])[-JUMP_HISTORY:]
                if k in values and math.isfinite(values[k]) and len(hist) >= MIN_HISTORY:
                    med = float(np.median(hist))
                    scale = max(1.4826 * float(np.median(np.abs(np.asarray(hist) - med))), 0.01 * abs(med), 1e-8)
                    z = (values[k] - med) / scale
                    if z > jump_z:
                        jumps[k] = values[k]
                        jumps[f"{k}_robust_z"] = round(z, 2)
            if jumps:
                first_jump = Event("jump", e["step"], prev_step + 1, jumps, "jump " + ", ".join(
                    f"{k}={v:.4g} (robust z {jumps[k + '_robust_z']:.1f} > {jump_z:g})" for k, v in jumps.items()
                    if not k.endswith("_robust_z")))
        for k, v in values.items():
            if math.isfinite(v):
                past.setdefault(k, []).append(v)
        prev_step = e["step"]
    candidates = [ev for ev in (first_bad, first_jump) if ev is not None]
    event = min(candidates, key=lambda ev: ev.step) if candidates else None
    return History(entries, state_path, event, first_bad, first_jump)

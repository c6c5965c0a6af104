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
metric, scale floored at 1% of the median) exceeds ``jump_z``, or, from the second logged value on, a value
``MAGNITUDE`` times (two orders of magnitude) its running median and ten times anything logged before (a
finite blow-up: ``learning_rate=1e3`` takes the DPO loss from 0.69 to 1e8 at step 2); only upward jumps of
``loss`` and ``grad_norm`` are looked for by default (DPO metrics drift by design).

A collapse is a logged state a training model only reaches when it is broken, after the run was in another
state before: ``grad_norm`` exactly 0, TRL's ``logits/chosen`` and ``logits/rejected`` exactly 0, ``entropy`` at
ln(vocabulary) (a uniform output distribution), or the DPO loss pinned at ln 2 with both rewards exactly 0.

The failing step is the first of a non-finite value, a jump and a collapse; :attr:`Event.kind` says which.
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
MAGNITUDE = 100.0  # a finite blow-up: this many times the running median
LN2 = math.log(2.0)


@dataclass
class Event:
    """The first failing logging window."""

    kind: str  # nonfinite | jump | collapse | chosen (a step the user asked for)
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
    first_collapse: Event | None = None

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
    top: dict[str, Any] | None = None
    for path in [run_dir / "trainer_state.json", *sorted(run_dir.glob("checkpoint-*/trainer_state.json"))]:
        if not path.is_file():
            continue
        state, problem, expected = _read_state(path)
        if state is not None and path.parent != run_dir:
            problem = _not_this_run(path, state, top)
            state = None if problem else state
        if state is None:
            damaged.append((path, problem or "", expected))
            continue
        if path.parent == run_dir:
            top = state
        step = state.get("global_step")
        key = (step if isinstance(step, int) and not isinstance(step, bool) else 0), len(state.get("log_history") or [])
        if best is None or key > (best[0], len(best[2].get("log_history") or [])):
            best = (key[0], path, state)
    if damaged and best is None:  # every state is damaged: all of them named, one fix for all
        _, problem, expected = damaged[0]
        if len(damaged) > 1:
            problem += "; also damaged: " + "; ".join(p for _, p, _ in damaged[1:])
        raise InputError(problem, expected=expected, fix=state_fix(run_dir, [p for p, _, _ in damaged]))
    for _, problem, _ in damaged:
        if notes is not None and best is not None:
            notes.append(f"{problem}: ignored, {best[1]} was read instead")
    return (best[2], best[1]) if best else (None, None)


def _not_this_run(path: Path, state: dict[str, Any], top: dict[str, Any] | None) -> str | None:
    """Why a checkpoint's readable state is not this run's, or None: the trainer saves the state of step N in
    ``checkpoint-N``, and no checkpoint of the run goes beyond the ``max_steps`` of its own final state (a stale
    checkpoint of an earlier, longer run left in the output folder would otherwise win as the latest)."""
    from pairaudit.trace.checkpoints import checkpoint_step

    step, named = state.get("global_step"), checkpoint_step(path.parent)
    if not isinstance(step, int) or isinstance(step, bool):
        return None
    if named >= 0 and step != named:
        return f"{path} says global_step {step} in the folder of step {named}: not that checkpoint's state"
    end = (top or {}).get("max_steps")
    if isinstance(end, int) and not isinstance(end, bool) and end > 0 and step > end:
        return (f"{path} is at step {step}, beyond the max_steps {end} of the run's trainer_state.json "
                "(a checkpoint of an earlier, longer run?)")
    return None


def state_fix(run_dir: Path, paths: list[Path]) -> str:
    """A command that works without the damaged ``paths``: move them aside and trace a given step."""
    import shlex

    moves = " && ".join(f"mv {shlex.quote(str(p))} {shlex.quote(str(p) + '.damaged')}" for p in paths)
    which = str(paths[0]) if len(paths) == 1 else f"these {len(paths)} files"
    return (f"restore {which} from the trainer's output, or move {'it' if len(paths) == 1 else 'them'} aside and "
            f"trace a given step: {moves} && pairaudit trace {shlex.quote(str(run_dir))} --data DATA --step N")


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


def _robust_jump(k: str, v: float, hist: list[float], jump_z: float) -> dict[str, float]:
    if len(hist) < MIN_HISTORY:
        return {}
    med = float(np.median(hist))
    scale = max(1.4826 * float(np.median(np.abs(np.asarray(hist) - med))), 0.01 * abs(med), 1e-8)
    z = (v - med) / scale
    return {k: v, f"{k}_robust_z": round(z, 2)} if z > jump_z else {}


def _magnitude_jump(k: str, v: float, hist: list[float]) -> dict[str, float]:
    if not hist:
        return {}
    med = float(np.median(hist))
    if med > 0 and v >= MAGNITUDE * med and v >= 10.0 * max(hist):
        return {k: v, f"{k}_times_median": float(f"{v / med:.3g}")}
    return {}


def _jumps(values: dict[str, float], past: dict[str, list[float]], jump_z: float,
           jump_metrics: tuple[str, ...]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in jump_metrics:
        v, hist = values.get(k), past.get(k, [])[-JUMP_HISTORY:]
        if v is None or not math.isfinite(v):
            continue
        out.update(_robust_jump(k, v, hist, jump_z) or _magnitude_jump(k, v, hist))
    return out


def _jump_detail(jumps: dict[str, float], jump_z: float) -> str:
    parts = []
    for k, v in jumps.items():
        if f"{k}_times_median" in jumps:
            parts.append(f"{k}={v:.4g} ({jumps[k + '_times_median']:g} x its running median: a jump by orders of "
                         "magnitude)")
        elif f"{k}_robust_z" in jumps:
            parts.append(f"{k}={v:.4g} (robust z {jumps[k + '_robust_z']:.1f} > {jump_z:g})")
    return "jump " + ", ".join(parts)


def collapsed(values: dict[str, float], vocab_size: int | None) -> dict[str, str]:
    """The broken-model states of one logged entry: name -> what was logged."""
    out: dict[str, str] = {}
    if values.get("grad_norm") == 0.0:
        out["grad_norm"] = "grad_norm exactly 0"
    if values.get("logits/chosen") == 0.0 and values.get("logits/rejected") == 0.0:
        out["logits"] = "logits/chosen and logits/rejected exactly 0"
    ent = values.get("entropy")
    if vocab_size and ent is not None and abs(ent - math.log(vocab_size)) < 0.01:
        out["entropy"] = f"entropy {ent:.4g} = ln(vocabulary {vocab_size}): a uniform output distribution"
    loss = values.get("loss")
    if loss is not None and abs(loss - LN2) < 1e-4 and values.get("rewards/chosen") == 0.0 \
            and values.get("rewards/rejected") == 0.0:
        out["dpo_ln2"] = "DPO loss pinned at ln 2 with both rewards exactly 0"
    return out


def _collapse(values: dict[str, float], seen_healthy: set[str], vocab_size: int | None) -> dict[str, str]:
    """The collapsed states of this entry that the run was out of before (a state it started in is not one)."""
    now = collapsed(values, vocab_size)
    for name in _STATE_KEYS:
        if name not in now and all(k in values for k in _STATE_KEYS[name]):
            seen_healthy.add(name)
    return {k: v for k, v in now.items() if k in seen_healthy}


_STATE_KEYS = {"grad_norm": ("grad_norm",), "logits": ("logits/chosen", "logits/rejected"), "entropy": ("entropy",),
               "dpo_ln2": ("loss", "rewards/chosen", "rewards/rejected")}


def analyse(log_history: list[dict[str, Any]], *, state_path: Path | None = None, jump_z: float = 10.0,
            jump_metrics: tuple[str, ...] = JUMP_METRICS, vocab_size: int | None = None) -> History:
    entries = training_entries(log_history)
    first: dict[str, Event | None] = {"nonfinite": None, "jump": None, "collapse": None}
    past: dict[str, list[float]] = {}
    healthy: set[str] = set()
    prev_step = 0
    for e in entries:
        values = {k: float(v) for k, v in e.items() if k not in ("step", "epoch")}
        bad = {k: v for k, v in values.items() if not math.isfinite(v)}
        if bad and first["nonfinite"] is None:
            first["nonfinite"] = Event("nonfinite", e["step"], prev_step + 1, bad,
                                       "non-finite " + ", ".join(f"{k}={v}" for k, v in sorted(bad.items())))
        if first["jump"] is None and first["nonfinite"] is None:
            jumps = _jumps(values, past, jump_z, jump_metrics)
            if jumps:
                first["jump"] = Event("jump", e["step"], prev_step + 1, jumps, _jump_detail(jumps, jump_z))
        states = _collapse(values, healthy, vocab_size)
        if states and first["collapse"] is None:
            first["collapse"] = Event("collapse", e["step"], prev_step + 1,
                                      {k: values[k] for k in ("grad_norm", "loss", "entropy") if k in values},
                                      "collapse: " + "; ".join(states.values()))
        for k, v in values.items():
            if math.isfinite(v):
                past.setdefault(k, []).append(v)
        prev_step = e["step"]
    candidates = [ev for ev in first.values() if ev is not None]
    event = min(candidates, key=lambda ev: ev.step) if candidates else None
    return History(entries, state_path, event, first["nonfinite"], first["jump"], first["collapse"])

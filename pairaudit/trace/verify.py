"""Whether the rows a trace names can be trusted: the reconstruction's own checks and the settings it assumed.

A reconstructed order is *unreliable* (no rows are presented as found, the CLI exits non-zero) when

- the epochs the run logged at its logged steps differ from the reconstruction's (a setting that sizes the
  epoch is wrong: batch size, accumulation, world size, ``dataloader_drop_last``, the row filter), or
  ``trainer_state.json``'s ``max_steps`` differs from the reconstructed one;
- a setting that changes the order was found nowhere (its default was assumed), except where the run itself
  confirms or does not need it: ``world_size`` when the logged epochs were compared inside an epoch (a wrong
  world size changes every fractional epoch), ``resumed_at`` unless ``ignore_data_skip`` (the seeded sampler
  gives a resumed run the order of an uninterrupted one), the tokenizer / ``max_length`` /
  ``truncation_mode`` for a plain ``transformers.Trainer`` (no row filter);
- with a record, the trainer dataset the callback saw has another length than pairaudit's emulation of the
  trainer's filter while the record holds trainer indices (not source rows).
"""

from __future__ import annotations

from typing import Any

from pairaudit.trace import history, order
from pairaudit.trace.settings import SPEC, TraceSettings

RECORD_HINT = ("or record the next run with pairaudit.trace.recorder.add_pairaudit_callback(trainer, data=...) "
               "(then the rows come from the record)")


def epoch_check(hist: history.History | None, sched: order.Schedule) -> tuple[list[str], int]:
    """(mismatches, number of logged steps compared strictly inside an epoch)."""
    out: list[str] = []
    inside = 0
    if hist is None:
        return out, inside
    for e in hist.entries:
        step, logged = e["step"], e.get("epoch")
        mine = sched.epoch_at_step.get(step)
        if mine is None or not isinstance(logged, (int, float)):
            continue
        if abs(mine - float(logged)) > 1e-3 * max(1.0, abs(mine)):
            if len(out) < 3:
                out.append(f"at step {step} the run logged epoch {logged:g}, the reconstruction gives {mine:.4f}: a "
                           "setting that sizes the epoch is wrong (train_batch_size, gradient_accumulation_steps, "
                           "world_size, dataloader_drop_last, or the trainer's row filter)")
        elif abs(mine - round(mine)) > 1e-6:
            inside += 1
    return out, inside


def unverified(s: TraceSettings, *, inside_epoch: int, reconstructed: bool) -> list[str]:
    """Order-changing settings that were assumed and matter for this run."""
    if not reconstructed:
        return []
    out = []
    for k in s.assumed:
        if k == "world_size" and inside_epoch > 0:
            continue
        if k == "resumed_at" and not s.ignore_data_skip:
            continue
        if k in ("tokenizer", "max_length", "truncation_mode") and s.trainer != "trl-dpo":
            continue
        out.append(k)
    return out


FIRST = ("seed", "gradient_accumulation_steps", "max_length", "world_size", "data_seed", "train_batch_size")


def what_to_pass(s: TraceSettings, keys: list[str]) -> str:
    keys = sorted(keys, key=lambda k: (FIRST.index(k) if k in FIRST else len(FIRST), k))
    parts = " ".join(f"--set {k}=..." for k in keys[:5]) + (f" (and {len(keys) - 5} more: see "
                                                             "reliability.assumed in trace.json)" if len(keys) > 5 else "")
    return (f"pass the run's values with {parts} " if parts else "check the settings listed in trace.json, pass the "
            "right ones with --set KEY=VALUE ") + RECORD_HINT


def assess(s: TraceSettings, order_info: dict[str, Any], *, inside_epoch: int) -> dict[str, Any]:
    """``{"reliable": bool, "problems": [...], "assumed": [...], "fix": str}``."""
    reconstructed = order_info.get("source") == "reconstructed"
    problems = [c for c in order_info.get("checks") or [] if not c.startswith("the record does not cover")]
    keys = unverified(s, inside_epoch=inside_epoch, reconstructed=reconstructed)
    for k in keys:
        problems.append(f"{k} was found nowhere in the run folder; the default {s.values[k]!r} was assumed "
                        f"({SPEC[k][2]})")
    bad_epoch = [k for k in ("gradient_accumulation_steps", "train_batch_size", "world_size", "dataloader_drop_last")
                 if any("logged epoch" in p for p in problems)]
    return {"reliable": not problems, "problems": problems, "assumed": keys,
            "fix": what_to_pass(s, keys or bad_epoch)}

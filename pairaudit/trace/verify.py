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

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pairaudit.trace import history, order
from pairaudit.trace.dataset import Candidate
from pairaudit.trace.record import StepTable
from pairaudit.trace.rows import TokenLengths, kept_lengths
from pairaudit.trace.settings import SPEC, TraceSettings

PASSED, FAILED, NOT_CHECKED = "passed", "failed", "not_checked"

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


DATASET_HINT = ("pass --audit DIR when the run trained on a scan's clean output (audit.clean), or --data the file it "
                "trained on")
#: the settings that size an epoch (what a logged epoch confirms)
EPOCH_KEYS = ("gradient_accumulation_steps", "train_batch_size", "world_size", "dataloader_drop_last")


def unsized_epoch(s: TraceSettings) -> list[str]:
    """The settings that size an epoch that neither the run folder nor ``--set`` gave."""
    return [k for k in EPOCH_KEYS if k not in s.sources]


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
    problems += [f"{c['check']}: {c['detail']}" for c in order_info.get("verification") or []
                 if c["result"] == FAILED or (c["result"] == NOT_CHECKED and c.get("matters"))]
    keys = unverified(s, inside_epoch=inside_epoch, reconstructed=reconstructed)
    for k in keys:
        problems.append(f"{k} was found nowhere in the run folder; the default {s.values[k]!r} was assumed "
                        f"({SPEC[k][2]})")
    bad_epoch = list(EPOCH_KEYS) if any("the run logged epoch" in p for p in problems) else []
    if any(p.startswith("epochs: no logged epoch") for p in problems):  # only what no one has given yet
        bad_epoch = unsized_epoch(s)
    fix = what_to_pass(s, list(dict.fromkeys(keys + bad_epoch)))
    if any(p.startswith(("num_tokens:", "trainer_rows:", "the run's logs fit")) for p in problems):
        fix = (f"{DATASET_HINT}; or {fix}" if keys or bad_epoch else f"{DATASET_HINT}, {RECORD_HINT}")
    return {"reliable": not problems, "problems": problems, "assumed": keys, "fix": fix}


def _check(name: str, result: str, detail: str, *, matters: bool = True) -> dict[str, Any]:
    return {"check": name, "result": result, "detail": detail, "matters": matters}


def epoch_result(hist: history.History | None, sched: order.Schedule,
                 s: TraceSettings) -> tuple[dict[str, Any], int]:
    """The logged epoch at every logged step against the reconstruction (it fixes the micro-batches per epoch).
    With no logged epoch, it matters only while a setting that sizes the epoch was found nowhere: once the run
    folder or ``--set`` gave all of them, nothing more can be asked of the user."""
    mismatches, inside = epoch_check(hist, sched)
    compared = sum(1 for e in (hist.entries if hist else []) if e["step"] in sched.epoch_at_step
                   and isinstance(e.get("epoch"), (int, float)))
    if mismatches:
        return _check("epochs", FAILED, mismatches[0]), inside
    if not compared:
        missing = unsized_epoch(s)
        why = (f"; {', '.join(missing)} found nowhere" if missing else
               "; the settings that size an epoch were given (run folder or --set), unconfirmed by the run")
        return _check("epochs", NOT_CHECKED, "no logged epoch up to the failing step" + why,
                      matters=bool(missing)), inside
    return _check("epochs", PASSED, f"the logged epoch equals the reconstruction's at all {compared} logged steps "
                                    f"({sched.steps_in_epoch} micro-batches an epoch)"), inside


def row_tokens(lengths: TokenLengths, max_length: int | None) -> dict[int, int]:
    """Tokens TRL's collator feeds the model for each row: prompt+chosen and prompt+rejected, each cut to
    ``max_length`` (the ``attention_mask`` sum TRL adds to ``num_tokens``)."""
    out = {}
    for row, p, c, r in zip(lengths.rows.tolist(), lengths.prompt.tolist(), lengths.chosen.tolist(),
                            lengths.rejected.tolist()):
        if p >= 0:
            out[row] = sum(sum(kept_lengths(p, x, max_length, lengths.truncation_mode)) for x in (c, r))
    return out


def _logged_tokens(log_history: list[dict[str, Any]], last: int) -> list[tuple[int, float]]:
    out: dict[int, float] = {}
    for e in log_history:
        if isinstance(e, dict) and isinstance(e.get("step"), int) and 0 < e["step"] <= last \
                and isinstance(e.get("num_tokens"), (int, float)) and math.isfinite(e["num_tokens"]):
            out[e["step"]] = float(e["num_tokens"])
    return sorted(out.items())


def token_result(log_history: list[dict[str, Any]], table: StepTable, lengths: TokenLengths | None,
                 s: TraceSettings, last: int, restarts: list[int]) -> dict[str, Any]:
    """TRL's cumulative ``num_tokens`` at each logged step against the reconstructed batches' token counts (a new
    trainer counts from 0: after a resume the count may restart at a checkpoint step)."""
    logged = _logged_tokens(log_history, last)
    if not logged or lengths is None:
        return _check("num_tokens", NOT_CHECKED, "the run logged no num_tokens (TRL's DPOTrainer logs it)" if lengths
                      else "token counts are TRL's: not checked for this trainer", matters=False)
    per_row = row_tokens(lengths, s.max_length)
    d = table.data
    per_step: dict[int, int] = {}
    for st, row in zip(d["step"].tolist(), d["row"].tolist()):
        per_step[st] = per_step.get(st, 0) + per_row.get(row, -10 ** 12)
    cum = np.cumsum([per_step.get(i, 0) for i in range(last + 1)])
    prev = 0
    for st, val in logged:
        want = {int(cum[st] - cum[r]) for r in [prev, 0, *restarts] if r < st}
        if int(val) not in want:
            return _check("num_tokens", FAILED, f"at step {st} the run logged num_tokens={val:g}, the reconstructed "
                                                f"batches hold {int(cum[st] - cum[prev]):+d} since step {prev} "
                                                f"({int(cum[st])} in all): another dataset or order than the run's")
        prev = st
    return _check("num_tokens", PASSED, f"TRL's num_tokens equals the reconstructed batches' token count at all "
                                        f"{len(logged)} logged steps up to {logged[-1][0]}")


def max_steps_result(state: dict[str, Any] | None, sched: order.Schedule) -> dict[str, Any]:
    ms = (state or {}).get("max_steps")
    if not isinstance(ms, int) or ms <= 0:
        return _check("max_steps", NOT_CHECKED, "trainer_state.json records no max_steps", matters=False)
    if ms != sched.max_steps:
        return _check("max_steps", FAILED, f"trainer_state.json says max_steps={ms}, the reconstruction "
                                           f"{sched.max_steps}")
    return _check("max_steps", PASSED, f"max_steps={ms} as reconstructed")


def rows_result(s: TraceSettings, n: int, epochs: dict[str, Any], inside: int, tokens: dict[str, Any],
                single: bool) -> dict[str, Any]:
    """Whether the trainer dataset's row count (and so the sampler's permutation) is pinned by the run's logs."""
    if tokens["result"] == PASSED:
        return _check("trainer_rows", PASSED, f"{n} rows: the per-step token counts match")
    if s.trainer == "transformers" and single:
        return _check("trainer_rows", PASSED, f"{n} rows: a transformers.Trainer keeps every record of --data",
                      matters=False)
    if epochs["result"] == PASSED and inside:
        mb = [order.micro_batches(s, k) for k in (n - 1, n, n + 1)]
        if mb[0] != mb[1] != mb[2]:
            return _check("trainer_rows", PASSED, f"{n} rows: the logged epochs fix it ({mb[1]} micro-batches, "
                                                  f"{n - 1} or {n + 1} rows would give {mb[0]} / {mb[2]})")
        return _check("trainer_rows", NOT_CHECKED, f"the logged epochs fit {n} rows ({mb[1]} micro-batches an "
                                                   "epoch) but also a neighbouring count, and no num_tokens was "
                                                   "logged to tell: the sampler's order depends on the exact count")
    return _check("trainer_rows", NOT_CHECKED, f"nothing the run logged confirms the {n} rows of the reconstruction")


@dataclass
class Reconstruction:
    """One candidate dataset's reconstructed order and how it fared against the run's logs."""

    candidate: Candidate
    steps: StepTable
    sched: order.Schedule
    checks: list[dict[str, Any]] = field(default_factory=list)
    inside_epoch: int = 0

    @property
    def fits(self) -> bool:
        return not any(c["result"] == FAILED for c in self.checks)

    @property
    def pinned(self) -> bool:
        return any(c["check"] == "trainer_rows" and c["result"] == PASSED for c in self.checks)

    def summary(self) -> dict[str, Any]:
        return {**self.candidate.to_json(), "fits": self.fits, "pinned": self.pinned,
                "failed": [f"{c['check']}: {c['detail']}" for c in self.checks if c["result"] == FAILED]}


def reconstruct(cand: Candidate, s: TraceSettings, *, hist: history.History | None, state: dict[str, Any] | None,
                lengths: TokenLengths | None, last: int, single: bool, restarts: list[int]) -> Reconstruction:
    """Rebuild the order for ``cand`` up to step ``last`` and check it against everything the run logged."""
    table, sched = order.reconstruct(s, len(cand.rows), last_step=last)
    steps = table.with_rows(cand.rows)
    epochs, inside = epoch_result(hist, sched, s)
    tokens = token_result((state or {}).get("log_history") or [], steps, lengths, s, last, restarts)
    checks = [epochs, tokens, max_steps_result(state, sched)]
    checks.append(rows_result(s, len(cand.rows), epochs, inside, tokens, single))
    return Reconstruction(cand, steps, sched, checks, inside)


def choose(recs: list[Reconstruction]) -> tuple[Reconstruction, list[str]]:
    """The reconstruction the run's logs fit, and the problems that keep the choice open (empty: one fits)."""
    fitting = [r for r in recs if r.fits]
    distinct = {tuple(r.candidate.rows.tolist()) for r in fitting}
    if len(fitting) == 1 or (fitting and len(distinct) == 1):
        return fitting[0], []
    if not fitting:
        return recs[0], []  # its own failed checks say why
    names = " and ".join(f"the {r.candidate.name} ({len(r.candidate.rows)} rows)" for r in fitting)
    pinned = [r for r in fitting if r.pinned]
    if len(pinned) == 1:
        return pinned[0], []
    return fitting[0], [f"the run's logs fit {names}: which one it trained on is open (log num_tokens, or pass "
                        "--data the file it trained on)"]

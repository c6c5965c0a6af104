"""Optimizer step -> trainer dataset indices, reproduced with the installed transformers + accelerate.

Rather than re-implementing the samplers, this drives the same library objects the trainer builds, on an
index-only dataset, and replays the trainer's epoch loop:

- ``transformers.Trainer._get_train_sampler`` (5.x): ``RandomSampler(train_dataset)`` (or ``SequentialSampler``
  for ``train_sampling_strategy="sequential"``); ``Trainer._get_dataloader``: ``DataLoader(batch_size=
  _train_batch_size, sampler=..., drop_last=dataloader_drop_last)`` passed to ``accelerator.prepare``;
- ``accelerate.data_loader.prepare_data_loader``: the ``RandomSampler`` becomes a ``SeedableRandomSampler``
  seeded with ``data_seed`` (``Trainer.create_accelerator_and_postprocess`` passes ``args.data_seed``; when it is
  None the sampler takes ``torch.random.initial_seed()``, i.e. ``args.seed`` set by ``set_seed`` in
  ``Trainer.__init__``) and reseeded every epoch with ``initial_seed + epoch``; with several processes the
  batch sampler is wrapped in ``BatchSamplerShard`` (``split_batches`` / ``even_batches``: batch k goes to
  process k mod world_size, or each batch is cut in world_size slices; the tail is padded from the start);
- ``Trainer.set_initial_training_values``: ``num_update_steps_per_epoch = ceil(len(dataloader) / GA)``,
  ``max_steps`` from ``max_steps`` or ``ceil(num_train_epochs * num_update_steps_per_epoch)``;
- ``Trainer._run_epoch``: ``train_dataloader.set_epoch(epoch)`` and the explicit ``set_epoch`` on the
  wrapped batch sampler's sampler; each optimizer step takes GA micro-batches, the epoch's last step takes
  the remainder (``steps_in_epoch % GA``) - a partial accumulation window is one (smaller) optimizer step;
- ``Trainer._init_training_state`` + ``accelerate.skip_first_batches``: a run resumed at global step G starts
  a fresh process (fresh sampler objects) at epoch ``G // num_update_steps_per_epoch`` and skips
  ``(G % num_update_steps_per_epoch) * GA`` micro-batches of it (unless ``ignore_data_skip``).

Not reproducible, and refused with the reason: ``dispatch_batches=True`` (batches cut by the main process),
``use_seedable_sampler=False`` (the epoch order comes from the global torch RNG at that moment),
``group_by_length`` / ``batch_rebalance`` samplers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from pairaudit.errors import ConfigError, require
from pairaudit.trace.record import STEP_DTYPE, StepTable
from pairaudit.trace.settings import TraceSettings


@dataclass
class Schedule:
    """Sizes the trainer derives from the dataloader (``Trainer.set_initial_training_values``)."""

    steps_in_epoch: int  # micro-batches per epoch per process
    update_steps_per_epoch: int
    max_steps: int
    num_epochs: int
    epoch_at_step: dict[int, float] = field(default_factory=dict)  # TrainerState.epoch after each step (rank 0)

    def to_json(self) -> dict[str, Any]:
        return {"steps_in_epoch": self.steps_in_epoch, "update_steps_per_epoch": self.update_steps_per_epoch,
                "max_steps": self.max_steps, "num_epochs": self.num_epochs}


class _Indices:
    """A map-style dataset whose item i is i."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:
        return int(i)


def _collate(items: list[int]) -> list[int]:
    return list(items)


def check_supported(s: TraceSettings) -> None:
    why = None
    if s.dispatch_batches:
        why = ("dispatch_batches=True: the main process reads whole batches and slices them; pairaudit does not "
               "reproduce that path")
    elif s.train_sampling_strategy not in ("random", "sequential"):
        why = (f"train_sampling_strategy={s.train_sampling_strategy!r}: that sampler orders rows by length with its "
               "own unseeded randomness")
    elif s.train_sampling_strategy == "random" and not s.use_seedable_sampler:
        why = ("use_seedable_sampler=False: each epoch's order is drawn from the global torch RNG at that moment "
               "(it depends on everything the run did before)")
    if why:
        raise ConfigError(f"the data order of this run cannot be reproduced: {why}",
                          fix="record the next run with pairaudit.trace.recorder.PairauditCallback")


def _loader(s: TraceSettings, n: int, rank: int) -> Any:
    require("torch", "trace", "pairaudit trace")
    require("accelerate", "trace", "pairaudit trace")
    from accelerate.data_loader import prepare_data_loader
    from torch.utils.data import DataLoader, RandomSampler, SequentialSampler

    ds = _Indices(n)
    sampler = RandomSampler(ds) if s.train_sampling_strategy == "random" else SequentialSampler(ds)
    dl = DataLoader(ds, batch_size=s.train_batch_size, sampler=sampler, drop_last=s.dataloader_drop_last,
                    collate_fn=_collate)
    seed = s.data_seed if s.data_seed is not None else s.seed
    return prepare_data_loader(dl, None, num_processes=s.world_size, process_index=rank,
                               split_batches=s.split_batches, put_on_device=False, rng_types=None,
                               dispatch_batches=False, even_batches=s.even_batches,
                               use_seedable_sampler=s.use_seedable_sampler, data_seed=seed)


def _set_epoch(loader: Any, epoch: int) -> None:
    """Exactly what ``Trainer._run_epoch`` does before iterating."""
    if hasattr(loader, "set_epoch"):
        loader.set_epoch(epoch)
    shard_wrapper = getattr(loader, "batch_sampler", None)
    underlying = getattr(shard_wrapper, "batch_sampler", None)
    if hasattr(underlying, "set_epoch"):
        underlying.set_epoch(epoch)


def schedule(s: TraceSettings, steps_in_epoch: int) -> Schedule:
    ga = s.gradient_accumulation_steps
    nupe = max(steps_in_epoch // ga + int(steps_in_epoch % ga > 0), 1)
    if s.max_steps and s.max_steps > 0:
        max_steps = s.max_steps
        epochs = max_steps // nupe + int(max_steps % nupe > 0)
    else:
        max_steps = math.ceil(s.num_train_epochs * nupe)
        epochs = math.ceil(s.num_train_epochs)
    return Schedule(steps_in_epoch, nupe, max_steps, epochs)


def _rank_steps(s: TraceSettings, n: int, rank: int, last_step: int, sched_out: list[Schedule]) -> list[np.ndarray]:
    from accelerate import skip_first_batches

    ga = s.gradient_accumulation_steps
    starts = [0] + [g for g in s.resumed_at if g > 0]
    parts: list[np.ndarray] = []
    for session, start in enumerate(starts):
        end = starts[session + 1] if session + 1 < len(starts) else None
        dl = _loader(s, n, rank)  # a resumed run is a new process: fresh sampler objects
        sch = schedule(s, len(dl))
        if not sched_out:
            sched_out.append(sch)
        stop = min(x for x in (sch.max_steps, end, last_step) if x is not None)
        global_step = start
        epochs_trained = start // sch.update_steps_per_epoch
        skip = 0 if s.ignore_data_skip else (start % sch.update_steps_per_epoch) * ga
        for epoch in range(epochs_trained, sch.num_epochs):
            if global_step >= stop:
                break
            loader, seen, first_update = dl, 0, 0
            if epoch == epochs_trained and start > 0 and skip > 0:
                loader, seen, first_update = skip_first_batches(dl, skip), skip, skip // ga
            _set_epoch(loader, epoch)
            it = iter(loader)
            remainder = sch.steps_in_epoch % ga or ga
            for update in range(first_update, sch.update_steps_per_epoch):
                batches = list(islice(it, ga if update != sch.update_steps_per_epoch - 1 else remainder))
                if not batches:
                    break
                global_step += 1
                seen += len(batches)
                if rank == 0:
                    sched_out[0].epoch_at_step[global_step] = epoch + seen / sch.steps_in_epoch
                sizes = [len(b) for b in batches]
                rec = np.zeros(sum(sizes), dtype=STEP_DTYPE)
                rec["step"], rec["epoch"], rec["rank"], rec["session"] = global_step, epoch, rank, session
                rec["micro"] = np.repeat(np.arange(len(batches)), sizes)
                rec["index"] = [i for b in batches for i in b]
                rec["row"] = -1
                parts.append(rec)
                if global_step >= stop:
                    break
    return parts


def micro_batches(s: TraceSettings, n: int) -> int:
    """Micro-batches per epoch per process for a trainer dataset of ``n`` rows (what the logged epochs fix)."""
    if n <= 0:
        return 0
    require("accelerate", "trace", "pairaudit trace")
    from accelerate.state import GradientState, PartialState

    fresh = {cls: not cls._shared_state for cls in (PartialState, GradientState)}
    try:
        return len(_loader(s, n, 0))
    finally:
        for cls, was_fresh in fresh.items():
            if was_fresh:
                cls._reset_state()


def reconstruct(s: TraceSettings, n: int, *, last_step: int | None = None) -> tuple[StepTable, Schedule]:
    """Every step's trainer dataset indices (``row`` = -1), per process, for a trainer dataset of ``n`` rows.

    ``last_step`` stops early (the steps after a failure are not needed)."""
    check_supported(s)
    if n <= 0:
        raise ConfigError("the trainer dataset is empty: no step can be reconstructed")
    if s.train_batch_size < 1 or s.gradient_accumulation_steps < 1 or s.world_size < 1:
        raise ConfigError("train_batch_size, gradient_accumulation_steps and world_size must be >= 1")
    require("accelerate", "trace", "pairaudit trace")
    from accelerate.state import GradientState, PartialState

    # accelerate keeps process-wide singletons; leave them as they were (a later Trainer in this process
    # must still be able to set up its own distributed state)
    fresh = {cls: not cls._shared_state for cls in (PartialState, GradientState)}
    sched: list[Schedule] = []
    parts: list[np.ndarray] = []
    try:
        for rank in range(s.world_size):
            parts.extend(_rank_steps(s, n, rank, last_step if last_step is not None else 10**18, sched))
    finally:
        for cls, was_fresh in fresh.items():
            if was_fresh:
                cls._reset_state()
    table = StepTable.from_parts(parts).latest()
    return table, sched[0]

"""Training-time integration: a ``transformers.TrainerCallback`` that records the rows of every step.

    from pairaudit.trace.recorder import PairauditCallback, add_pairaudit_callback

    trainer = DPOTrainer(model, args=DPOConfig(...), train_dataset=ds, ...)
    add_pairaudit_callback(trainer, data="pairs.jsonl")   # or callbacks=[PairauditCallback()]
    trainer.train()

It works with any ``transformers.Trainer`` subclass (TRL's trainers included). Under
``OUTPUT_DIR/pairaudit-record/`` it writes (format: :mod:`pairaudit.trace.record`, nothing pickled) the
trainer dataset index and source row of every sample of every optimizer step, per process, flushed after
each step; the settings that decide the order; the training tokenizer; and, on the first non-finite
gradient, logged value or model output, an incident file with the rows of that step and their findings.
``on_nonfinite="stop"`` (default) then drops that step's gradients (so the weights stay those of the last
good step) and stops training; ``"continue"`` only records. ``pairaudit trace OUTPUT_DIR`` reads the record
instead of reconstructing the order.

How rows are captured: the dataloader's dataset gets an instance-level ``__getitems__`` that notes each
fetched index batch (the ``DataLoader`` fetcher calls ``dataset.__getitems__``), and the trainer's own
callback events say how many micro-batches each optimizer step took (``on_substep_end`` per accumulated
micro-batch, ``on_step_end`` per step), so the record is the trainer's ground truth, not a reconstruction.
With ``dataloader_num_workers > 0`` fetching happens in worker processes and nothing can be recorded: the
callback says so and ``pairaudit trace`` reconstructs the order instead.

Importing this module imports transformers (and torch); ``import pairaudit`` does not import it.
"""

from __future__ import annotations

import json
import math
import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np
from transformers import TrainerCallback

from pairaudit.trace.nonfinite import nonfinite_gradients, nonfinite_sequences
from pairaudit.trace.record import EVENTS, RECORD_DIR, STEP_DTYPE, rank_file, write_json_atomic
from pairaudit.trace.recorder_meta import collect_settings, write_meta

__all__ = ["PairauditCallback", "add_pairaudit_callback"]


class PairauditCallback(TrainerCallback):
    """Record the source rows of every optimizer step; react to the first non-finite value.

    ``source_rows``: trainer dataset index -> source row (JSONL physical line / split index). Without it the
    record keeps trainer indices and ``pairaudit trace`` maps them (it knows TRL's row filters).
    ``data``: the source file, to read the failing rows and run pairaudit's per-pair checks on them;
    ``audit``: an existing ``pairaudit scan`` output folder whose findings are used instead.
    ``on_nonfinite``: ``"stop"`` or ``"continue"``. ``check_outputs``: look for non-finite values in the
    model's logits / log-probs per sequence (one ``isfinite`` pass over them per forward).
    """

    def __init__(self, source_rows: Any = None, *, data: str | Path | None = None, audit: str | Path | None = None,
                 on_nonfinite: str = "stop", check_outputs: bool = True, folder: str | Path | None = None) -> None:
        if on_nonfinite not in ("stop", "continue"):
            raise ValueError(f"on_nonfinite={on_nonfinite!r}: expected 'stop' or 'continue'")
        self.source_rows = None if source_rows is None else np.asarray(source_rows, dtype=np.int64)
        self.data, self.audit = data, audit
        self.on_nonfinite, self.check_outputs = on_nonfinite, check_outputs
        self.folder_arg = folder
        self.folder: Path | None = None
        self.fetched: deque[list[int]] = deque()
        self.micro = 0
        self.rank = 0
        self.session = 0
        self.enabled = False
        self.step_flags: dict[int, list[int]] = {}  # micro -> non-finite sequence indices (this step)
        self.step_sizes: dict[int, int] = {}
        self.bad_grad: str | None = None
        self.incident_written = False
        self.last_logged_step = 0
        self.window: list[np.ndarray] = []  # records of the steps since the last log
        self._fh: Any = None
        self._hook: Any = None
        self._settings: dict[str, Any] = {}

    # -- setup -----------------------------------------------------------------------------------
    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, train_dataloader: Any = None,
                       processing_class: Any = None, **kwargs: Any) -> None:
        self.rank = int(getattr(args, "process_index", 0))
        self.folder = Path(self.folder_arg) if self.folder_arg else Path(args.output_dir) / RECORD_DIR
        self.folder.mkdir(parents=True, exist_ok=True)
        path = rank_file(self.folder, self.rank)
        if path.exists():
            raw = path.read_bytes()
            raw = raw[: len(raw) - len(raw) % STEP_DTYPE.itemsize]
            prev = np.frombuffer(raw, dtype=STEP_DTYPE)
            self.session = int(prev["session"].max()) + 1 if len(prev) else 0
        self.last_logged_step = int(state.global_step)
        self._settings = collect_settings(args, state, train_dataloader)
        if self.source_rows is not None and train_dataloader is not None:
            n = self._settings.get("dataset_length")
            if n is not None and n != len(self.source_rows):
                self._event({"kind": "warning", "detail": f"source_rows has {len(self.source_rows)} entries but the "
                             f"trainer dataset has {n} rows: source rows are not recorded"})
                self.source_rows = None
        if int(getattr(args, "dataloader_num_workers", 0) or 0) > 0:
            self._event({"kind": "warning", "detail": "dataloader_num_workers > 0: batches are fetched in worker "
                         "processes, so the rows of each step cannot be recorded; pairaudit trace will reconstruct"})
        elif train_dataloader is not None:
            self._patch_dataset(train_dataloader.dataset)
            self.enabled = True
        if self.check_outputs and model is not None:
            self._hook = model.register_forward_hook(self._forward_hook)
        if self.rank == 0:
            write_meta(self.folder, self._settings, state, processing_class, session=self.session,
                       source_rows=self.source_rows is not None, data=self.data, recording=self.enabled)
        self._fh = open(path, "ab")  # kept open for the run, closed in on_train_end

    def _patch_dataset(self, dataset: Any) -> None:
        original = getattr(dataset, "__getitems__", None)
        fetched = self.fetched

        def __getitems__(indices: list[int]) -> Any:  # the DataLoader looks this name up
            fetched.append([int(i) for i in indices])
            if original is not None:
                return original(indices)
            return [dataset[i] for i in indices]

        dataset.__getitems__ = __getitems__

    # -- per step --------------------------------------------------------------------------------
    def _forward_hook(self, module: Any, inputs: Any, output: Any) -> None:
        if not module.training:
            return
        found = nonfinite_sequences(output)
        if found is not None:
            size, bad = found
            self.step_flags.setdefault(self.micro, []).extend(bad)
            self.step_sizes[self.micro] = size

    def on_substep_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.micro += 1

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        bad = nonfinite_gradients(model) if model is not None else None
        if bad:
            self.bad_grad = bad
            if self.on_nonfinite == "stop":
                model.zero_grad(set_to_none=True)  # the optimizer skips them: weights stay those of the last step

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        step = int(state.global_step)
        n_micro = self.micro + 1
        batches = [self.fetched.popleft() for _ in range(min(n_micro, len(self.fetched)))] if self.enabled else []
        epoch = max(math.ceil(float(state.epoch or 0.0)) - 1, 0)
        rec = self._records(step, epoch, batches)
        if self._fh is not None and len(rec):
            self._fh.write(rec.tobytes())
            self._fh.flush()
        self.window.append(rec)
        events = []
        if self.step_flags:
            events.append({"kind": "output", "detail": "non-finite logits / log-probs", "sequences": self._flagged(batches)})
        if self.bad_grad:
            events.append({"kind": "grad", "detail": self.bad_grad})
        for ev in events:
            self._event({**ev, "step": step, "first_step": step, "last_step": step})
        if events and not self.incident_written:
            self._incident(step, step, rec, events)
        self.micro, self.step_flags, self.step_sizes, self.bad_grad = 0, {}, {}, None
        if events and self.on_nonfinite == "stop":
            control.should_training_stop = True

    def _records(self, step: int, epoch: int, batches: list[list[int]]) -> np.ndarray:
        sizes = [len(b) for b in batches]
        rec = np.zeros(sum(sizes), dtype=STEP_DTYPE)
        if not len(rec):
            return rec
        idx = np.asarray([i for b in batches for i in b], dtype=np.int64)
        rec["step"], rec["epoch"], rec["rank"], rec["session"] = step, epoch, self.rank, self.session
        rec["micro"] = np.repeat(np.arange(len(batches)), sizes)
        rec["index"] = idx
        if self.source_rows is not None:
            ok = (idx >= 0) & (idx < len(self.source_rows))
            rec["row"] = np.where(ok, self.source_rows[np.clip(idx, 0, len(self.source_rows) - 1)], -1)
        else:
            rec["row"] = -1
        return rec

    def _flagged(self, batches: list[list[int]]) -> list[dict[str, Any]]:
        out = []
        for micro, seqs in sorted(self.step_flags.items()):
            batch = batches[micro] if micro < len(batches) else []
            size = self.step_sizes.get(micro, 0)
            for i in sorted(set(seqs)):
                item: dict[str, Any] = {"micro": micro, "sequence": i}
                if batch and size % len(batch) == 0:
                    index = batch[i % len(batch)]
                    item["index"] = index
                    if self.source_rows is not None and 0 <= index < len(self.source_rows):
                        item["row"] = int(self.source_rows[index])
                    if size == 2 * len(batch):  # TRL concatenates [chosen, rejected]
                        item["side"] = "chosen" if i < len(batch) else "rejected"
                out.append(item)
        return out

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        step = int(state.global_step)
        bad = {k: v for k, v in (logs or {}).items()
               if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isfinite(v)}
        if bad:
            ev = {"kind": "log", "step": step, "first_step": self.last_logged_step + 1, "last_step": step,
                  "detail": ", ".join(f"{k}={v}" for k, v in sorted(bad.items()))}
            self._event(ev)
            if not self.incident_written:
                window = np.concatenate(self.window) if self.window else None
                self._incident(ev["first_step"], step, window, [ev])
        self.last_logged_step = step
        self.window = []

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if self._hook is not None:
            self._hook.remove()
            self._hook = None

    # -- outputs ---------------------------------------------------------------------------------
    def _event(self, ev: dict[str, Any]) -> None:
        if self.folder is None:
            return
        ev = {"rank": self.rank, "time": round(time.time(), 3), **ev}
        with open(self.folder / EVENTS, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(ev, sort_keys=True, default=str) + "\n")

    def _incident(self, first: int, last: int, rec: np.ndarray | None, events: list[dict[str, Any]]) -> None:
        """Write ``incident-rank-N.json``: the rows of the failing step(s) with their findings."""
        from pairaudit.trace.explain import describe_rows

        assert self.folder is not None
        self.incident_written = True
        path = self.folder / f"incident-rank-{self.rank:05d}.json"
        rows = sorted({int(r) for r in rec["row"] if r >= 0}) if rec is not None and len(rec) else []
        doc: dict[str, Any] = {"first_step": first, "last_step": last, "rank": self.rank, "events": events,
                               "on_nonfinite": self.on_nonfinite,
                               "indices": sorted({int(i) for i in rec["index"]}) if rec is not None else [],
                               "rows": rows}
        try:
            doc["explained"] = describe_rows(rows, data=self.data, audit=self.audit,
                                             max_length=self._settings.get("max_length"),
                                             tokenizer=str(self.folder / "tokenizer")
                                             if (self.folder / "tokenizer").exists() else None)
        except Exception as exc:  # noqa: BLE001 - an explanation failure must not hide the incident
            doc["explain_error"] = f"{type(exc).__name__}: {exc}"
        write_json_atomic(path, doc)


def add_pairaudit_callback(trainer: Any, *, data: str | Path | None = None, row_column: str = "row",
                           **kwargs: Any) -> PairauditCallback:
    """Build a :class:`PairauditCallback` that knows the source row of every trainer dataset index, and add it.

    The rows come from ``trainer.train_dataset[row_column]`` when that column exists (add it before building
    the trainer: ``ds.map(lambda _, i: {"row": i}, with_indices=True)``; TRL keeps it through its filters), or
    from ``__pairaudit_row__`` (``audit.clean`` carries the source rows in it), else
    from ``data`` with pairaudit's emulation of the trainer's row filters, else they stay trainer indices.
    """
    from pairaudit.audit import ROW_COLUMN

    ds = trainer.train_dataset
    rows = None
    names = getattr(ds, "column_names", None) or []
    column = row_column if row_column in names else ROW_COLUMN if ROW_COLUMN in names else None
    if ds is not None and column is not None:  # audit.clean carries the source rows in __pairaudit_row__
        rows = np.asarray(ds[column], dtype=np.int64)
    elif data is not None and ds is not None:
        from pairaudit.trace.rows import trainer_rows
        from pairaudit.trace.settings import TraceSettings

        s = TraceSettings()
        args = trainer.args
        if type(args).__name__ == "DPOConfig":
            s.set("trainer", "trl-dpo", "trainer")
            s.set("max_length", args.max_length, "trainer")
            s.set("truncation_mode", args.truncation_mode, "trainer")
        else:
            s.set("trainer", "transformers", "trainer")
        pc = getattr(trainer, "processing_class", None)
        cand = trainer_rows(data, s, tokenizer_obj=getattr(pc, "tokenizer", pc))
        if len(cand) == len(ds):
            rows = cand
    cb = PairauditCallback(rows, data=data, **kwargs)
    trainer.add_callback(cb)
    return cb

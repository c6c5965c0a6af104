"""What the recording callback writes once per ``train()``: the settings that decide the data order, read
from the trainer's arguments, and ``meta.json`` (sessions, versions, the training tokenizer)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from pairaudit.trace.record import META, write_json_atomic
from pairaudit.versions import package_versions


def collect_settings(args: Any, state: Any, dl: Any) -> dict[str, Any]:
    """The settings that decide the data order (and DPO's limits), from the trainer's arguments and state;
    ``dataset_length``: the trainer dataset's rows (None when it has no length)."""
    accel = getattr(args, "accelerator_config", None)
    get = (lambda k, d: getattr(accel, k, d)) if accel is not None else (lambda k, d: d)
    is_dpo = type(args).__name__ == "DPOConfig"
    out = {
        "train_batch_size": int(getattr(state, "train_batch_size", None) or args.train_batch_size),
        "gradient_accumulation_steps": args.gradient_accumulation_steps, "world_size": args.world_size,
        "seed": args.seed, "data_seed": args.data_seed, "dataloader_drop_last": args.dataloader_drop_last,
        "num_train_epochs": args.num_train_epochs, "max_steps": args.max_steps,
        "split_batches": get("split_batches", False), "even_batches": get("even_batches", True),
        "dispatch_batches": get("dispatch_batches", None),
        "use_seedable_sampler": get("use_seedable_sampler", True),
        "train_sampling_strategy": getattr(args, "train_sampling_strategy", "random"),
        "ignore_data_skip": args.ignore_data_skip, "logging_steps": args.logging_steps,
        "logging_nan_inf_filter": args.logging_nan_inf_filter,
        "trainer": "trl-dpo" if is_dpo else "transformers",
        "dataset_length": len(dl.dataset) if dl is not None and hasattr(dl.dataset, "__len__") else None,
    }
    if is_dpo:
        out.update(max_length=args.max_length, truncation_mode=args.truncation_mode, beta=args.beta)
    return out


def write_meta(folder: Path, collected: dict[str, Any], state: Any, processing_class: Any, *, session: int,
               source_rows: bool, data: str | Path | None, recording: bool) -> None:
    """Add this ``train()`` session to ``meta.json`` (written atomically) with the order settings, the
    library versions and the training tokenizer (saved once under ``tokenizer/``)."""
    meta_path = folder / META
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.exists() else {}
    sessions = list(meta.get("sessions") or [])
    sessions.append({"session": session, "start_step": int(state.global_step), "time": round(time.time())})
    versions = package_versions(("torch", "transformers", "accelerate", "trl", "datasets"))
    settings = {k: v for k, v in collected.items() if k != "dataset_length"}
    settings["resumed_at"] = sorted({s["start_step"] for s in sessions if s["start_step"] > 0})
    tok_dir = folder / "tokenizer"
    if processing_class is not None and hasattr(processing_class, "save_pretrained") and not tok_dir.exists():
        try:
            processing_class.save_pretrained(str(tok_dir))
        except Exception:  # noqa: BLE001 - the record works without it
            pass
    if tok_dir.exists():
        settings["tokenizer"] = str(tok_dir)
    meta.update(format=1, settings=settings, sessions=sessions, versions=versions,
                dataset_length=collected.get("dataset_length"),
                rows="source" if source_rows else "trainer_index",
                data=str(data) if data else meta.get("data"),
                recording=recording or meta.get("recording", False))
    write_json_atomic(meta_path, meta)

"""Run a scan on Ray Data (``pairaudit scan --engine ray [--ray-address ADDR]``).

The source is split into shards (``io.shards``: line-aligned byte ranges for JSONL, files for Parquet,
index ranges otherwise), so row numbers are the same as the local engine's. An actor pool runs the
engine-neutral :class:`~pairaudit.batch.BatchProcessor` and every stage's ``observe`` on its shards and
returns the result of each shard (findings, metrics, compact stage state: hashes, lengths, embeddings)
through Ray's object store, encoded in a data-only format (:mod:`pairaudit.engines.wire`: JSON and
``.npy`` arrays, read with ``allow_pickle=False``): nothing is written to or loaded from a shared
folder, and nothing the driver reads can execute code. The driver reads the results in shard order,
merges stage state and runs the stages' ``finalize`` and the writers exactly as the local engine does.
Results are therefore identical to the local engine's.

Without ``--ray-address`` an embedded local Ray is started (usage stats off, no dashboard) and shut
down afterwards; ``ray stop`` is never called. Actor pools leave one CPU free for Ray Data's own tasks
(an actor pool holding every CPU can deadlock, ray-project/ray#44687).
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pairaudit.errors import ConfigError, require

if TYPE_CHECKING:
    from pairaudit.io.readers import Source
    from pairaudit.pipeline import Scanner


class ShardWorker:
    """Ray Data callable class: one instance per actor, tokenizer and models loaded once."""

    def __init__(self, cfg: dict[str, Any], fmt: str | None, stage_names: list[tuple[str, list[str]]],
                 cache_dir: str) -> None:
        from pairaudit.batch import BatchProcessor
        from pairaudit.config import Context, ScanConfig
        from pairaudit.io.formats import parse_columns
        from pairaudit.plan import build_plan
        from pairaudit.stages.registry import load_stage

        self.cfg = ScanConfig(**cfg)
        plan = build_plan(self.cfg)
        self.ctx = Context(self.cfg, Path(cache_dir), lambda m: None, params=plan.params)
        self.processor = BatchProcessor(self.cfg, plan, parse_columns(self.cfg.columns), fmt, Path(cache_dir))
        self.stages = []
        for path, enabled in stage_names:
            cls = load_stage(path)
            assert cls is not None, path
            self.stages.append(cls(self.ctx, set(enabled)))

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        from pairaudit.engines.wire import dumps, result_to_wire
        from pairaudit.io.shards import read_shard

        payloads = []
        for spec in batch["spec"]:
            results, errors = [], []
            for records in read_shard(json.loads(spec), self.cfg.batch_size):
                res = self.processor.process(records)
                if res.pairs:
                    for stage in self.stages:
                        t = time.perf_counter()
                        try:
                            stage.observe(res.pairs, res.encoded)
                        except Exception as exc:  # noqa: BLE001 - reported on the driver
                            errors.append((type(stage).__name__, f"{type(exc).__name__}: {exc}"))
                        res.timings[f"stage:{type(stage).__name__}"] = time.perf_counter() - t
                results.append(result_to_wire(res))  # texts stay here; only compact state travels
            states = {type(s).__name__: s.export_state() for s in self.stages}
            if self.processor.tok is not None and self.processor.tok.spec is not None:
                self.ctx.models.setdefault("tokenizer", self.processor.tok.spec.to_json())
            payloads.append(dumps({"results": results, "states": states, "errors": errors,
                                   "models": self.ctx.models}))
        return {"shard_id": batch["shard_id"], "payload": payloads}


def _detect_format(scanner: Scanner, source: Source) -> None:
    """Fix the format on the driver from the first batch, as the local engine would."""
    for records in source.batches(scanner.cfg.batch_size):
        scanner.processor.to_pairs(records, [])
        scanner._first_batch_sanity(records)
        break


def run_ray(scanner: Scanner, source: Source, parts: list[Path]) -> dict[str, Any]:
    """Process every shard on Ray; fill the scanner as its local loop would. Returns engine stats."""
    ray = require("ray", "ray", "--engine ray")
    cfg = scanner.cfg
    _detect_format(scanner, source)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    started = False
    if not ray.is_initialized():
        if cfg.ray_address:
            ray.init(address=cfg.ray_address, log_to_driver=False)
        else:
            ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False,
                     configure_logging=False, object_store_memory=256 * 1024 * 1024)
        started = True
    try:
        return _run(ray, scanner, source, parts)
    finally:
        if started:
            ray.shutdown()


def _run(ray: Any, scanner: Scanner, source: Source, parts: list[Path]) -> dict[str, Any]:
    from pairaudit.engines.wire import loads, result_from_wire
    from pairaudit.io.shards import plan_shards
    from pairaudit.stages.registry import STAGE_PATHS

    cfg = scanner.cfg
    cpus = int(ray.cluster_resources().get("CPU", 1))
    gpus = int(ray.cluster_resources().get("GPU", 0))
    workers = cfg.ray_workers or max(1, cpus - 1)
    shards = plan_shards(source, cfg.ray_shards or max(workers * 4, 1))
    by_cls = {type(s).__name__: s for s in scanner.stages}
    for name, stage in by_cls.items():
        if not stage.state_attrs:  # its observe state could not travel back to the driver
            raise ConfigError(f"stage {name} ({', '.join(sorted(stage.enabled))}) does not support --engine ray",
                              fix=f"use --engine local, or --skip {' --skip '.join(sorted(stage.enabled))}")
    stage_names = [(p, sorted(by_cls[p.rsplit(":", 1)[1]].enabled)) for p in STAGE_PATHS
                   if p.rsplit(":", 1)[1] in by_cls]
    needs_gpu = gpus > 0 and any(k in by_cls for k in ("NearDuplicateStage", "FlipStage"))
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    ds = ray.data.from_items([{"shard_id": i, "spec": json.dumps(s)} for i, s in enumerate(shards)],
                             override_num_blocks=len(shards))
    ds = ds.map_batches(
        ShardWorker, batch_size=1, concurrency=workers, num_cpus=1, num_gpus=1 if needs_gpu else 0,
        fn_constructor_kwargs={"cfg": cfg.to_json(), "fmt": scanner.fmt, "stage_names": stage_names,
                               "cache_dir": str(scanner.ctx.cache_dir)},
        batch_format="numpy")
    t = time.perf_counter()
    done = 0
    for row in ds.iter_rows():
        payload = loads(row["payload"])
        for res in payload["results"]:
            scanner.absorb(result_from_wire(res), parts, observe=False)
        for stage in list(scanner.stages):
            if type(stage).__name__ in payload["states"]:
                stage.absorb_state(payload["states"][type(stage).__name__])
        for stage_name, msg in payload["errors"]:
            if stage_name in by_cls and by_cls[stage_name] in scanner.stages:
                scanner._stage_failed(by_cls[stage_name], RuntimeError(msg))
        for key, value in payload["models"].items():
            scanner.ctx.models.setdefault(key, value)
        done += 1
        scanner.ctx.progress("read", scanner.n_input, source.total)
    scanner.ctx.progress("read", scanner.n_input, scanner.n_input)
    scanner.timings["ray_pipeline"] += time.perf_counter() - t
    return {"engine": "ray", "shards": len(shards), "workers": workers, "cluster_cpus": cpus, "cluster_gpus": gpus,
            "gpu_actors": bool(needs_gpu), "shards_done": done}

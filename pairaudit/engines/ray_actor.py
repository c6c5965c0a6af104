"""The Ray engine's worker: one actor per CPU slot, spread over the nodes; tokenizer and models load once.

An actor keeps what it read where it read it: per shard, the per-pair findings, the per-row metrics and
the stages' observed state. What leaves it is small or goes to another worker, never to the driver:

* ``scan``: reads and checks one shard; returns a small ``meta`` (counts, errors, summaries of
  ``distribute = "summary"`` stages, and the state of the stages the driver still finalizes); per
  ``distribute = "hash"`` stage it parks one piece per hash partition here (``ray_exchange``);
* ``reduce``: one hash partition of one stage: its pieces pulled from every actor, finalized by the stage's
  own ``finalize``; parks one part per shard (its findings and scores) here and returns a small status;
* ``finish``: one shard's findings merged (the hash stages' parts pulled from every actor), the check plan
  applied, and its part of every output written into the output generation (a folder every node sees);
  returns counts;
* ``commit``: the parts concatenated in shard (= row) order into the output files.

Everything that travels is encoded by :mod:`pairaudit.engines.wire` (JSON + ``.npy``, no pickle).
"""

from __future__ import annotations

import json
import os
import time
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from pairaudit.engines.exchange import Pull
from pairaudit.engines.parked import discard, park_shard, unpark
from pairaudit.engines.partition import finding_list, findings_of, merge_routed, route, split_state
from pairaudit.engines.ray_exchange import ExchangeOps
from pairaudit.engines.ray_ops import StageOps
from pairaudit.engines.wire import dumps, loads, result_to_wire


class ShardActor(StageOps, ExchangeOps):
    def __init__(self, cfg: dict[str, Any], fmt: str | None, stage_specs: list[tuple[str, list[str]]],
                 cache_dir: str) -> None:
        from pairaudit.batch import BatchProcessor
        from pairaudit.config import Context, ScanConfig
        from pairaudit.io.formats import parse_columns
        from pairaudit.plan import build_plan
        from pairaudit.stages.registry import load_stage
        from pairaudit.stages.spill import actor_folder

        self.spill_folder = str(actor_folder())  # this actor's spill files (removed at exit, or by a survivor)
        self.cfg = ScanConfig(**cfg)
        self.fmt = fmt
        self.plan = build_plan(self.cfg)
        self.columns = parse_columns(self.cfg.columns)
        self.ctx = Context(self.cfg, Path(cache_dir), lambda m: None, params=self.plan.params)
        self.processor = BatchProcessor.for_config(self.cfg, plan=self.plan, columns=self.columns, fmt=fmt,
                                                   cache_dir=Path(cache_dir))
        self.stages = []
        for path, enabled in stage_specs:
            cls = load_stage(path)
            assert cls is not None, path
            self.stages.append(cls(self.ctx, set(enabled)))
        for stage in self.stages:
            stage.spill_every_batch()  # a shard's columns go to disk as they are observed
        self.shards: dict[int, dict[str, Any]] = {}
        self.seconds = 0.0
        self.peaks: dict[str, float] = {}  # peak RSS (MB, ru_maxrss) at the end of each phase
        from pairaudit.engines.memwatch import MemWatch

        self.watch = MemWatch()  # the RSS told apart: own memory vs the object store's pages (sampled)

    def node(self) -> str:
        import ray

        return ray.get_runtime_context().get_node_id()

    def actor_id(self) -> str:
        """This actor's Ray id (hex), as a dead-actor error names it."""
        import ray

        return ray.get_runtime_context().get_actor_id()

    def pid(self) -> int:
        """This actor's worker process id (a fault test kills it)."""
        return os.getpid()

    def sees(self, path: str) -> bool:
        return Path(path).exists()

    def busy(self) -> tuple[float, int, dict[str, float], dict[str, dict[str, float]]]:
        """Seconds this actor spent in its phases (scan, stage work, writing), the bytes of the distributed
        stages' results it sent on (hash partitions are counted by the driver), its peak RSS (MB) at the end
        of each phase (``mark``) and of each reduce operation, and the same peaks told apart (sampled, MB):
        ``{"peak_own": ..., "peak_shared": ..., "own_after": ...}`` (own memory, object store pages, own memory
        when the operation ended: ``memwatch``)."""
        with self.watch.lock:
            parts = {"peak_own": dict(self.watch.own), "peak_shared": dict(self.watch.shared),
                     "own_after": dict(self.watch.after)}
        return self.seconds, int(getattr(self, "sent", 0)), dict(self.peaks), parts

    def mark(self, phase: str) -> None:
        """The end of ``phase`` on the driver (actor calls run in order: every task of the phase is done): this
        process's peak RSS so far (``ru_maxrss``, MB; with the peaks of the reduce operations, which reset it)."""
        import resource

        from pairaudit.engines.ray_ops import hwm_mb

        self.top = max(getattr(self, "top", 0.0), hwm_mb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        self.peaks[phase] = round(self.top, 1)
        self.watch.sample()
        with self.watch.lock:  # the sampled peaks of both parts so far, as ``top``
            self.watch.own[phase], self.watch.shared[phase] = self.watch.top_own, self.watch.top_shared

    def drop_spills(self) -> None:
        """Remove this actor's spill files and those of killed actors on this machine (the scan is lost: the
        driver kills the actors next, and a killed process runs nothing at exit)."""
        import shutil

        from pairaudit.stages.spill import sweep_dead

        self.shards.clear()
        getattr(self, "parked", {}).clear()
        shutil.rmtree(self.spill_folder, ignore_errors=True)
        sweep_dead()

    def set_splits(self, splits: list[list[Any]] | None) -> None:
        self.ctx.splits = [tuple(s) for s in splits] if splits else None

    # -- map ----------------------------------------------------------------------------------
    def scan(self, s: int, spec_json: str, n_parts: int) -> Any:
        from pairaudit.io.shards import read_shard

        t0 = time.perf_counter()
        spec = json.loads(spec_json)
        findings, metrics, errors, results = [], [], [], []
        n_records = 0
        for records in read_shard(spec, self.cfg.batch_size):
            res = self.processor.process(records)
            if res.pairs:
                for stage in self.stages:
                    t = time.perf_counter()
                    try:
                        stage.observe(res.pairs, res.encoded)
                    except Exception as exc:  # noqa: BLE001 - reported on the driver
                        errors.append((type(stage).__name__, f"{type(exc).__name__}: {exc}"))
                    res.timings[f"stage:{type(stage).__name__}"] = time.perf_counter() - t
            findings.extend(res.findings)
            if res.metrics:
                import polars as pl

                metrics.append(pl.DataFrame(res.metrics, infer_schema_length=None).sort("row"))
            n_records += res.n_records
            wire = result_to_wire(res)
            wire["findings"], wire["metrics"] = [], {}  # they stay here until ``finish``
            results.append(wire)
        kept: dict[str, Any] = {}
        meta_states: dict[str, Any] = {}
        summaries: dict[str, Any] = {}
        shuffled = 0
        spills: dict[str, Any] = {}
        for k, stage in enumerate(self.stages):
            name = type(stage).__name__
            state, spill = stage.export_spilled()
            if spill is not None:
                spills[name] = spill
            if stage.distribute == "hash" and not stage.reads_findings:
                shuffled += self.park(f"hash{k}", s, (dumps(b) for b in split_state(state, stage.partition_key,
                                                                                 n_parts)))
            elif stage.distribute == "summary":
                kept[name] = state
                stage.absorb_state(state)
                summaries[name] = stage.summary()
                stage.export_state()
            elif stage.distribute == "cells":  # near duplicates: the shard's columns stay here
                from pairaudit.stages.near_duplicates.cells import shard_columns, shard_summary

                kept[name] = shard_columns(state, spills.pop(name, None))
                summaries[name] = shard_summary(kept[name])
            elif stage.distribute == "sample":
                kept[name] = state
                summaries[name] = stage.sample_summary(state)
            elif stage.distribute == "hash":  # cut once earlier stages' findings are known (``split``)
                kept[name] = state
            else:
                meta_states[name] = state
        if self.processor.tok is not None and self.processor.tok.spec is not None:
            self.ctx.models.setdefault("tokenizer", self.processor.tok.spec.to_json())
        cells = {type(st).__name__ for st in self.stages if st.distribute == "cells"}  # worked on in place
        self.shards[s] = {**park_shard(Path(self.spill_folder), s, [finding_list(f) for f in findings], metrics, kept,
                                       cells),
                          "spec": spec, "spills": spills}
        seconds = time.perf_counter() - t0
        self.seconds += seconds
        return dumps({"results": results, "states": meta_states, "summaries": summaries, "errors": errors,
                      "models": self.ctx.models, "rows": n_records, "seconds": seconds, "shuffle_bytes": shuffled})

    # -- reduce -------------------------------------------------------------------------------
    def reduce(self, k: int, p: int, starts: list[int], near: bytes) -> bytes:
        """Hash partition ``p`` of stage ``k`` finalized (see the module's docstring); its peak RSS recorded."""
        with self.op_peak(f"reduce.hash.{type(self.stages[k]).__name__}"):
            return self._reduce(k, p, starts, near)

    def _reduce(self, k: int, p: int, starts: list[int], near: bytes) -> bytes:
        from pairaudit.pipeline import stage_findings

        t0 = time.perf_counter()
        stage = self.stages[k]
        fresh = type(stage)(self.ctx, stage.enabled)
        fresh.on_partition()  # e.g. its statistics are merged over the partitions (merge_partition_stats)
        for b in self.gather(f"hash{k}", p):  # every shard's piece, in shard (= row) order
            fresh.absorb_state(loads(b))
        if fresh.reads_findings:
            near_f, ran = loads(near)
            fresh.set_findings(findings_of([{"findings": near_f}]), set(ran))
        try:
            res = fresh.finalize()
        except Exception as exc:  # noqa: BLE001 - reported on the driver
            return dumps({"error": f"{type(exc).__name__}: {exc}", "stats": {}, "timings": {}})  # nothing parked
        parts = route(res, stage_findings(fresh, res, self.plan), starts)
        sent = self.park(f"routed{k}", p, (dumps(part) for part in parts))
        seconds = time.perf_counter() - t0
        self.seconds += seconds
        return dumps({"error": None, "stats": res.stats, "timings": res.timings, "seconds": seconds,
                      "shuffle_bytes": sent})

    # -- write --------------------------------------------------------------------------------
    def finish(self, s: int, plan: bytes, *routed: bytes) -> bytes:
        """``plan``: failed stages, merged summaries, per stage that did not fail the number of routed parts
        (hash stages: none; this shard pulls its parts from the reducers), decisions in range, where to write,
        ``pulls``: per part in stage order, where it is parked (a ``Pull``; the cells' and the flip model's parts)
        or None (the next of ``routed``: the parts the driver made)."""
        from pairaudit.engines.shard_output import write_shard
        from pairaudit.pipeline import stage_findings

        t0 = time.perf_counter()
        p = loads(plan)
        shard = self.shards.pop(s)
        for spill in shard["spills"].values():  # what a stage left on disk and never took (e.g. failed)
            spill.close()
        for state in shard["states"].values():
            if isinstance(state, dict) and state.get("spill") is not None:
                state.pop("spill").close()
        findings = findings_of([{"findings": unpark(shard["findings"], remove=True)}])
        stage_scores, errors, stats = [], [], {}
        it, pulls = iter(routed), iter(p["pulls"])  # each part parked on an actor (a ``Pull``) or handed as an argument
        for k, stage in enumerate(self.stages):
            name = type(stage).__name__
            if stage.distribute != "summary":
                mine = ([loads(b) for b in self.gather(f"routed{k}", s)]
                        if stage.distribute == "hash" and name in p["parts"]
                        else [loads(next(it) if pl is None else self.pull(Pull(*pl)))
                              for pl in islice(pulls, p["parts"].get(name, 0))])
                if name not in p["failed"]:
                    findings.extend(findings_of(mine))
                    merged = merge_routed(mine)
                    if merged is not None:
                        stage_scores.append(merged)
                continue
            if name in p["failed"] or name not in shard["states"]:
                continue
            stage.absorb_state(unpark(shard["states"][name], remove=True))
            try:
                res = stage.finalize(p["summaries"][name])
            except Exception as exc:  # noqa: BLE001 - reported on the driver
                errors.append((name, f"{type(exc).__name__}: {exc}"))
                continue
            finally:
                stage.export_state()
            findings.extend(stage_findings(stage, res, self.plan))
            if res.rows is not None and res.scores:
                stage_scores.append((np.asarray(res.rows, np.int64), res.scores))
            stats[name] = res.stats
        out = write_shard(s, shard["spec"], Path(p["tmp"]), findings, unpark(shard["metrics"], remove=True),
                          stage_scores, p, self.fmt,
                          self.columns, self.cfg.flip)
        for state in shard["states"].values():  # a parked state no operation took (its stage failed)
            discard(state)
        self.seconds += time.perf_counter() - t0
        return dumps({**out, "shard": s, "errors": errors, "stats": stats})

    def commit(self, tmp: str, n_shards: int, data_names: list[str] | None) -> bytes:
        from pairaudit.engines.shard_output import commit_parts

        t0 = time.perf_counter()
        commit_parts(Path(tmp), n_shards, data_names)
        return dumps({"seconds": time.perf_counter() - t0})

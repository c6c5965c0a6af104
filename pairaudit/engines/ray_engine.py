"""Run a scan on a Ray cluster (``pairaudit scan --engine ray [--ray-address ADDR]``).

The source is split into shards (``io.shards``: line-aligned byte ranges for JSONL, files for Parquet,
index ranges otherwise), so row numbers are the local engine's. Actors (:mod:`.ray_actor`, one per CPU
slot, spread over the nodes) read, check and observe shards and keep what they read; each shard goes to
whichever actor is free (``_RayScan.map``), and its owner (``RayRun.owners``) gets the shard's later work. The
whole-dataset work then runs where the data is, with the stages' own code (``Stage.distribute``):

* ``duplicate_pair`` / ``contradictory_pair`` / ``split_leakage``: each shard's hashes are cut into
  hash partitions; each partition is finalized on a worker, which pulls its pieces from the workers that cut
  them, and each shard's writer pulls its findings (row, group) and score columns from the reducers
  (:mod:`.exchange`: worker to worker, the driver hands out O(shards + partitions) tasks and owns no piece);
* ``length_outlier``: per-shard length histograms (a few KB) merged on the driver; every shard scores
  its own rows against the merged summary;
* near duplicates: cell groups searched and verified on the workers (:mod:`.ray_stages` ``run_cells``), the rows
  crossing between shards and groups worker to worker as the hash pieces do; the driver gets the edges;
* ``likely_flipped``: fitted on one worker from a bounded seeded sample, applied where the rows are;
* writers: each worker writes its shard's findings, scores and (JSONL sources) clean/dropped parts into
  the output generation, and one worker concatenates them in row order; ``--out`` must be on a
  filesystem every node sees (checked before the scan). Other sources: the driver writes clean/dropped
  from the dropped rows' numbers.

A worker (process or node) lost mid-scan takes its shards' state with it: the scan stops with exit 4
(``errors.WorkerLost``: the worker, its shards, the phase), caught in one place (``_run``); nothing of the run is
committed and the previous output generation is untouched (docs/scale.md "A lost worker").

Everything that travels is encoded by :mod:`.wire` (JSON + ``.npy``, no pickle of data). Results equal
the local engine's. Without ``--ray-address`` an embedded local Ray is started (usage stats off, no
dashboard) and shut down afterwards; ``ray stop`` is never called.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pairaudit.engines.exchange import Pull
from pairaudit.engines.ray_cluster import (
    ACTOR_START_S,
    CONFIG_PATHS,
    SHARD_PATHS,
    absolute_paths,
    actor_plan,
    connect,
    lost_errors,
    node_ips,
    node_line,
    session_logs,
)
from pairaudit.engines.ray_exchange import CONCURRENCY_GROUPS
from pairaudit.errors import ConfigError, PairauditError, WorkerLost, require

if TYPE_CHECKING:
    from pairaudit.io.readers import Source
    from pairaudit.pipeline import Scanner


SHARDS_PER_ACTOR = 2  # default shards at least (more for a large source: io.shards.SHARD_BYTES; --ray-shards)
MAP_IN_FLIGHT = 1  # map tasks on each actor at once: the next shard goes to whichever actor finishes first


def _detect_format(scanner: Scanner, source: Source) -> None:
    """Fix the format on the driver from the first batch, as the local engine would."""
    for records in source.batches(scanner.cfg.batch_size):
        scanner.processor.to_pairs(records, [])
        scanner.first_batch_sanity(records)
        break


def run_ray(scanner: Scanner, source: Source, parts: list[Path]) -> dict[str, Any]:
    """Run the whole scan but report.json on Ray; sets ``scanner.written``. Returns engine stats."""
    ray = require("ray", "ray", "--engine ray")
    cfg = scanner.cfg
    _detect_format(scanner, source)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    started = False
    if not ray.is_initialized():
        if cfg.ray_address:
            joined = connect(ray, cfg.ray_address)
            scanner.log(f"ray: joined the cluster at {joined}" + (f" (--ray-address {cfg.ray_address})"
                                                                  if joined != cfg.ray_address else ""))
        else:
            ray.init(address="local", num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False,
                     configure_logging=False, object_store_memory=256 * 1024 * 1024)
        started = True
    try:
        return _run(ray, scanner, source)
    finally:
        if started:
            ray.shutdown()


def _run(ray: Any, scanner: Scanner, source: Source) -> dict[str, Any]:
    scan = _RayScan(ray, scanner, source)
    try:  # the one place a lost worker is caught: nothing of this run is committed (``Scanner.run`` aborts)
        scan.start()
        scan.map()
        scan.mark("map")
        parts, stage_stats = scan.reduce()
        scan.mark("reduce")
        scan.write(parts, stage_stats)
        scan.mark("write")
        return scan.engine_stats()
    except lost_errors(ray) as exc:
        raise scan.lost(exc) from exc
    except ray.exceptions.RayTaskError as exc:  # a user's error raised in an actor (a tokenizer that cannot
        cause = getattr(exc, "cause", None)  # load): its own message, as the local engine prints it, not Ray's
        if isinstance(cause, PairauditError):  # traceback of the task
            raise cause from None
        raise
    finally:
        scan.drop_spills()
        scan.stop_actors()  # each actor holds the others' handles (``set_peers``): they would outlive the scan


class _RayScan:
    """One scan's phases on the cluster: start the actors, map (read, check, observe every shard), reduce
    (finalize every stage where its data is), write (every shard's part of the outputs)."""

    def __init__(self, ray: Any, scanner: Scanner, source: Source) -> None:
        from pairaudit.engines.ray_actor import ShardActor
        from pairaudit.engines.ray_stages import RayRun
        from pairaudit.io.shards import default_shard_count, first_row, plan_shards
        from pairaudit.stages.registry import stage_paths

        cfg = scanner.cfg
        self.ray, self.scanner, self.source = ray, scanner, source
        self.resources = ray.cluster_resources()
        self.workers, self.opts = actor_plan(ray.nodes(), cfg.ray_workers, any(s.uses_models for s in scanner.stages))
        self.shards = [absolute_paths(spec, SHARD_PATHS) for spec in plan_shards(
            source, cfg.ray_shards or default_shard_count(source, max(self.workers * SHARDS_PER_ACTOR, 1)))]
        starts = [first_row(spec) for spec in self.shards]
        self.by_cls = by_cls = {type(s).__name__: s for s in scanner.stages}
        specs = [(p, sorted(by_cls[p.rsplit(":", 1)[1]].enabled)) for p in stage_paths()
                 if p.rsplit(":", 1)[1] in by_cls]
        self.order = [by_cls[p.rsplit(":", 1)[1]] for p, _ in specs]  # the actors' stage list, same order
        actor_cls = ray.remote(concurrency_groups=CONCURRENCY_GROUPS)(ShardActor)  # ``serve``: pulls answered
        actors = [actor_cls.options(**self.opts).remote(absolute_paths(cfg.to_json(), CONFIG_PATHS), scanner.fmt, specs,
                                                        str(Path(scanner.ctx.cache_dir).absolute()))
                  for _ in range(self.workers)]
        self.tmp = str(Path(scanner.out.tmp).absolute())
        self.early = [st for st in self.order if st.distribute == "hash" and not st.reads_findings]
        self.per_node: dict[str, dict[str, float]] = defaultdict(
            lambda: {"rows": 0.0, "seconds": 0.0, "shards": 0.0, "map_seconds": 0.0})
        self.run = RayRun(ray, scanner, actors, starts, self.order, defaultdict(list))
        self.shuffled = 0
        self.phase = "start"
        self.nodes: list[str] = []
        self.actor_ids: list[str] = []
        self.node_ips: dict[str, str] = {}  # node id -> its IP (ray.nodes() at the start)
        self.rows_read: list[int] = []  # per shard, from ``map``: what its writer must account for

    def start(self) -> None:
        """Every actor sees the output generation folder; the nodes the actors run on."""
        ray, scanner, actors = self.ray, self.scanner, self.run.actors
        refs = [a.sees.remote(self.tmp) for a in actors]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=ACTOR_START_S)
        if len(ready) < len(refs):
            self.stop_actors()
            free = {k: v for k, v in ray.available_resources().items() if k in ("CPU", "GPU")}
            total = {k: v for k, v in self.resources.items() if k in ("CPU", "GPU")}
            raise ConfigError(
                f"{len(refs) - len(ready)} of {len(refs)} Ray actors (each {self.opts.get('num_cpus')} CPU"
                + (f", {self.opts['num_gpus']} GPU" if "num_gpus" in self.opts else "")
                + f") did not start within {ACTOR_START_S:.0f} s: the cluster has {free or 'nothing'} free of "
                f"{total} (other jobs hold the rest)",
                fix=f"pass --ray-workers N with N <= the free CPUs ({int(free.get('CPU', 0))}), or wait until the "
                    "cluster's other jobs end")
        if not all(ray.get(refs)):
            raise ConfigError(f"--out {scanner.out.out} is not visible to every Ray node (workers write their part "
                              "of the outputs there)", fix="pass an --out on a filesystem every node mounts (NFS, ...)")
        ray.get([a.set_peers.remote(actors, k) for k, a in enumerate(actors)])  # who to pull hash pieces from
        if scanner.source.splits:
            ray.get([a.set_splits.remote([list(s) for s in scanner.source.splits]) for a in actors])
        self.nodes = ray.get([a.node.remote() for a in actors])
        self.actor_ids = ray.get([a.actor_id.remote() for a in actors])
        nodes = ray.nodes()
        self.node_ips = node_ips(nodes)
        scanner.log(node_line(self.nodes, nodes))

    def stop_actors(self) -> None:
        """Kill this scan's actors (those not started are removed from the scheduler's queue)."""
        for actor in self.run.actors:
            with contextlib.suppress(Exception):
                self.ray.kill(actor)

    def lost(self, exc: BaseException) -> WorkerLost:
        """The error for a worker lost in the current phase, naming it and the shards it held; the other actors
        are stopped (nothing of this run is committed)."""
        ids = self.actor_ids  # known once every actor has started
        dead = getattr(exc, "actor_id", None)
        k = ids.index(dead) if dead in ids else None
        node = self.nodes[k] if k is not None and k < len(self.nodes) else None
        where = (f", on ray_node:{sorted(set(self.nodes)).index(node)} = {self.node_ips.get(node, '?')} "
                 f"(node {node[:12]})" if node else "")
        who = (f"worker ray_actor:{k} of {len(ids)} (actor {dead}{where})" if k is not None
               else f"a worker ({type(exc).__name__})")
        held = [s for s, owner in enumerate(self.run.owners) if k is not None and owner == k]
        self.drop_spills()
        self.stop_actors()
        said = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()  # Ray's raylet lines carry terminal colours
        first = said.splitlines()[0][:300].rstrip(". ") if said else type(exc).__name__
        return WorkerLost(
            f"the Ray engine lost {who} during {self.phase}"
            + (f"; it held shard(s) {', '.join(map(str, held))} of {len(self.shards)}" if held else "")
            + f"; Ray said: {first}; nothing was written: the previous outputs in --out are untouched",
            fix="run the same scan again (a worker's shards live in its memory and spill folder, so a lost worker restarts the "
                "scan); if workers keep dying, look for out-of-memory kills in the Ray logs "
                + (f"of that node ({self.node_ips.get(node, '?')}: {session_logs(self.ray, node)}) "
                   if node else f"({session_logs(self.ray)}, on each node) ")
                + "and give the nodes more memory or pass fewer --ray-workers, "
                "or use --engine local")

    def map(self) -> None:
        """Every shard read, checked and observed by whichever actor is free (``MAP_IN_FLIGHT`` shards queued per
        actor; an actor that finishes early takes the next shard), its owner recorded (``run.owners``); the metas
        are absorbed in shard order, so nothing depends on who read what. The shards' pieces of the early hash
        stages stay with the actors that cut them (``ray_exchange``)."""
        scanner, run = self.scanner, self.run
        self.phase = "map"
        t = time.perf_counter()
        n = len(self.shards)
        run.owners = [None] * n
        todo = iter(range(n))
        flying: dict[Any, int] = {}  # meta reference -> shard
        for _ in range(MAP_IN_FLIGHT):
            for k in range(self.workers):
                self._submit(next(todo, None), k, flying)
        metas: dict[int, dict[str, Any]] = {}
        done = 0
        while flying:
            ready, _ = self.ray.wait(list(flying), num_returns=1)
            s = flying.pop(ready[0])
            metas[s] = run.get(ready)[0]
            self._submit(next(todo, None), run.owners[s], flying)  # the actor that finished takes more
            while done in metas:  # absorbed in shard order (summaries, results: as the local engine reads them)
                self._absorb(done, metas.pop(done))
                done += 1
        scanner.ctx.progress("read", scanner.n_input, scanner.n_input)
        scanner.timings["ray_pipeline"] += time.perf_counter() - t

    def _submit(self, s: int | None, k: int | None, flying: dict[Any, int]) -> None:
        """Shard ``s`` read by actor ``k`` (nothing when every shard is handed out)."""
        if s is None or k is None:
            return
        self.run.owners[s] = k
        flying[self.run.actors[k].scan.remote(s, json.dumps(self.shards[s]), self.run.hash_parts)] = s

    def _absorb(self, s: int, meta: dict[str, Any]) -> None:
        scanner = self.scanner
        self.rows_read.append(meta["rows"])
        self.shuffled += meta["shuffle_bytes"]
        _absorb_meta(scanner, meta, self.by_cls, self.run.summaries, self.per_node[self.nodes[self.run.owners[s]]])
        scanner.ctx.progress("read", scanner.n_input, self.source.total)

    def reduce(self) -> tuple[dict[str, list[list[Any]]], dict[str, dict[str, Any]]]:
        """Every stage finalized where its data is (``Stage.distribute``), in stage order; returns per stage the
        routed results of each shard (none for hash stages: each shard's writer pulls them), and the stages'
        statistics."""
        from pairaudit.engines.wire import dumps

        scanner, run, n_shards = self.scanner, self.run, len(self.shards)
        self.phase = "reduce"
        t = time.perf_counter()
        reduced: dict[str, list[Any]] = {}  # hash stages: each partition's status
        parts: dict[str, list[list[Any]]] = {}
        stage_stats: dict[str, dict[str, Any]] = {}
        empty_near = dumps([[], []])
        for stage in self.early:
            reduced[type(stage).__name__] = [run.worker(p).reduce.remote(self.order.index(stage), p, run.starts,
                                                                          empty_near) for p in range(run.hash_parts)]
        later: list[Any] = []  # near_duplicate_pair findings, read by later stages
        todo = [st for st in self.order if st in scanner.stages and st not in self.early and st.distribute != "summary"]
        total = sum(st in scanner.stages for st in self.order)  # every stage, as the local engine counts them: the
        for k, stage in enumerate(todo):  # early hash partitions and the summaries end with the last one
            name = type(stage).__name__
            scanner.ctx.progress("finalize", k, total)  # as the local engine's ``finalize_stages``
            if stage not in scanner.stages:  # failed meanwhile
                continue
            try:
                later += _finalize_stage(run, stage, later, reduced, parts, stage_stats)
            except lost_errors(self.ray):
                raise  # a lost worker is not a failed stage: ``_run`` stops the scan
            except Exception as exc:  # noqa: BLE001 - reported like a failed stage of the local engine
                scanner.stage_failed(stage, exc)
                reduced.pop(name, None)
                parts.pop(name, None)
        for name, refs in reduced.items():
            stage_stats[name] = self._partitions_done(name, refs)
            parts[name] = [[] for _ in range(n_shards)]  # pulled by the writers (``finish``)
        scanner.ctx.progress("finalize", total, total)
        scanner.timings["ray_reduce"] += time.perf_counter() - t
        return parts, stage_stats

    def _partitions_done(self, name: str, refs: list[Any]) -> dict[str, Any]:
        """The statuses of one stage's hash partitions: a failure fails the stage; their statistics merged."""
        from pairaudit.engines.partition import merge_stats
        from pairaudit.engines.wire import loads

        scanner = self.scanner
        raws = self.ray.get(refs)
        self.run.to_driver += sum(len(r) for r in raws)
        statuses = [loads(r) for r in raws]
        self.shuffled += sum(st.get("shuffle_bytes", 0) for st in statuses)
        errors = [st["error"] for st in statuses if st["error"]]
        stage = self.by_cls[name]
        if errors and stage in scanner.stages:
            scanner.stage_failed(stage, RuntimeError(errors[0]))
        for st in statuses:
            for k, v in st["timings"].items():
                scanner.timings[k] += v
        merge = getattr(type(stage), "merge_partition_stats", None) or merge_stats
        return merge([st["stats"] for st in statuses])

    def write(self, parts: dict[str, list[list[Any]]], stage_stats: dict[str, dict[str, Any]]) -> None:
        """Every shard's part of the outputs written where the shard is; one worker concatenates them; sets
        ``scanner.written``."""
        scanner, run, source = self.scanner, self.run, self.source
        self.phase = "write"
        t = time.perf_counter()
        jsonl = workers_write_data(source)
        merged = {name: type(self.by_cls[name]).merge_summaries(p) for name, p in run.summaries.items()
                  if self.by_cls[name].distribute == "summary"}
        failed = sorted(name for name, st in self.by_cls.items() if st not in scanner.stages)
        ends = run.starts[1:] + [None]
        finished = []
        counts = {name: len(p[0]) for name, p in parts.items() if name not in failed}
        for s in range(len(self.shards)):
            plan = {"failed": failed, "summaries": merged, "parts": counts,
                    "decisions": {str(r): _decision_json(d) for r, d in scanner.decisions.items()
                                  if r >= run.starts[s] and (ends[s] is None or r < ends[s])},
                    "splits": [list(x) for x in scanner.source.splits] if scanner.source.splits else None,
                    "tmp": self.tmp, "write": "jsonl" if jsonl else "driver",
                    "explicit_prompt": scanner.cfg.explicit_prompt}
            mine = [x for st in self.order if type(st).__name__ in counts for x in parts[type(st).__name__][s]]
            plan["pulls"] = [list(x) if isinstance(x, Pull) else None for x in mine]  # in the order of ``parts``
            args = [x for x in mine if not isinstance(x, Pull)]
            finished.append(run.owner(s).finish.remote(s, run.put(plan), *args))
        parts.clear()
        written = _collect(scanner, run.get(finished), self.by_cls, stage_stats)
        self._conserved(written.pop("shard_rows"))
        for k in run.owners:
            self.per_node[self.nodes[k]]["shards"] += 1
        data_names = ["clean.jsonl", "dropped.jsonl"] if jsonl else None
        self.ray.get(run.actors[0].commit.remote(self.tmp, len(self.shards), data_names))
        if not jsonl:
            from pairaudit.outputs.records import write_outputs

            written["counts"] = write_outputs(source, scanner.out.tmp, written.pop("drops"), set(written["flips"]),
                                              scanner.fmt or "standard", scanner.columns,
                                              explicit_prompt=scanner.cfg.explicit_prompt)
        scanner.timings["ray_write"] += time.perf_counter() - t
        scanner.stats = {**_ordered_stats([st for st in self.order if st in scanner.stages], stage_stats),
                         **{k: v for k, v in scanner.stats.items()}}
        _finish_written(scanner, written, t)

    def _conserved(self, shard_rows: dict[int, int | None]) -> None:
        """Every shard's writer accounted for the rows its reader read (kept + dropped; the driver writes the data
        of non-JSONL sources, so there only every shard's presence is checked): a shard lost between the phases
        stops the scan before anything is committed (report.json checks input = kept + dropped again)."""
        for s, read in enumerate(self.rows_read):
            wrote = shard_rows.get(s, -1)
            if wrote == -1 or (wrote is not None and wrote != read):
                raise WorkerLost(
                    f"the Ray engine lost rows of shard {s} of {len(self.rows_read)} during write: {read} row(s) "
                    f"read, {'no output' if wrote == -1 else f'{wrote} written'}; nothing was written: the "
                    "previous outputs in --out are untouched",
                    fix="run the same scan again; if it happens again, run with --engine local and report it")

    def drop_spills(self) -> None:
        """Every live actor removes its spill folder and those of killed actors on its node (a killed or
        shut-down worker process runs nothing at exit); waits at most 30 s."""
        run = getattr(self, "run", None)
        if run is None or getattr(self, "dropped", False):
            return
        self.dropped = True
        with contextlib.suppress(Exception):
            self.ray.wait([a.drop_spills.remote() for a in run.actors], num_returns=len(run.actors), timeout=30)

    def mark(self, phase: str) -> None:
        """The end of ``phase``: every actor records its peak RSS so far (after the phase's tasks, in order)."""
        for actor in self.run.actors:
            actor.mark.remote(phase)

    def engine_stats(self) -> dict[str, Any]:
        """Run-specific figures into timings.json (bytes moved, per-node rows and seconds); returns report.json's
        engine statistics."""
        scanner, run = self.scanner, self.run
        for k, (node, (seconds, sent, peaks, parts)) in enumerate(
                zip(self.nodes, self.ray.get([a.busy.remote() for a in run.actors]))):
            self.per_node[node]["seconds"] += seconds  # every phase the node's actors ran
            self.shuffled += sent
            for phase, mb in peaks.items():  # peak RSS (MB) of each actor at the end of each phase
                scanner.timings[f"ray_actor:{k}:peak_rss_mb:{phase}"] = mb
            for part, by_name in parts.items():  # the same told apart: own memory, object store pages (sampled)
                for name, mb in by_name.items():
                    scanner.timings[f"ray_actor:{k}:{part}_mb:{name}"] = round(mb, 1)
            scanner.timings[f"ray_actor:{k}:shards"] = run.owners.count(k)  # the shards it read (map: who was free)
            scanner.timings[f"ray_actor:{k}:seconds"] = seconds
        scanner.timings["ray_bytes_to_driver"] = run.to_driver  # run-specific figures: timings.json
        scanner.timings["ray_bytes_shuffled"] = self.shuffled  # worker to worker (hash partitions, routed results)
        scanner.timings["ray_bytes_from_driver"] = run.from_driver
        for k, node in enumerate(sorted(self.per_node)):
            for key, value in self.per_node[node].items():
                scanner.timings[f"ray_node:{k}:{key}"] = value
        order, n = self.order, len(self.shards)
        return {"engine": "ray", "shards": n, "workers": self.workers, "hash_partitions": self.run.hash_parts,
                "cluster_cpus": int(self.resources.get("CPU", 1)),
                "cluster_gpus": float(self.resources.get("GPU", 0)), "gpu_actors": "num_gpus" in self.opts,
                "shards_done": n, "nodes_used": len(self.per_node),
                "distributed": {mode: [type(st).__name__ for st in order if st.distribute == key]
                                for mode, key in (("hash_partitioned", "hash"), ("summary_merged", "summary"),
                                                  ("cells", "cells"), ("sample_fitted", "sample"),
                                                  ("driver_finalized", None))} | {
                    "writers": "workers" if workers_write_data(self.source) else "workers (findings, scores); driver (data)"}}


def workers_write_data(source: Source) -> bool:
    """Whether the workers write clean / dropped themselves (JSONL sources) or the driver does."""
    from pairaudit.io.readers import JsonlSource

    return isinstance(source, JsonlSource)


def _finalize_stage(run: Any, stage: Any, later: list[Any], reduced: dict[str, Any], parts: dict[str, Any],
                    stage_stats: dict[str, Any]) -> list[Any]:
    """One stage's distributed finalize (not the early hash partitions); returns the findings later stages read."""
    from pairaudit.engines.ray_stages import run_cells, run_late_hash, run_sample

    scanner = run.scanner
    name = type(stage).__name__
    if stage.distribute in ("cells", "sample"):
        out = (run_cells if stage.distribute == "cells" else run_sample)(run, stage)
        parts[name], stage_stats[name] = out.parts, out.stats
        for k, v in out.timings.items():
            scanner.timings[k] += v
        return out.findings
    if stage.distribute == "hash":
        reduced[name], _ = run_late_hash(run, stage, later, scanner.checks_ran())
        return []
    # a stage without a distributed finalize: its state came to the driver, which finalizes it here
    done = scanner.finalize_stage(stage)
    if done is None:  # failed: recorded by the scanner
        return []
    found, scores, stage_stats[name] = done
    routed = _route_driver(found, scores, run.starts)
    parts[name] = [[run.ray.put(run.put(r))] for r in routed]
    return [f for f in found if f.check == "near_duplicate_pair" and f.group is not None]


def _absorb_meta(scanner: Scanner, m: dict[str, Any], by_cls: dict[str, Any], summaries: dict[str, list[Any]],
                 node: dict[str, float]) -> None:
    from pairaudit.engines.wire import result_from_wire

    for res in m["results"]:
        scanner.absorb(result_from_wire(res), [], observe=False)
    for stage in list(scanner.stages):
        name = type(stage).__name__
        if name in m["states"]:
            stage.absorb_state(m["states"][name])
        if name in m["summaries"]:
            summaries[name].append(m["summaries"][name])
    for stage_name, msg in m["errors"]:
        if stage_name in by_cls and by_cls[stage_name] in scanner.stages:
            scanner.stage_failed(by_cls[stage_name], RuntimeError(msg))
    for key, value in m["models"].items():
        scanner.ctx.models.setdefault(key, value)
    node["rows"] += m["rows"]
    node["map_seconds"] += m["seconds"]  # the shard's scan alone (what the map's assignment balances)


def _route_driver(findings: list[Any], scores: list[Any], starts: list[int]) -> list[dict[str, Any]]:
    """A driver-finalized stage's findings and score columns, cut by shard."""
    from pairaudit.datatypes import StageResult
    from pairaudit.engines.partition import route

    res = StageResult(rows=scores[0][0], scores=scores[0][1]) if scores else StageResult()
    return route(res, findings, starts)


def _decision_json(d: Any) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(d)


def _collect(scanner: Scanner, outs: list[dict[str, Any]], by_cls: dict[str, Any],
             stage_stats: dict[str, dict[str, Any]]) -> dict[str, Any]:
    from pairaudit.outputs.tally import Tally

    tally, flips, ignored, applied = Tally(), [], [], 0
    counts = {"kept": 0, "dropped": 0}
    drops: dict[int, list[str]] = {}
    shard_rows: dict[int, int | None] = {}
    for out in outs:
        c = out.get("counts")
        shard_rows[int(out["shard"])] = c["kept"] + c["dropped"] if c is not None else None
        tally.add(Tally.from_json(out["tally"]))
        flips += out["flips"]
        applied += out["applied"]
        ignored += out["ignored"]
        for k in counts:
            counts[k] += out.get("counts", {}).get(k, 0)
        drops.update({int(r): v for r, v in out.get("drops", {}).items()})
        for name, msg in out["errors"]:
            if by_cls[name] in scanner.stages:
                scanner.stage_failed(by_cls[name], RuntimeError(msg))
        for name, stats in out["stats"].items():
            stage_stats.setdefault(name, stats)
    return {"tally": tally, "flips": sorted(flips), "counts": counts, "applied": applied,
            "ignored": sorted(ignored, key=lambda d: d["row"]), "drops": drops, "shard_rows": shard_rows}


def _ordered_stats(order: list[Any], stage_stats: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """report.json ``stats`` in stage order, as the local engine writes them."""
    out: dict[str, Any] = {}
    for stage in order:
        out.update(stage_stats.get(type(stage).__name__, {}))
    return out


def _finish_written(scanner: Scanner, w: dict[str, Any], t: float) -> None:
    from pairaudit.decisions import Resolution

    scanner.written = (w["tally"], w["flips"], w["counts"], Resolution(w["applied"], w["ignored"]), t)

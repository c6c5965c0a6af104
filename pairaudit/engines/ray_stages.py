"""The driver's side of the distributed stage modes (docs/scale.md): which actor runs which phase, and which
objects flow where. Data goes worker to worker as object references; what comes here is small: counts and
statistics, the near-duplicate edges (O(edges), for the union-find), the flip fit's statistics.

* :func:`run_cells`: near duplicates (``stages.near_duplicates.cells``);
* :func:`run_sample`: the flip model fitted on a bounded seeded sample, applied on every shard;
* :func:`run_late_hash`: hash partitions cut once earlier stages' findings are known (split leakage, preference
  cycles), keys joined by ``partition_aliases`` in one partition.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from pairaudit.config import clamp_record
from pairaudit.engines.exchange import Pull
from pairaudit.engines.partition import finding_list
from pairaudit.engines.wire import dumps, loads
from pairaudit.stages.near_duplicates.bytext import DIGEST_BYTES
from pairaudit.stages.near_duplicates.infos import (
    NO_CANDIDATES,
    NO_PROMPT_PASSED,
    NO_RESPONSE_REACHED,
    PROMPTS_PASSED,
)
from pairaudit.stages.near_duplicates.search import nprobe_why

if TYPE_CHECKING:
    from pairaudit.datatypes import Finding
    from pairaudit.pipeline import Scanner


SHARDS_PER_PARTITION = 2  # shards' rows in one hash partition (``RayRun.hash_parts``)
GROUP_ROWS = 50_000  # rows of a near-duplicate cell group (before the rows that probe it from outside)


@dataclass
class RayRun:
    ray: Any
    scanner: Scanner
    actors: list[Any]
    starts: list[int]  # first row of each shard
    order: list[Any]  # the actors' stage list
    summaries: dict[str, list[Any]]  # per stage: one summary per shard, in shard order
    to_driver: int = 0
    from_driver: int = 0
    node_seconds: list[float] = field(default_factory=list)  # per actor
    owners: list[int | None] = field(default_factory=list)  # per shard: the actor that read it (set by the map)

    @property
    def workers(self) -> int:
        return len(self.actors)

    @property
    def hash_parts(self) -> int:
        """How many partitions a hash stage is cut into: one per actor, more where the shards are many, so that a
        partition holds the rows of about ``SHARDS_PER_PARTITION`` shards (each <= 40 MB of source: ~50,000 HH
        rows) whatever the dataset's size; an actor finalizes its partitions one after the other."""
        return max(self.workers, -(-len(self.starts) // SHARDS_PER_PARTITION))

    def owner(self, s: int) -> Any:
        """The actor that read shard ``s`` and holds its state (the map hands shards to whichever actor is free)."""
        k = self.owners[s]
        assert k is not None, f"shard {s} was never read"
        return self.actors[k]

    def worker(self, i: int) -> Any:
        """The actor that runs hash partition / cell group ``i`` (round robin: they are not shards)."""
        return self.actors[self.worker_index(i)]

    def worker_index(self, i: int) -> int:
        """The index in ``actors`` of :meth:`worker` ``(i)`` (where it parks what it cut for others)."""
        return i % self.workers

    def shard_owners(self) -> list[int]:
        """The index of the actor that read each shard (after the map: where each shard's parts are parked)."""
        assert None not in self.owners, "a shard was never read"
        return [k for k in self.owners if k is not None]

    def get(self, refs: list[Any]) -> list[Any]:
        raws = self.ray.get(refs)
        self.to_driver += sum(len(r) for r in raws)
        return [loads(r) for r in raws]

    def put(self, obj: Any) -> bytes:
        blob = dumps(obj)
        self.from_driver += len(blob)
        return blob


@dataclass
class Outcome:
    parts: list[list[Any]]  # per shard, for its writer: where its routed results (findings, rows, scores) are
    # parked (``Pull``), or object refs of those the driver made
    stats: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)  # near_duplicate_pair findings (for later stages)


def _add(timings: dict[str, float], more: dict[str, float]) -> None:
    for k, v in more.items():
        timings[k] = timings.get(k, 0.0) + float(v)


def _offsets(counts: list[int]) -> list[int]:
    return [0, *np.cumsum(counts)[:-1].tolist()] if counts else []


def _local(positions: np.ndarray, offsets: list[int], counts: list[int]) -> list[np.ndarray]:
    return [positions[(positions >= o) & (positions < o + c)] - o for o, c in zip(offsets, counts)]


# -- near duplicates ------------------------------------------------------------------------------------------
def run_cells(run: RayRun, stage: Any) -> Outcome:
    from pairaudit.datatypes import StageResult
    from pairaudit.engines.partition import route
    from pairaudit.pipeline import stage_findings
    from pairaudit.stages.near_duplicates.cells import driver_report, edges_findings
    from pairaudit.stages.near_duplicates.search import training_sample

    k, summ = run.order.index(stage), run.summaries[type(stage).__name__]
    n_shards = len(summ)
    counts = [int(x["n"]) for x in summ]
    n = sum(counts)
    stats: dict[str, Any] = {"n_skipped_pretokenized": sum(int(x["n_skipped"]) for x in summ)}
    timings = {"near_duplicates:embed_s": sum(float(x["t_embed"]) for x in summ)}
    if n == 0:
        return Outcome([[] for _ in range(n_shards)], {"near_duplicates": stats}, timings)
    plan = _cells_plan(run, stage, summ, n)
    mode, dup, con, groups, cells = plan["mode"], plan["dup"], plan["con"], plan["groups"], plan
    offsets = _offsets(counts)
    train = training_sample(n, cells["n_train"]) if cells["nlist"] > 1 else np.zeros(0, np.int64)
    trains = _local(train, offsets, counts)
    prep = [run.owner(s).cells.options(num_returns=3).remote(
        "prepare", k, s, run.put({"plan": plan, "train": trains[s], "offset": offsets[s]})) for s in range(n_shards)]
    index = run.actors[0].cells.options(num_returns=3).remote(
        "index", k, 0, run.put({"plan": plan, "n_shards": n_shards}), *[p[i] for i in range(3) for p in prep])
    del prep
    meta = run.get([index[0]])[0]
    quantizer, keys = index[1], index[2]
    # every exchange of rows between shards and cell groups goes worker to worker (``ray_exchange``): an operation
    # parks one part per receiver, and the next one, started once all have parked, pulls its parts
    asg = [run.owner(s).cells.remote("assign", k, s, run.put({"plan": plan}), quantizer) for s in range(n_shards)]
    hybrid = mode == "hybrid"
    rule = None
    if not hybrid:
        dup, con, stats["calibration"] = _calibrate(run, k, offsets, None, "deciding", mode)
        rule = {"dup": dup, "con": con}
    assigned = run.get(asg)
    del asg
    owners = run.shard_owners()
    srch = [run.worker(g).cells.remote("search", k, g, run.put({"plan": plan, "rule": rule, "offsets": offsets,
                                                                 "owners": owners}), quantizer, keys)
            for g in range(groups)]
    found = run.get(srch)
    del srch
    search = _search_stats(cells, n, assigned, found)
    for x in found:
        _add(timings, x["_timings"])
    timings.update({"ray_near:cell_groups": float(groups),
                    "ray_near:pairs_across_groups": float(sum(x["pairs_across_groups"] for x in found)),
                    "ray_near:rows_sent_to_groups": float(sum(x["copies"] for x in assigned))})
    edges, pull = found, "search"
    if hybrid:
        search["n_candidate_pairs"] = sum(x["n_candidate_pairs"] for x in found)
        edges = _verify_hybrid(run, k, offsets, groups, keys, meta["sample"], stats, search, timings)
        pull = "verify" if edges else None
    stats["mode"] = mode
    counts: dict[str, float] = {}
    findings = edges_findings(edges, plan["want_dups"], plan["want_con"], search, counts) if edges else []
    timings.update({f"ray_near:{key}": v for key, v in counts.items()})
    stats.update(search)
    stats.update(meta["stats"])
    results = _shard_results(run, k, n_shards, groups, {"mode": mode, "pull": pull}, timings)
    dim = next((int(x["dim"]) for x in reversed(results) if x.get("dim")), plan["dim"])  # the last shard's
    driver_report(stage, stats, [x["transformer"] for x in results])
    blob = sum(int(x.get("blob_bytes", 0)) for x in summ)
    itemsize, sk_size = next(x["itemsizes"] for x in summ if x["n"])
    stats.update(dim=dim,
                 bytes_per_row_observed=int(itemsize * dim * 3 + sk_size * 3 + 3 * 4 + DIGEST_BYTES + blob // n))
    res = StageResult(findings=findings)
    driver = route(res, stage_findings(stage, res, run.scanner.plan), run.starts)
    owners, tag = run.shard_owners(), f"cells.{type(stage).__name__}.result"
    parts = [[Pull(tag, s, owners[s], 0), run.ray.put(run.put(driver[s]))] for s in range(n_shards)]
    near = [f for f in res.findings if f.check == "near_duplicate_pair" and f.group is not None]
    return Outcome(parts, {"near_duplicates": stats}, timings, near)


def _shard_results(run: RayRun, k: int, n_shards: int, groups: int, args: dict[str, Any],
                   timings: dict[str, float]) -> list[dict[str, Any]]:
    """Each shard's result made on its own actor from the groups' parts and parked there for its writer
    (``Pull``); returns their statistics (the models they loaded are recorded, their timings added)."""
    group_owners = [run.worker_index(g) for g in range(groups)]
    results = run.get([run.owner(s).cells.remote(
        "result", k, s, run.put({**args, "start": run.starts[s], "group_owners": group_owners}))
        for s in range(n_shards)])
    for x in results:
        _add(timings, x["_timings"])
        for key, value in x["models"].items():
            run.scanner.ctx.models.setdefault(key, value)
    return results


def _verify_hybrid(run: RayRun, k: int, offsets: list[int], groups: int, keys: Any, sample: Any,
                   stats: dict[str, Any], search: dict[str, Any], timings: dict[str, float]) -> list[Any]:
    """Hybrid mode: the transformer embeds the candidate rows (and the calibration sample) where they are, each
    cell group finds its pairs whose prompts may pass (``CellGroup.prompts``), the copy threshold is calibrated on
    those pairs' rows and the sample (on the static vectors when there are none: nothing reads it then), and
    each group verifies its candidates; returns the edges (none without candidates). The groups' per-shard
    results (the nearest pairs' outcomes: ``near_duplicate_pair_reason``) stay parked with them for ``result``."""
    n_shards = len(offsets)
    if not search["n_candidate_pairs"]:  # no candidates: no transformer calibration either (the local engine's)
        sample = np.zeros(0, np.int64)
    group_owners = [run.worker_index(g) for g in range(groups)]  # where ``search`` parked
    emb = [run.owner(s).cells.remote("embed", k, s, run.put({"sample": sample, "group_owners": group_owners}))
           for s in range(n_shards)]
    counts = run.get(emb)
    n_cand = sum(x["candidates"] for x in counts)
    stats["hybrid_candidate_rows"] = n_cand
    if n_cand == 0:
        stats["calibration"] = _calibrate(run, k, offsets, None, "deciding", NO_CANDIDATES)[2]
        return []
    search["n_rows"] = sum(x["rows"] for x in counts)  # the candidate and sample rows (the local engine's)
    owners = run.shard_owners()
    prm = [run.worker(g).cells.options(num_returns=2).remote("prompts", k, g, run.put({"owners": owners}))
           for g in range(groups)]  # each pulls the shards' vectors in turn, and keeps them for ``verify``
    counted = run.get([p[1] for p in prm])
    passed, reached = (sum(x[key] for x in counted) for key in ("pairs", "reached"))
    timings["near_duplicates:pairs_prompts_passed"] = float(passed)  # run-specific: a pair counts once per group
    timings["near_duplicates:pairs_responses_reached"] = float(reached)
    if reached:
        dup, con, stats["calibration"] = _calibrate(run, k, offsets, [p[0] for p in prm], "transformer",
                                                    PROMPTS_PASSED, sample)
    else:  # nothing reads the copy threshold (the local engine's: ``verify.responses_reach``)
        dup, con, stats["calibration"] = _calibrate(run, k, offsets, None, "deciding",
                                                    NO_RESPONSE_REACHED if passed else NO_PROMPT_PASSED)
    del prm
    ver = [run.worker(g).cells.remote(
        "verify", k, g, run.put({"rule": {"dup": dup, "con": con}, "offsets": offsets}), keys)
        for g in range(groups)]
    edges = run.get(ver)
    for x in edges:
        _add(timings, x["_timings"])
    return edges


def _cells_plan(run: RayRun, stage: Any, summ: list[dict[str, Any]], n: int) -> dict[str, Any]:
    """The near-duplicate search plan every actor follows: the deciding mode and its rules, the k-means cells,
    the cell groups (about ``GROUP_ROWS`` rows each, a multiple of the actors), the fields' mean vectors."""
    from pairaudit.stages.near_duplicates.search import plan_cells

    mode = stage.deciding_mode(n)
    dup, con = stage.rules(mode)
    sums = sum(np.asarray(x["sums"], np.float64) for x in summ if x["n"])
    means = [(sums[f] / n).astype(np.float32) for f in range(3)] if mode in ("static", "hybrid") else None
    cells = plan_cells(n, int(dup["exact_max_rows"]), int(dup["nprobe"]))
    per_actor = -(-n // (GROUP_ROWS * run.workers))
    groups = max(1, min(run.workers * per_actor, cells["nlist"]))
    return {**cells, "groups": groups, "means": means, "below_static": mode != stage.mode, "mode": mode, "dup": dup,
            "con": con, "want_dups": "near_duplicate_pair" in stage.enabled,
            "want_con": "contradictory_pair" in stage.enabled, "dim": int(next(x["dim"] for x in summ if x["n"]))}


def _search_stats(cells: dict[str, Any], n: int, assigned: list[dict[str, Any]], found: list[dict[str, Any]]
                  ) -> dict[str, Any]:
    """report.json's description of the search: the index, its cells, the candidates found."""
    search: dict[str, Any] = {"n_rows": n}
    if cells["nlist"] == 1:
        search["index"] = "flat (exact, BLAS blocks)"
    else:
        sizes = sum(np.asarray(x["cell_sizes"], np.int64) for x in assigned)
        search.update(index="ivf (FAISS k-means cells, BLAS blocks)", nlist=cells["nlist"], nprobe=cells["nprobe"],
                      n_train=cells["n_train"], largest_cell=int(sizes.max()), empty_cells=int((sizes == 0).sum()))
        clamp_record(search, "near_duplicate_pair", "nprobe", int(cells["dup"]["nprobe"]), cells["nprobe"],
                     nprobe_why(cells))
    search["n_candidates"] = sum(x["n_candidates"] for x in found)
    return search


def _calibrate(run: RayRun, k: int, offsets: list[int], idx: list[Any] | None, space: str, label: str,
               sample: Any = ()) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The copy threshold, calibrated on the index actor from the local engine's negative pairs among rows
    ``idx`` (object refs of the groups' row lists, with the ``sample`` rows; None: every row); only the chosen
    pairs' rows travel."""
    n_shards = len(offsets)
    plan = run.actors[0].cells.options(num_returns=n_shards).remote(
        "calib_plan", k, 0, run.put({"hybrid": idx is not None, "offsets": offsets, "sample": sample}), *(idx or []))
    plans = plan if n_shards > 1 else [plan]  # one return value is one reference, not a list
    rows = [run.owner(s).cells.remote("rows", k, s, run.put({"space": space}), plans[s]) for s in range(n_shards)]
    out = run.get([run.actors[0].cells.remote("calibrate", k, 0, run.put({"space": label}), rows)])[0]
    return out["dup"], out["con"], out["info"]


# -- the flip model ---------------------------------------------------------------------------------------------
def run_sample(run: RayRun, stage: Any) -> Outcome:
    """``likely_flipped`` / ``dpo_overflow_risk``: fitted on one actor from a seeded sample of at most
    ``fit_sample_rows`` rows (every row below that: the local engine's fit), applied on each shard to its
    other rows."""
    k, summ = run.order.index(stage), run.summaries[type(stage).__name__]
    n_shards = len(summ)
    counts = [int(x["n"]) for x in summ]
    n = sum(counts)
    if n == 0:
        return Outcome([[] for _ in range(n_shards)])
    limit = int(stage.p_flip["fit_sample_rows"])
    offsets = _offsets(counts)
    sample = np.arange(n) if n <= limit else np.sort(np.random.default_rng(0).choice(n, limit, replace=False))
    taken = _local(sample, offsets, counts)
    # each shard's sample rows parked on its actor (the driver waits for the statuses), pulled by the fitter
    run.get([run.owner(s).sample.remote("take", k, s, run.put({"take": taken[s]})) for s in range(n_shards)])
    owners = run.shard_owners()
    totals = stage.sample_totals(summ) if n > limit else None  # every row's figures, not only the sample's
    fitter, name = len(run.actors) - 1, type(stage).__name__
    model, fit = run.actors[fitter].sample.options(num_returns=2).remote(
        "fit", k, 0, run.put({"n": n, "totals": totals, "starts": run.starts, "owners": owners}))
    meta = run.get([fit])[0]
    # the results stay parked where they were made (the fitter: one part per shard; each shard's own actor: the
    # rest of its rows), and each shard's writer pulls its parts: the driver holds none of them
    parts = [[Pull(f"sample.{name}.fit", 0, fitter, s)] for s in range(n_shards)]
    if n > limit:
        run.get([run.owner(s).sample.remote("apply", k, s, run.put({"taken": taken[s], "start": run.starts[s]}), model)
                 for s in range(n_shards)])
        for s in range(n_shards):
            parts[s].append(Pull(f"sample.{name}.apply", s, owners[s], 0))
    for key, value in meta["models"].items():
        run.scanner.ctx.models.setdefault(key, value)
    stats = meta["stats"]
    if n > limit and "likely_flipped" in stats:
        stats["likely_flipped"]["fitted_on"] = (f"a seeded sample of {limit:,} of {n:,} rows (--engine ray, "
                                                "likely_flipped.fit_sample_rows); the other rows are scored by the "
                                                "mean of its fold models")
    return Outcome(parts, stats, meta["timings"])


# -- hash partitions after earlier findings --------------------------------------------------------------------
def run_late_hash(run: RayRun, stage: Any, findings: list[Finding], ran: set[str]) -> tuple[list[Any], Any]:
    """Cut the shards' kept state into hash partitions now (keys joined by the stage's ``partition_aliases``
    share one; each shard's pieces stay with its actor), and finalize each partition on an actor with the earlier
    findings; returns the reduce refs (one status per partition, as ``ShardActor.reduce``)."""
    from pairaudit.stages.near_duplicates.unionfind import UnionFind

    k, n_shards, n_parts = run.order.index(stage), len(run.starts), run.hash_parts
    aliases = {"keys": np.zeros(0, np.int64), "to": np.zeros(0, np.int64)}
    pairs = stage.partition_aliases(findings) if hasattr(stage, "partition_aliases") else []
    if pairs:
        wanted = np.unique(np.asarray(pairs, np.int64).ravel())
        ends = [*run.starts[1:], np.iinfo(np.int64).max]
        got = run.get([run.owner(s).keys_of.remote(k, s, run.put(wanted[(wanted >= run.starts[s]) & (wanted < ends[s])]))
                       for s in range(n_shards)])
        key_of = {int(r): int(v) for g in got for r, v in zip(g["rows"].tolist(), g["keys"].tolist())}
        uniq = sorted(set(key_of.values()))
        at = {v: i for i, v in enumerate(uniq)}
        uf = UnionFind(len(uniq))
        for a, b in pairs:
            if a in key_of and b in key_of:
                uf.union(at[key_of[a]], at[key_of[b]])
        canon: dict[int, int] = {}
        for v in uniq:
            root = uf.find(at[v])
            canon[root] = min(canon.get(root, v), v)
        to = np.asarray([canon[uf.find(at[v])] for v in uniq], np.int64)
        aliases = {"keys": np.asarray(uniq, np.int64), "to": to}
    blob = run.put(aliases)
    run.get([run.owner(s).split.remote(k, s, n_parts, blob) for s in range(n_shards)])  # every piece parked where
    # it was cut (its bytes: the actor's ``busy``) before any reducer pulls
    near = [finding_list(f) for f in findings]
    near_blob = run.put([near, sorted(ran)])
    return [run.worker(p).reduce.remote(k, p, run.starts, near_blob) for p in range(n_parts)], None

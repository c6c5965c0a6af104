"""The Ray actor's operations for the stages that are not plain hash partitions (docs/scale.md):

* ``cells`` (``distribute = "cells"``, near duplicates): the phases of ``stages.near_duplicates.cells`` on
  the actor that holds the data: a shard's columns, a cell group, or the index (one actor);
* ``sample`` (``distribute = "sample"``, the flip model): a shard's rows of the seeded fitting sample, the fit
  on one actor, the fitted model applied to every other row where it is;
* ``split`` / ``keys_of``: hash partitions cut after earlier stages' findings are known (``set_findings``
  stages), with ``partition_aliases`` keys joined into one partition.

Every argument and result is a :mod:`.wire` blob (no pickle); only small results reach the driver.
"""

from __future__ import annotations

import contextlib
import resource
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from pairaudit.engines.exchange import PieceFile
from pairaudit.engines.parked import Parked, discard, unpark
from pairaudit.engines.partition import route, split_state
from pairaudit.engines.wire import dumps, loads


def _cat(parts: list[np.ndarray]) -> np.ndarray | None:
    return np.concatenate(parts) if parts else None


def _packed(pieces: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    """A shard's rows of one cell group, cut in pieces as they are read (``cells.shard_assign``), as the parts of
    one :func:`.exchange.pack` message, each encoded as it comes."""
    from pairaudit.engines.exchange import pack

    for j, piece in enumerate(pieces):
        yield pack([(j, dumps(piece))])


def hwm_mb() -> float:
    """This process's peak resident memory since the last :func:`reset_hwm` (``VmHWM``, MB); ``ru_maxrss``
    where /proc is not there."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_hwm() -> bool:
    """Start this process's peak resident memory afresh from its resident memory now (Linux: ``clear_refs`` 5,
    which resets ``ru_maxrss`` too); False where that is not allowed (the peaks then run on from the last)."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


class StageOps:
    """Mixed into ``ShardActor``: ``self.stages``, ``self.shards``, ``self.ctx``, ``self.plan``."""

    groups: dict[int, Any]
    index: Any

    @contextlib.contextmanager
    def op_peak(self, name: str) -> Iterator[None]:
        """Record the peak RSS (MB) of one reduce operation (``name``, e.g. ``reduce.cells.search``) in
        ``self.peaks`` (timings.json: ``ray_actor:<k>:peak_rss_mb:<name>``): the peak so far is folded into
        ``self.top`` (what ``mark`` reports) and reset before it, so the figure is this operation's own (its
        arguments, already in memory when it starts, included); the maximum over the calls of that name."""
        self.top = max(getattr(self, "top", 0.0), hwm_mb())
        reset_hwm()
        try:
            with self.watch.during(name):  # type: ignore[attr-defined]
                yield
        finally:
            peak = hwm_mb()
            self.top = max(self.top, peak)
            peaks = self.peaks  # type: ignore[attr-defined]
            peaks[name] = round(max(peaks.get(name, 0.0), peak), 1)

    def _stage_at(self, k: int) -> Any:
        return self.stages[k]  # type: ignore[attr-defined]

    def _kept(self, s: int, name: str) -> Any:
        return unpark(self.shards[s]["states"][name])  # type: ignore[attr-defined]

    # -- near duplicates -------------------------------------------------------------------------------------
    def cells(self, op: str, k: int, key: int, args: bytes, *blobs: bytes) -> Any:
        """One phase of the near-duplicate stage (``stages.near_duplicates.cells``) on this actor: ``key`` is a
        shard or a cell group; ``args`` and ``blobs`` are wire blobs; returns the results' blobs."""
        t0 = time.perf_counter()
        stage, a, timings = self._stage_at(k), loads(args), {}
        if not hasattr(self, "groups"):
            self.groups, self.index = {}, None
        ops = {"prepare": self._nd_prepare, "index": self._nd_index, "assign": self._nd_assign,
               "search": self._nd_search, "embed": self._nd_embed, "calib_plan": self._nd_calib_plan,
               "prompts": self._nd_prompts, "rows": self._nd_rows, "calibrate": self._nd_calibrate,
               "verify": self._nd_verify,
               "result": self._nd_result}
        if op not in ops:
            raise ValueError(f"unknown cells op {op!r}")
        with self.op_peak(f"reduce.cells.{op}"):  # a list of object refs is loaded by the op (``calibrate``)
            out: list[Any] = ops[op](stage, key, a, [b if isinstance(b, list) else loads(b) for b in blobs], timings)
        seconds = time.perf_counter() - t0
        self.seconds += seconds  # type: ignore[attr-defined]
        if op in ("search", "verify", "result"):
            out[-1] = {**out[-1], "_timings": timings, "_seconds": seconds}
        return self._send([dumps(x) for x in out])

    def _nd_prepare(self, stage: Any, key: int, a: dict, parts: list[Any], timings: dict) -> list[Any]:
        from pairaudit.stages.near_duplicates import cells as nd

        d = self._kept(key, type(stage).__name__)
        d["offset"] = int(a["offset"])
        return list(nd.shard_prepare(stage, d, a["plan"], np.asarray(a["train"], np.int64), timings))

    def _nd_index(self, stage: Any, key: int, a: dict, parts: list[Any], timings: dict) -> list[Any]:
        from pairaudit.stages.near_duplicates.cell_groups import CellIndex

        m = int(a["n_shards"])
        self.index = CellIndex(a["plan"], parts[:m], parts[m:2 * m], parts[2 * m:])
        return list(self.index.build())

    def _nd_assign(self, stage: Any, key: int, a: dict, parts: list[Any], timings: dict) -> list[Any]:
        """This shard's rows of every cell group parked here (``ray_exchange``: each group's ``search`` pulls its
        part); returns the shard's cell sizes."""
        from pairaudit.stages.near_duplicates import cells as nd

        f = self.parking(f"cells.{type(stage).__name__}.assign", key)  # type: ignore[attr-defined]
        out = nd.shard_assign(self._kept(key, type(stage).__name__), a["plan"], parts[0],
                              encode=lambda pieces: f.append(_packed(pieces)))  # a piece in memory at a time
        self._park_parts(stage, "assign", key, f)
        return [out[-1]]

    def _park_parts(self, stage: Any, op: str, key: int, parts: list[Any] | PieceFile, kind: str = "cells") -> None:
        """``parts`` (one per receiver: a shard or a cell group; or a file already filled) parked under ``op`` and
        ``key`` for the next operation or the shards' writers to pull (counted as sent on: ``busy``); ``kind``:
        the stage's ``distribute`` (cells, sample)."""
        blobs = parts if isinstance(parts, PieceFile) else (dumps(p) for p in parts)
        sent = self.park(f"{kind}.{type(stage).__name__}.{op}", key, blobs)  # type: ignore[attr-defined]
        self.sent = getattr(self, "sent", 0) + sent

    def _pulled(self, stage: Any, op: str, keys: int, owners: list[int], i: int) -> Iterator[Any]:
        """Part ``i`` of what ``op`` parked under each key ``0 .. keys - 1`` (on actor ``owners[key]``), decoded,
        one at a time."""
        tag = f"cells.{type(stage).__name__}.{op}"
        return (loads(b) for b in self.fetch(tag, list(range(keys)), owners, i))  # type: ignore[attr-defined]

    def _nd_search(self, stage: Any, key: int, a: dict, parts: list[Any], timings: dict) -> list[Any]:
        """The shards' rows of this group pulled from the actors that hold them, one shard at a time, their large
        columns spilled as they come (``CellGroup``): the group's memory does not grow with its rows. Its
        results, one part per shard, are parked here for ``embed`` (hybrid) or ``result``."""
        from pairaudit.engines.exchange import unpack
        from pairaudit.stages.near_duplicates.cell_groups import CellGroup
        from pairaudit.stages.spill import Spill

        owners = a["owners"]
        tag = f"cells.{type(stage).__name__}.assign"
        shards = (loads(piece) for blob in self.fetch(tag, list(range(len(owners))), owners, key)  # type: ignore[attr-defined]
                  for _, piece in unpack(blob))  # in shard and row order
        group = self.groups[key] = CellGroup(key, a["plan"], parts[0]["cell_group"], shards, Spill(limit=0))
        rule = (a["rule"]["dup"], a["rule"]["con"]) if a["rule"] else None
        out = group.search(parts[1]["keys"], rule, a["offsets"], timings, parts[1].get("two"))
        if rule is not None:
            del self.groups[key]
        self._park_parts(stage, "search", key, out[:-1])
        return [out[-1]]

    def _nd_embed(self, stage: Any, key: int, a: dict, parts: list[Any], timings: dict) -> list[Any]:
        from pairaudit.stages.near_duplicates import cells as nd

        parts = list(self._pulled(stage, "search", len(a["group_owners"]), a["group_owners"], key))
        d = self._kept(key, type(stage).__name__)
        d["best"] = Parked(Path(self.spill_folder) / f"shard{key}.best.npz", parts)  # type: ignore[attr-defined]
        out = nd.shard_embed(stage, d, [np.asarray(p.get("wanted", ()), np.int64) for p in parts],
                             np.asarray(a["sample"], np.int64), timings)
        # the candidate and sample rows' chosen and rejected vectors wait on disk for the calibration (``rows``):
        # held, every shard of this actor kept them from here (~3 KB a candidate row; 171,660 rows at 2M)
        d["tvec"] = Parked(Path(self.spill_folder) / f"shard{key}.tvec.npz", list(d["tvec"]))  # type: ignore[attr-defined]
        self._park_parts(stage, "embed", key, out[:-1])  # per group: the vectors it asked for (``prompts``)
        return out[-1:]

    def _nd_prompts(self, stage: Any, key: int, a: dict, parts: list[Any], timings: dict) -> list[Any]:
        """Hybrid mode: this group's candidate vectors pulled from the shards (kept for ``verify``); the rows of the
        pairs whose prompts may pass, for the calibration (``CellGroup.prompts``)."""
        vectors = self._pulled(stage, "embed", len(a["owners"]), a["owners"], key)  # the shards', one at a time
        return self.groups[key].prompts(vectors)

    def _nd_calib_plan(self, stage: Any, key: int, a: dict, parts: list[Any], timings: dict) -> list[Any]:
        """The negative pairs' rows per shard: among every row, or (hybrid) the candidate pairs' rows that the
        groups sent (``prompts``) and the calibration sample, sorted and each once (the local engine's order)."""
        idx = np.union1d(np.concatenate([np.zeros(0, np.int64)] + [np.asarray(p["idx"], np.int64) for p in parts]),
                         np.asarray(a.get("sample", ()), np.int64)) if a["hybrid"] else None
        return [{"pos": p} for p in self.index.calibration_rows(idx, a["offsets"])]

    def _nd_rows(self, stage: Any, key: int, a: dict, parts: list[Any], timings: dict) -> list[Any]:
        from pairaudit.stages.near_duplicates import cells as nd

        pos = np.asarray(parts[0]["pos"], np.int64)
        d = self._kept(key, type(stage).__name__)
        if isinstance(d.get("tvec"), Parked):
            d["tvec"] = tuple(unpark(d["tvec"], remove=True))
        out = [nd.shard_rows(d, pos, a["space"]) if len(pos) else {}]
        if a["space"] == "transformer":  # the static vectors and the calibration's are not needed any more
            for k2 in ("P", "C", "R", "tvec"):
                d.pop(k2, None)
        return out

    def _nd_calibrate(self, stage: Any, key: int, a: dict, parts: list[Any], timings: dict) -> list[Any]:
        import ray

        rows = (loads(ray.get(ref)) for ref in parts[0])  # the shards' rows, one blob in memory at a time
        dup, con, info = self.index.calibrate(rows, a["space"])
        self.index = None
        return [{"dup": dup, "con": con, "info": info}]

    def _nd_verify(self, stage: Any, key: int, a: dict, parts: list[Any], timings: dict) -> list[Any]:
        group = self.groups.pop(key)  # its candidate vectors pulled by ``prompts``
        out = group.verify(parts[0]["keys"], (a["rule"]["dup"], a["rule"]["con"]), timings, a["offsets"],
                           parts[0].get("two"))
        self._park_parts(stage, "verify", key, out[:-1])
        return [out[-1]]

    def _nd_result(self, stage: Any, key: int, a: dict, parts: list[Any], timings: dict) -> list[Any]:
        """This shard's parts of every group's results pulled (``a["pull"]``: ``verify``'s in hybrid mode, else
        ``search``'s; none in hybrid mode without candidates)."""
        parts = list(self._pulled(stage, a["pull"], len(a["group_owners"]), a["group_owners"], key)) if a["pull"] else []
        return self._cells_result(stage, key, a, parts, timings)

    def _send(self, blobs: list[Any]) -> Any:
        """Results that go on to other workers (counted: ``busy``; parked parts are counted as parked)."""
        self.sent = getattr(self, "sent", 0) + sum(len(b) for b in blobs)
        return blobs if len(blobs) > 1 else blobs[0]

    def _cells_result(self, stage: Any, s: int, a: dict[str, Any], parts: list[dict[str, Any]],
                      timings: dict[str, float]) -> list[Any]:
        from pairaudit.datatypes import StageResult
        from pairaudit.pipeline import stage_findings
        from pairaudit.stages.near_duplicates import cells as nd

        d = self.shards[s]["states"].pop(type(stage).__name__)  # type: ignore[attr-defined]
        discard(d.pop("tvec", None))  # the calibration never read it (none ran): its file goes
        stored = unpark(d.pop("best", None), remove=True)  # hybrid: the search's parts (``embed``); ``parts``: ``verify``'s
        best, updates = (stored, parts) if stored is not None else (parts, [])
        try:
            findings, scores = nd.shard_result(stage, d, best, a["mode"], timings, updates)
            report = nd.shard_report(stage, a["mode"])
        finally:
            nd.close_shard(d)  # the shard's spill files
        rows = d["rows"] if d["n"] else np.zeros(0, np.int64)
        res = StageResult(findings=findings, rows=rows, scores=scores if d["n"] else {})
        part = route(res, stage_findings(stage, res, self.plan), [a["start"]])[0]  # type: ignore[attr-defined]
        self._park_parts(stage, "result", s, [part])  # this actor writes the shard: its writer pulls it here
        dim = int(d.get("dim", 0))
        return [{"models": self.ctx.models, "dim": dim, "transformer": report}]  # type: ignore[attr-defined]

    # -- the flip model -----------------------------------------------------------------------------------------
    def sample(self, op: str, k: int, key: int, args: bytes, *blobs: bytes) -> Any:
        """One phase of the flip model on this actor (``take``, ``fit``, ``apply``); its peak RSS recorded."""
        with self.op_peak(f"reduce.sample.{op}"):
            return self._sample(op, k, key, args, *blobs)

    def _sample(self, op: str, k: int, key: int, args: bytes, *blobs: bytes) -> Any:
        from pairaudit.pipeline import stage_findings

        t0 = time.perf_counter()
        stage, a = self._stage_at(k), loads(args)
        name = type(stage).__name__
        if op == "take":
            state = self._kept(key, name)
            self._park_parts(stage, "take", key, [stage.take_rows(state, np.asarray(a["take"], np.int64))], "sample")
            out = [{"n": len(a["take"])}]
        elif op == "fit":
            model: dict[str, Any] = {}
            tag, owners = f"sample.{name}.take", a["owners"]  # the shards' sample rows, pulled one at a time
            for blob in self.fetch(tag, list(range(len(owners))), owners, 0):  # type: ignore[attr-defined]
                stage.absorb_state(loads(blob))
            try:
                res = stage.fit(model, a.get("totals"))
            finally:
                stage.export_state()
                stage.release()
            ref = (res.stats.get("likely_flipped") or res.stats.get("dpo_overflow_risk") or {}).get("reference")
            if ref and "rows_seen" in ref:
                ref["rows_seen"] = int(a["n"])
            parts = route(res, stage_findings(stage, res, self.plan), a["starts"])  # type: ignore[attr-defined]
            self._park_parts(stage, "fit", 0, parts, "sample")  # one part per shard, each pulled by the shard's writer
            meta = {"stats": res.stats, "timings": res.timings, "models": self.ctx.models}  # type: ignore[attr-defined]
            out = [model, meta]
        elif op == "apply":
            state = unpark(self.shards[key]["states"].pop(name), remove=True)  # type: ignore[attr-defined]
            spill = self.shards[key]["spills"].pop(name, None)  # type: ignore[attr-defined]
            n = len(stage.row_numbers(state))
            rest = np.setdiff1d(np.arange(n), np.asarray(a["taken"], np.int64))
            try:
                res = stage.with_state(stage.take_rows(state, rest)).apply(loads(blobs[0]))
            finally:
                if spill is not None:
                    spill.close()
            self._park_parts(stage, "apply", key, route(res, stage_findings(stage, res, self.plan),  # type: ignore[attr-defined]
                                                        [a["start"]]), "sample")
            out = [{"n": n - len(a["taken"])}]
        else:
            raise ValueError(f"unknown sample op {op!r}")
        self.seconds += time.perf_counter() - t0  # type: ignore[attr-defined]
        return self._send([dumps(x) for x in out])

    # -- hash partitions after earlier findings -----------------------------------------------------------------
    def keys_of(self, k: int, s: int, rows: bytes) -> bytes:
        """The partition key of some of this shard's rows (``partition_aliases``)."""
        with self.op_peak("reduce.keys_of"):
            return self._keys_of(k, s, rows)

    def _keys_of(self, k: int, s: int, rows: bytes) -> bytes:
        stage = self._stage_at(k)
        state = self._kept(s, type(stage).__name__)
        want = np.asarray(loads(rows), np.int64)
        all_rows = stage.row_numbers(state)
        keys = _cat(state[stage.partition_key])
        if not len(all_rows) or keys is None:
            return dumps({"rows": np.zeros(0, np.int64), "keys": np.zeros(0, np.int64)})
        keys = keys[:, 0] if keys.ndim == 2 else keys
        hit = np.isin(all_rows, want)
        return dumps({"rows": all_rows[hit], "keys": keys[hit].astype(np.int64)})

    def split(self, k: int, s: int, n_parts: int, aliases: bytes) -> bytes:
        """One shard's kept state of a late hash stage cut into ``n_parts`` partitions, parked here until the
        partitions' reducers pull them (``ray_exchange``); returns the pieces' bytes. Its peak RSS recorded."""
        with self.op_peak("reduce.split"):
            return self._split(k, s, n_parts, aliases)

    def _split(self, k: int, s: int, n_parts: int, aliases: bytes) -> bytes:
        stage = self._stage_at(k)
        state = unpark(self.shards[s]["states"].pop(type(stage).__name__), remove=True)  # type: ignore[attr-defined]
        al = loads(aliases)
        parts = split_state(state, stage.partition_key, n_parts,
                            aliases=(np.asarray(al["keys"], np.int64), np.asarray(al["to"], np.int64)))
        sent = self.park(f"hash{k}", s, (dumps(p) for p in parts))  # type: ignore[attr-defined]
        self.sent = getattr(self, "sent", 0) + sent
        return dumps({"shuffle_bytes": sent})

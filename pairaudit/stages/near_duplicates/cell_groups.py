"""The near-duplicate stage's work that spans shards, for an engine that spreads it over workers
(``cells.py`` has the phases and the shards' side): the *index* (one worker: what needs every row once) and the
*cell groups* (the search and the verification of a group of k-means cells, on the worker that holds them)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from pairaudit.stages.near_duplicates.calibrate import (
    calibrate,
    calibration_sample,
    negative_pairs,
    negative_similarities,
    with_calibration,
)
from pairaudit.stages.near_duplicates.match import OUTCOME_FIELDS, SKETCH_BYTES, token_sorted
from pairaudit.stages.near_duplicates.reasons import (
    NEAR_FIELDS,
    PASSED,
    empty_outcomes,
    keep_nearer,
    verify_nearest,
)
from pairaudit.stages.near_duplicates.search import (
    assign_cells,
    cell_lists,
    search_cells,
    sum_vectors,
    train_cells,
)
from pairaudit.stages.near_duplicates.verify import (
    lowest_response_floor,
    match_edges,
    pair_outcomes,
    prompts_pass,
    responses_reach,
    same_keys,
)
from pairaudit.stages.spill import Spill

VECTORS = ("P", "C", "R")
SUM_ROWS = 8_192  # a search chunk's rows read from the group's columns at a time (``search.sum_vectors``)
PAIR_BUDGET = 500_000  # searched pairs a cell group verifies at once
GROUP_FIELDS = ("pos", "rows", "assign", "P", "C", "R", "sk", "ln", "hresp", "phash")
SPILLED = ("P", "C", "R", "sk")  # a group's large columns (~3.9 KB a row): on disk when the group has a Spill
CALIBRATION_SPILLED = ("C", "R", "sk")  # the calibration rows' large columns, on disk while the pairs are compared
KEY_FIELDS = ("ka", "kb", "sa", "sb")  # an edge's rows' prompt digests and ``verify.same_keys`` (``Separated``)


# -- the index (one worker) ------------------------------------------------------------------------------------
class CellIndex:
    """What needs every row once: prompt digests and compared response pairs (16 B a row), the cells."""

    def __init__(self, plan: dict[str, Any], S: list[dict], phash: list[dict], keys: list[dict]) -> None:
        self.plan = plan
        self.phash = np.concatenate([p["phash"] for p in phash]) if phash else np.zeros(0, np.int64)
        self.keys = np.unique(np.concatenate([k["keys"] for k in keys])) if keys else np.zeros(0, np.int64)
        S = [s["S"] for s in S if len(s["S"])]
        self.sample = np.concatenate(S) if S else np.zeros((0, 0), np.float32)
        self.pairs: tuple[np.ndarray, ...] | None = None

    def build(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        plan = self.plan
        nlist, groups = plan["nlist"], plan["groups"]
        centroids = train_cells(self.sample, nlist) if nlist > 1 else np.zeros((1, plan["dim"]), np.float32)
        self.sample = np.zeros(0)
        cell_group = np.zeros(nlist, np.int64)
        if groups > 1:  # cells close to each other in one group: a row's nprobe cells mostly share one
            cell_group = assign_cells(centroids, train_cells(centroids, groups), 1)[:, 0]
        _, counts = np.unique(self.phash, return_counts=True)
        stats = {"distinct_prompts": int(len(counts)), "prompts_with_several_pairs": int((counts > 1).sum()),
                 "pairs_sharing_a_prompt": int(counts[counts > 1].sum()), "max_pairs_per_prompt": int(counts.max())}
        sample = (calibration_sample(self.phash, int(plan["dup"]["calibration_rows"])) if plan["mode"] == "hybrid"
                  else np.zeros(0, np.int64))
        uniq, counts = np.unique(self.phash, return_counts=True)
        return ({"stats": stats, "sample": sample}, {"centroids": centroids, "cell_group": cell_group},
                {"keys": self.keys, "two": uniq[counts == 2]})  # prompts of exactly two rows (match_pairs)

    def calibration_rows(self, idx: np.ndarray | None, starts: list[int]) -> list[np.ndarray]:
        """The local engine's negative pairs among rows ``idx`` (None: every row); per shard, the rows whose
        vectors they need."""
        idx = np.arange(len(self.phash)) if idx is None else np.asarray(idx, np.int64)
        self.pairs = negative_pairs(self.phash, idx, int(self.plan["dup"]["calibration_pairs"]))
        need = np.unique(np.concatenate([self.pairs[0], self.pairs[2]]))
        cut = np.searchsorted(need, np.asarray([*starts[1:], np.iinfo(np.int64).max]))
        return np.split(need, cut[:-1])

    def calibrate(self, parts: Iterable[dict[str, Any]], space: str) -> tuple[dict, dict, dict]:
        """The copy threshold from the negative pairs (``calibration_rows``); ``parts``: the shards' rows of those
        pairs in shard order (an iterable: a Ray actor loads them one at a time), their large columns written to
        disk as each part arrives and read back a chunk of pairs at a time (``search.rowdot``): the working set
        is one part and one chunk, not every calibration row's vectors (~460 MB for the 50k pairs at 1M rows)."""
        assert self.pairs is not None
        spill = Spill(limit=0)  # the large columns go to disk as each part arrives, read back a pair chunk at a time
        cols: dict[str, list[np.ndarray]] = {k: [] for k in ("pos", "C", "R", "sk", "ln")}
        for p in parts:
            if len(p.get("pos", ())):
                for k in cols:
                    cols[k].append(p.pop(k))
                spill.maybe({k: cols[k] for k in CALIBRATION_SPILLED})
        ra, fa, rb, fb, cross = self.pairs
        try:
            have = bool(cols["pos"])
            pos = np.concatenate(cols["pos"]) if have else np.zeros(0, np.int64)
            col = {k: spill.column(k, cols[k]) if have else None for k in ("C", "R", "sk", "ln")}
            at = np.arange(len(pos))
            remap = (np.searchsorted(pos, ra), fa, np.searchsorted(pos, rb), fb, cross)
            negs = negative_similarities(col["C"], col["R"], col["sk"], col["ln"], at, remap) if have else \
                (np.zeros(0), np.zeros(0))
        finally:
            spill.close()
        dup = self.plan["dup"]
        info = calibrate(negs, dup, space)
        return (*with_calibration(dup, self.plan["con"], info), info)


# -- cell groups ------------------------------------------------------------------------------------------------
class CellGroup:
    """One group of cells on a worker: the rows of its cells (members and probing rows) from every shard.

    ``parts``: the shards' rows of the group, in shard order (an iterable: a Ray actor loads them one at a time);
    ``spill``: where the large columns (``SPILLED``: vectors and sketches) go as each part arrives, read back a
    search chunk at a time (:class:`~pairaudit.stages.spill.Mapped`), so the group's memory is its small
    columns (~150 B a row) and one chunk's working set, whatever its rows; None: all in memory."""

    def __init__(self, g: int, plan: dict[str, Any], cell_group: np.ndarray, parts: Iterable[dict[str, Any]],
                 spill: Any = None) -> None:
        self.g, self.plan, self.spill = g, plan, spill
        self.cell_group = np.asarray(cell_group, np.int64)
        self.cells = np.flatnonzero(self.cell_group == g)
        cols: dict[str, list[np.ndarray]] = {k: [] for k in GROUP_FIELDS}
        n_parts = 0
        for p in parts:
            if not len(p.get("pos", ())):
                continue
            for k in GROUP_FIELDS:
                cols[k].append(p.pop(k))
            if spill is not None:
                spill.maybe({k: cols[k] for k in SPILLED})  # a Spill(limit=0): written now, the lists cleared
            n_parts += 1
        on_disk = spill.spilled_columns if spill is not None else set()
        self.d = {k: spill.column(k, cols[k]) if k in on_disk else np.concatenate(cols[k]) for k in GROUP_FIELDS} \
            if n_parts else None
        self.cand: tuple[np.ndarray, np.ndarray] | None = None
        self.near: tuple[np.ndarray, np.ndarray] | None = None  # hybrid: rows and nearest rows to verify again
        self.vec: tuple[np.ndarray, ...] | None = None  # hybrid: the candidate rows' transformer vectors (``prompts``)

    def _chunks(self, members: list[np.ndarray], probes: list[np.ndarray], k: int) -> list[list[int]]:
        """This group's cells in order, cut so that a chunk's searched pairs (at most ``k`` per probing row and
        cell) stay under ``PAIR_BUDGET``: verification memory is bounded whatever the group's size."""
        chunks: list[list[int]] = [[]]
        load = 0
        for c in self.cells.tolist():
            cost = len(probes[c]) * min(k, len(members[c]))
            if cost == 0:
                continue
            if chunks[-1] and load + cost > PAIR_BUDGET:
                chunks.append([])
                load = 0
            chunks[-1].append(c)
            load += cost
        return [c for c in chunks if c]

    def search(self, keys: np.ndarray, rule: tuple[dict, dict] | None, starts: list[int],
               timings: dict[str, float], two: np.ndarray | None = None) -> list[dict[str, Any]]:
        """Search this group's cells; then the loose candidate rule (``rule`` None: hybrid mode) or the whole
        verification. Returns per shard (best similarities of its rows, candidate rows wanted), then the
        edges and the counts. ``two``: the sorted digests of the prompts with exactly two rows."""
        import time

        plan, d = self.plan, self.d
        n_shards = len(starts)
        empty = [{} for _ in range(n_shards)]
        if d is None:
            return [*empty, {"edges": no_edges(), "n_candidates": 0, "n_candidate_pairs": 0, "pairs_across_groups": 0}]
        members, probes = cell_lists(d["assign"], plan["nlist"])
        best = np.full(len(d["pos"]), -np.inf, np.float32)
        dup = plan["dup"]
        k = int(dup["neighbors"])
        hybrid = rule is None
        dup_r, con_r = (dup, plan["con"]) if hybrid else rule
        home = self.cell_group[d["assign"][:, 0]]
        parts_s, parts_x, n_cand, across = [], [], 0, 0
        ts = self._token_sorted(d["sk"])  # each row's words sorted once (match_pairs)
        two_rows = np.isin(d["phash"], two) if two is not None else None
        near = empty_outcomes(len(d["pos"])) if plan["want_dups"] else None  # each row's nearest pair here
        for chunk in self._chunks(members, probes, k):
            t0 = time.perf_counter()
            rows = np.unique(np.concatenate([members[c] for c in chunk] + [probes[c] for c in chunk]))
            S = sum_vectors(d["P"], d["C"], d["R"], chunk=SUM_ROWS, rows=rows)  # the chunk's rows, a slice at a time
            sub = np.full(len(rows), -np.inf, np.float32)
            a, b, sim = search_cells(S, [np.searchsorted(rows, members[c]) for c in chunk],
                                     [np.searchsorted(rows, probes[c]) for c in chunk], k,
                                     float(dup["min_search_cosine"]), sub)
            del S
            best[rows] = np.maximum(best[rows], sub)
            a, b = rows[a], rows[b]
            if near is not None:
                keep_nearer(near, a, b, sim)
            n_cand += len(a)
            across += int((home[a] != home[b]).sum())
            t1 = time.perf_counter()
            timings["near_duplicates:search_s"] = timings.get("near_duplicates:search_s", 0.0) + t1 - t0
            es, ex = match_edges(d["P"], d["C"], d["R"], d["sk"], d["ln"], a, b, dup_r, con_r, plan["want_dups"],
                                 plan["want_con"], candidates_only=hybrid, compared=(d["hresp"], keys), ts=ts,
                                 two_rows=two_rows)
            parts_s.append(es)
            parts_x.append(ex)
            timings["near_duplicates:verify_s"] = (timings.get("near_duplicates:verify_s", 0.0)
                                                   + time.perf_counter() - t1)
        es, ex = (_once(p) for p in (parts_s, parts_x))
        if near is not None:  # the nearest pairs' outcomes (hybrid: the loose rule's; ``verify`` reads them again)
            verify_nearest(near, lambda x, y: pair_outcomes(
                d["P"], d["C"], d["R"], d["sk"], d["ln"], x, y, dup_r, con_r, plan["want_dups"], plan["want_con"],
                candidates_only=hybrid, compared=(d["hresp"], keys), ts=ts, two_rows=two_rows))
        shard = np.searchsorted(np.asarray(starts, np.int64), d["pos"], side="right") - 1
        out = []
        ca = np.concatenate([es["a"], ex["a"]])
        cb = np.concatenate([es["b"], ex["b"]])
        if hybrid:
            key = np.unique(ca * len(d["pos"]) + cb)
            self.cand = (key // len(d["pos"]), key % len(d["pos"]))
            wanted = np.unique(np.concatenate(self.cand))
        for s in range(n_shards):
            mine = shard == s
            part: dict[str, Any] = {"pos": d["pos"][mine], "best": best[mine]}
            if near is not None:
                part.update(self._near_part(near, mine))
            if hybrid:
                part["wanted"] = d["pos"][wanted[shard[wanted] == s]]
            out.append(part)
        edges = no_edges() if hybrid else self._global(es, ex)
        n_pairs = len(self.cand[0]) if hybrid and self.cand is not None else len(ca)
        meta = {"edges": edges, "n_candidates": int(n_cand), "n_candidate_pairs": int(n_pairs),
                "pairs_across_groups": across}
        self._searched(wanted if hybrid and self.cand is not None else None, near)
        return [*out, meta]

    def _searched(self, wanted: np.ndarray | None, near: dict[str, np.ndarray] | None) -> None:
        """After ``search``: hybrid mode keeps only the candidate rows ``wanted`` (``verify`` reads them again),
        else nothing reads the large columns again; the group's spill files go."""
        d = self.d
        assert d is not None
        if wanted is not None and self.cand is not None:
            self.d = {k: v[wanted] for k, v in d.items() if k not in VECTORS}
            self.cand = (np.searchsorted(wanted, self.cand[0]), np.searchsorted(wanted, self.cand[1]))
            if near is not None:  # the rows whose nearest pair passed the loose rule (both rows are wanted)
                x = np.flatnonzero(np.isin(near["code"], PASSED) & (near["partner"] >= 0))
                self.near = (np.searchsorted(wanted, x), np.searchsorted(wanted, near["partner"][x]))
        elif self.spill is not None:
            self.d = {k: v for k, v in d.items() if k not in SPILLED}
        if self.spill is not None:
            self.spill.close()
            self.spill = None

    def _token_sorted(self, sk: Any) -> Any:
        """``match.token_sorted`` of the group's sketches: on disk when the group spills (``search``)."""
        if self.spill is None or not self.spill.spilled:
            return token_sorted(sk)
        shape, dtype = (len(sk), *sk.shape[1:]), np.dtype(f"S{SKETCH_BYTES + 1}")
        return self.spill.reopen(token_sorted(sk, out=self.spill.scratch("ts", shape, dtype)))

    def _near_part(self, near: dict[str, np.ndarray], mine: np.ndarray) -> dict[str, np.ndarray]:
        """One shard's rows' nearest pairs here (``reasons.NEAR_FIELDS``; the other row by position and number)."""
        d = self.d
        assert d is not None
        part = {k: near[k][mine] for k in NEAR_FIELDS if k in near}
        has = part["partner"] >= 0
        part["prow"] = np.where(has, d["rows"][np.maximum(part["partner"], 0)], -1)
        part["partner"] = np.where(has, d["pos"][np.maximum(part["partner"], 0)], -1)
        return part

    def prompts(self, parts: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """Hybrid mode: the candidate rows' transformer vectors (``parts``: from the shards, read once; kept for
        ``verify``) and the positions of the rows of the candidate pairs whose prompts may pass the deciding rule
        (``verify.prompts_pass``: only their responses are read, so the calibration needs only their rows, as
        in the local engine), then the count of those pairs and of those whose responses reach the rule's lowest
        floor (``verify.responses_reach``: with none, nothing reads the calibration)."""
        if self.d is None or self.cand is None or not len(self.cand[0]):
            return [{"idx": np.zeros(0, np.int64)}, {"pairs": 0, "reached": 0}]
        d, (a, b), plan = self.d, self.cand, self.plan
        rows_c = np.unique(np.concatenate([a, b]))
        self.vec = _candidate_vectors(parts, d["pos"][rows_c])
        ia, ib = np.searchsorted(rows_c, a), np.searchsorted(rows_c, b)
        sk, ln = d["sk"][rows_c], d["ln"][rows_c]
        live = prompts_pass(self.vec[0], sk, ln, ia, ib, plan["dup"], plan["con"], plan["want_con"])
        reach = responses_reach(self.vec[1], self.vec[2], sk, ln, ia[live], ib[live],
                                lowest_response_floor(plan["dup"], plan["con"], plan["want_con"]), plan["want_con"])
        return [{"idx": d["pos"][np.unique(np.concatenate([a[live], b[live]]))]},
                {"pairs": int(live.sum()), "reached": int(reach.sum())}]

    def verify(self, keys: np.ndarray, rule: tuple[dict, dict], timings: dict[str, float], starts: list[int],
               two: np.ndarray | None = None) -> list[dict[str, Any]]:
        """Hybrid mode: the candidate pairs verified with the transformer vectors ``prompts`` took from the shards.
        Returns per shard the deciding rule's outcomes of its rows' nearest pairs (``_reverify``), then the
        edges."""
        import time

        if self.d is None or self.cand is None or not len(self.cand[0]):
            return [*({} for _ in starts), {"edges": no_edges()}]
        t0 = time.perf_counter()
        d, (a, b) = self.d, self.cand
        rows_c = np.unique(np.concatenate([a, b]))  # local indices of the candidate rows
        ia, ib = np.searchsorted(rows_c, a), np.searchsorted(rows_c, b)
        assert self.vec is not None, "CellGroup.prompts reads the candidate vectors before verify"
        vec, self.vec = self.vec, None
        cols = (*vec, d["sk"][rows_c], d["ln"][rows_c])  # the candidate rows'
        kw = {"compared": (d["hresp"][rows_c], keys),
              "two_rows": np.isin(d["phash"][rows_c], two) if two is not None else None}
        es, ex = match_edges(*cols, ia, ib, rule[0], rule[1], self.plan["want_dups"], self.plan["want_con"], **kw)
        for e in (es, ex):
            e["a"], e["b"] = rows_c[e["a"]], rows_c[e["b"]]
        updates = self._reverify(starts, lambda x, y: pair_outcomes(
            *cols, np.searchsorted(rows_c, x), np.searchsorted(rows_c, y), rule[0], rule[1], self.plan["want_dups"],
            self.plan["want_con"], **kw))
        timings["near_duplicates:verify_s"] = timings.get("near_duplicates:verify_s", 0.0) + time.perf_counter() - t0
        return [*updates, {"edges": self._global(es, ex)}]

    def _reverify(self, starts: list[int], verify: Any) -> list[dict[str, Any]]:
        """Hybrid mode: the deciding rule's outcome of the nearest pairs that passed the loose rule, per shard
        (``pos``, ``partner`` as positions, ``reasons.OUTCOME_FIELDS``)."""
        d = self.d
        out: list[dict[str, Any]] = [{} for _ in starts]
        if self.near is None or d is None or not len(self.near[0]):
            return out
        x, y = self.near
        o = verify(np.minimum(x, y), np.maximum(x, y))
        shard = np.searchsorted(np.asarray(starts, np.int64), d["pos"][x], side="right") - 1
        for s in range(len(starts)):
            mine = shard == s
            out[s] = {"pos": d["pos"][x][mine], "partner": d["pos"][y][mine], **{k: o[k][mine] for k in OUTCOME_FIELDS}}
        return out

    def _global(self, es: dict[str, np.ndarray], ex: dict[str, np.ndarray]) -> dict[str, Any]:
        """Edges with global positions and row numbers (local indices do not travel)."""
        d = self.d
        assert d is not None
        out = {}
        same = same_keys(d["phash"], d["hresp"])
        for name, e in (("s", es), ("x", ex)):
            own = d["assign"][:, 0]  # each row's own cell, and its group
            home = self.cell_group[own]
            out[name] = {**e, "a": d["pos"][e["a"]], "b": d["pos"][e["b"]], "ra": d["rows"][e["a"]],
                         "rb": d["rows"][e["b"]], "across": home[e["a"]] != home[e["b"]],
                         "across_cells": own[e["a"]] != own[e["b"]], "ka": d["phash"][e["a"]],
                         "kb": d["phash"][e["b"]], "sa": same[e["a"]], "sb": same[e["b"]]}
        return out


def _candidate_vectors(parts: Iterable[dict[str, Any]], pos: np.ndarray) -> tuple[np.ndarray, ...]:
    """The transformer vectors (``VECTORS``) of the rows at positions ``pos`` (each in exactly one part), from the
    shards' ``parts`` (each with ``pos`` and the vectors of its rows), read one part at a time: each field is
    written straight into its array, so a part is the only other copy in memory (a Ray cell group fetches them
    one by one; all parts at once, with the result beside them, were ~2x the group's candidate vectors)."""
    pos = np.asarray(pos, np.int64)
    out: list[np.ndarray] | None = None
    found = 0
    for p in parts:
        ppos = np.asarray(p.get("pos", ()), np.int64)
        if not len(ppos):
            continue
        order = np.argsort(ppos, kind="stable")
        at = np.minimum(np.searchsorted(ppos[order], pos), len(ppos) - 1)
        hit = ppos[order][at] == pos
        src = order[at[hit]]
        if out is None:
            out = [np.empty((len(pos), *p[k].shape[1:]), p[k].dtype) for k in VECTORS]
        for col, k in zip(out, VECTORS):
            col[hit] = p[k][src]
        found += int(hit.sum())
    if out is None or found != len(pos):
        raise ValueError(f"cell group: transformer vectors for {found} of {len(pos)} candidate rows; expected "
                         "every candidate row's vectors from the shards that hold them")
    return tuple(out)


def _once(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The chunks' edges as one set, each pair once (a pair found in two cells of a group is verified twice,
    alike), in pair order."""
    if not parts:
        return {k: v for k, v in no_edges()["s"].items() if k not in ("ra", "rb", "across", "across_cells", *KEY_FIELDS)}
    cat = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    _, first = np.unique(np.stack([cat["a"], cat["b"]], axis=1), axis=0, return_index=True)
    return {k: v[first] for k, v in cat.items()}


def no_edges() -> dict[str, Any]:
    e = {"a": np.zeros(0, np.int64), "b": np.zeros(0, np.int64), "ra": np.zeros(0, np.int64),
         "rb": np.zeros(0, np.int64), "sure": np.zeros(0, bool), "sim": np.zeros((0, 3), np.float32),
         "cos": np.zeros((0, 3), np.float32), "lex": np.zeros((0, 3), np.float32), "why": np.zeros((0, 3), np.int8),
         "thr": np.zeros(0, np.float32), "across": np.zeros(0, bool), "across_cells": np.zeros(0, bool),
         **{k: np.zeros(0, np.int64) for k in KEY_FIELDS}}
    return {"s": dict(e), "x": dict(e)}

"""``preference_cycle`` and the multi-pair profile: the responses of each prompt as a directed graph.

Every row says "chosen > rejected". A node is one response to one prompt: the same text (content digest,
as for exact duplicates) is one node wherever it appears, and the rows of a ``near_duplicate_pair`` group
(prompt, chosen and rejected each a copy or paraphrase of the representative's, so the same comparison)
share their nodes. An edge chosen -> rejected per row. Two opposite edges between the same two nodes are
an opposite-label repeat (``contradictory_pair``, from the exact and near-duplicate stages); a directed
cycle over three or more responses (X > Y, Y > Z, Z > X) is a ``preference_cycle``: no ranking of the
responses agrees with every label. Each row whose edge lies on such a cycle gets a finding whose detail
names the cycle's rows; ``group`` = the smallest row of the strongly connected set, ``score`` = the length
of the shortest cycle through the row.

Per row the stage keeps four 64-bit numbers (row, prompt, chosen and rejected digests): 32 MB per million
rows. Cycles and the profile stay within one prompt (or prompts joined by a near-duplicate group), so the Ray
engine cuts the rows into hash partitions by prompt digest (``partition_aliases``: the prompts of a near-duplicate
group count as one) and merges the partitions' profiles (``merge_partition_stats``). The profile (``stats.preference_graph`` in report.json) gives pairs per prompt and distinct responses
per prompt, the shape that decides whether a shared prompt or a shared response is normal structure.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from pairaudit.checks.base import CheckInfo
from pairaudit.datatypes import Finding, Pair, StageResult
from pairaudit.hashing import side_digests
from pairaudit.stages.base import Stage
from pairaudit.stages.near_duplicates.unionfind import UnionFind
from pairaudit.stages.state import Column

CYCLE_INFO = CheckInfo(
    "preference_cycle",
    "the row's preference lies on a directed cycle over three or more responses to one prompt (X > Y, Y > Z, "
    "Z > X; a response counts once wherever the same text, or the same response of a near_duplicate_pair group, "
    "appears); group = smallest row of the cycle set, score = shortest cycle length, the detail names the rows",
    "flag",
    summary="X > Y > Z > X within a prompt",
    thresholds={"max_cycle": 8},
    kind="global",
    why="each label may be defensible on its own (several annotators, ties broken differently); together they "
        "admit no ranking, so a reward model cannot fit them all: review which comparison is wrong",
)


def _u64(b: bytes) -> int:
    return int.from_bytes(b[:8], "little", signed=True)


def _sccs(n: int, succ: list[list[int]]) -> list[list[int]]:
    """Strongly connected components with >= 3 nodes (iterative Tarjan)."""
    index = [-1] * n
    low = [0] * n
    on = [False] * n
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in range(n):
        if index[root] >= 0 or not succ[root]:
            continue
        work = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on[root] = True
        while work:
            v, i = work[-1]
            if i < len(succ[v]):
                work[-1] = (v, i + 1)
                w = succ[v][i]
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on[w] = True
                    work.append((w, 0))
                elif on[w]:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on[w] = False
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) >= 3:
                    out.append(comp)
    return out


def _shortest_back(start: int, goal: int, adj: dict[int, list[tuple[int, int]]], skip: int, limit: int
                   ) -> list[int] | None:
    """Edge ids of a shortest path start -> goal with 2 to ``limit`` edges, not using edge ``skip``; a single
    edge start -> goal would close a 2-cycle (an opposite-label repeat, not a preference cycle)."""
    prev: dict[int, tuple[int, int]] = {start: (-1, -1)}
    q = deque([(start, 0)])
    while q:
        v, d = q.popleft()
        if d >= limit:
            continue
        for w, e in adj.get(v, ()):
            if e == skip or w in prev or (w == goal and d == 0):
                continue
            prev[w] = (v, e)
            if w == goal:
                path = []
                x = w
                while x != start:
                    x, e2 = prev[x]
                    path.append(e2)
                return path[::-1]
            q.append((w, d + 1))
    return None


class PreferenceGraphStage(Stage):
    infos = (CYCLE_INFO,)
    reads_findings = True  # near_duplicate_pair groups join nodes
    state = {"_rows": Column(np.int64), "_keys": Column(np.int64)}  # _keys (n, 3): prompt, chosen, rejected digests
    distribute, partition_key = "hash", "_keys"  # by the prompt digest (the key's first column)
    partitioned = False  # set on a hash partition: the profile keeps its histograms for the merge

    def __init__(self, ctx, enabled):
        super().__init__(ctx, enabled)
        self._near: list[tuple[int, int]] = []

    def on_partition(self) -> None:
        self.partitioned = True

    def observe(self, pairs: list[Pair], encoded: object) -> None:
        n = len(pairs)
        rows, keys = np.empty(n, np.int64), np.empty((n, 3), np.int64)
        for i, pair in enumerate(pairs):
            rows[i] = pair.row
            keys[i] = [_u64(d) for d in side_digests(pair)]
        self._rows.append(rows)
        self._keys.append(keys)

    def set_findings(self, findings: list[Finding], ran: set[str]) -> None:
        self._near = [(f.row, f.group) for f in findings if f.check == "near_duplicate_pair" and f.group is not None]

    @staticmethod
    def partition_aliases(findings: list[Finding]) -> list[tuple[int, int]]:
        """Rows whose prompts must share a hash partition: a near-duplicate group joins its rows' nodes."""
        return [(f.row, f.group) for f in findings if f.check == "near_duplicate_pair" and f.group is not None]

    @staticmethod
    def merge_partition_stats(parts: list[dict[str, Any]]) -> dict[str, Any]:
        """The profile of the whole dataset from its hash partitions' (each holds whole prompts)."""
        hists = [p["preference_graph"] for p in parts if p.get("preference_graph")]
        if not hists:
            return {}
        out = profile_from({k: _merge_hist([h["_hist"][k] for h in hists]) for k in ("pairs", "responses")})
        if any("rows_on_cycles" in h for h in hists):
            out["rows_on_cycles"] = sum(int(h.get("rows_on_cycles", 0)) for h in hists)
        return {"preference_graph": out}

    def finalize(self) -> StageResult:
        res = StageResult()
        if not self._rows:
            return res
        rows, keys = np.concatenate(self._rows), np.concatenate(self._keys)
        self._rows.clear()
        self._keys.clear()
        res.stats = {"preference_graph": profile(keys, hist=self.partitioned)}
        if "preference_cycle" in self.enabled:
            res.findings = self._cycles(rows, keys)
            res.stats["preference_graph"]["rows_on_cycles"] = len(res.findings)
        return res

    def _cycles(self, rows: np.ndarray, keys: np.ndarray) -> list[Finding]:
        n = len(rows)
        # node = (prompt, response); one id per distinct pair of digests
        pr = np.concatenate([keys[:, [0, 1]], keys[:, [0, 2]]])
        _, node = np.unique(pr, axis=0, return_inverse=True)
        node = node.reshape(-1)
        uf_size = int(node.max()) + 1
        uf = UnionFind(uf_size)
        pos = {int(r): i for i, r in enumerate(rows.tolist())} if self._near else {}
        for x, g in self._near:  # a near-duplicate group is one comparison: same nodes
            i, j = pos.get(x), pos.get(g)
            if i is not None and j is not None:
                uf.union(int(node[i]), int(node[j]))
                uf.union(int(node[n + i]), int(node[n + j]))
        root = np.fromiter((uf.find(x) for x in range(uf_size)), dtype=np.int64, count=uf_size) if self._near \
            else np.arange(uf_size, dtype=np.int64)  # each node's representative (itself without unions)
        u, v = root[node[:n]], root[node[n:]]
        live = np.flatnonzero(u != v)
        ids, inv = np.unique(np.concatenate([u[live], v[live]]), return_inverse=True)
        m = len(live)
        cu, cv = inv[:m], inv[m:]
        succ: list[list[int]] = [[] for _ in range(len(ids))]
        for a, b in zip(cu.tolist(), cv.tolist()):
            succ[a].append(b)
        limit = int(self.params(CYCLE_INFO)["max_cycle"])
        findings: list[Finding] = []
        comp_of = np.full(len(ids), -1, dtype=np.int64)
        comps = _sccs(len(ids), succ)
        for k, comp in enumerate(comps):
            comp_of[comp] = k
        inside = (comp_of[cu] >= 0) & (comp_of[cu] == comp_of[cv]) if m else np.zeros(0, dtype=bool)
        by_comp: dict[int, list[int]] = {}
        for e in np.flatnonzero(inside).tolist():
            by_comp.setdefault(int(comp_of[cu[e]]), []).append(e)
        for edges in by_comp.values():
            adj: dict[int, list[tuple[int, int]]] = {}
            for e in edges:
                adj.setdefault(int(cu[e]), []).append((int(cv[e]), e))
            group = int(min(int(rows[live[e]]) for e in edges))
            for e in edges:
                back = _shortest_back(int(cv[e]), int(cu[e]), adj, e, limit - 1)
                if back is None:
                    continue
                cyc = [e] + back
                r = int(rows[live[e]])
                others = ", ".join(str(int(rows[live[x]])) for x in back)
                findings.append(CYCLE_INFO.finding(
                    r, None, float(len(cyc)), group,
                    f"preference cycle over {len(cyc)} responses to the same prompt: this row's chosen > rejected, "
                    f"then row(s) {others} lead from its rejected back to its chosen (X > Y > ... > X); "
                    f"no ranking agrees with every label"))
        findings.sort(key=lambda f: f.row)
        return findings


def profile(keys: np.ndarray, hist: bool = False) -> dict[str, Any]:
    """Pairs per prompt and distinct responses per prompt (exact texts); ``hist``: with the histograms
    (count -> prompts) that profiles of disjoint prompt sets are merged from."""
    _, pcount = np.unique(keys[:, 0], return_counts=True)
    resp = np.unique(np.concatenate([keys[:, [0, 1]], keys[:, [0, 2]]]), axis=0)
    _, rcount = np.unique(resp[:, 0], return_counts=True)
    h = {k: [a.tolist() for a in np.unique(c, return_counts=True)] for k, c in (("pairs", pcount), ("responses", rcount))}
    out = profile_from(h)
    if hist:
        out["_hist"] = h
    return out


def _merge_hist(parts: list[list[list[int]]]) -> list[list[int]]:
    merged: dict[int, int] = {}
    for values, counts in parts:
        for v, c in zip(values, counts):
            merged[int(v)] = merged.get(int(v), 0) + int(c)
    keys = sorted(merged)
    return [keys, [merged[k] for k in keys]]


def profile_from(h: dict[str, list[list[int]]]) -> dict[str, Any]:
    """The profile from count histograms (``[values, prompts]``): the same numbers as over the counts."""

    def dist(values: list[int], counts: list[int]) -> dict[str, float]:
        v, c = np.asarray(values, np.int64), np.asarray(counts, np.int64)
        ends = np.cumsum(c)
        n = int(ends[-1])
        mid = v[np.searchsorted(ends, [(n - 1) // 2, n // 2], side="right")]
        median = float(mid[0]) if n % 2 else float(np.mean(mid.astype(np.float64)))
        return {"mean": round(float((v * c).sum() / n), 3), "median": median, "max": int(v.max())}

    pv, pc = (np.asarray(x, np.int64) for x in h["pairs"])
    return {"prompts": int(pc.sum()), "prompts_with_several_pairs": int(pc[pv > 1].sum()),
            "rows_sharing_a_prompt": int((pv * pc)[pv > 1].sum()), "pairs_per_prompt": dist(*h["pairs"]),
            "responses_per_prompt": dist(*h["responses"])}

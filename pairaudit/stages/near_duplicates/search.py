"""Neighbour search for the near-duplicate stage: every row against its likely neighbours by the inner
product of unit vectors (exact BLAS blocks up to ``exact_max_rows`` rows, FAISS k-means cells beyond).
Usable without the stage: ``scripts/bench_dedup.py`` feeds synthetic vectors.

``center`` removes a field's mean vector before the cosine: sentence embeddings (static ones above all)
share a large common direction, so that two unrelated chat answers reach cosine 0.85-0.9; with the mean
removed ("all-but-the-top", Mu & Viswanath 2018) unrelated rows fall to ~0.5 while near copies stay high
(measured in docs/near_duplicates.md).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pairaudit.config import clamp_record
from pairaudit.stages.near_duplicates.threads import in_threads, native_threads


def center(A: np.ndarray, mean: np.ndarray | None, chunk: int = 65536, out: np.ndarray | None = None) -> np.ndarray:
    """Unit rows of ``A - mean`` (float16 in, float16 out; ``mean=None``: only re-normalised; ``out``: where to
    write them, e.g. a memory-mapped file)."""
    out = np.empty(A.shape, dtype=np.float16) if out is None else out
    for lo in range(0, len(A), chunk):
        x = A[lo:lo + chunk].astype(np.float32)
        if mean is not None:
            x -= mean
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        out[lo:lo + chunk] = x / norms
    return out


def field_mean(A: np.ndarray, chunk: int = 65536) -> np.ndarray:
    total = np.zeros(A.shape[1], dtype=np.float64)
    for lo in range(0, len(A), chunk):
        total += A[lo:lo + chunk].astype(np.float64).sum(axis=0)
    return (total / max(1, len(A))).astype(np.float32)


ROWDOT_READ = 1 << 16  # rows read from A and B at a time (a spilled column: one sorted pass over its windows)


def rowdot(A: np.ndarray, B: np.ndarray, a: np.ndarray, b: np.ndarray, chunk: int = 8192) -> np.ndarray:
    """``A[a[i]] . B[b[i]]`` for every i (float32, clipped to [-1, 1]); ``ROWDOT_READ`` pairs' rows read at a time
    as stored (a spilled column's windows are mapped once for many rows: ~40% less time a row than 8,192 at a
    time), multiplied ``chunk`` at a time in float32 (the same values whatever the chunks: each row's product is
    computed alone)."""
    out = np.empty(len(a), dtype=np.float32)
    for lo in range(0, len(a), ROWDOT_READ):
        Ar, Br = A[a[lo:lo + ROWDOT_READ]], B[b[lo:lo + ROWDOT_READ]]
        for k in range(0, len(Ar), chunk):
            out[lo + k:lo + k + chunk] = np.einsum("ij,ij->i", Ar[k:k + chunk].astype(np.float32),
                                                   Br[k:k + chunk].astype(np.float32))
    return np.clip(out, -1.0, 1.0, out=out)  # float16 storage can overshoot 1 by ~1e-5



def _sum_vectors(P: np.ndarray, C: np.ndarray, R: np.ndarray, lo: int, hi: int,
                 rows: np.ndarray | None = None) -> np.ndarray:
    if rows is None:
        s = P[lo:hi].astype(np.float32) + C[lo:hi] + R[lo:hi]
    else:
        at = rows[lo:hi]
        s = P[at].astype(np.float32) + C[at] + R[at]
    norms = np.linalg.norm(s, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return s / norms


def sum_vectors(P: np.ndarray, C: np.ndarray, R: np.ndarray, chunk: int = 65536, out: np.ndarray | None = None,
                rows: np.ndarray | None = None) -> np.ndarray:
    """``normalise(p + c + r)`` of every row (or of ``rows``, read ``chunk`` rows at a time, e.g. from a file) as
    one float32 array (4 d bytes per row; ``out``: where to write them, e.g. a memory-mapped file). Each row's
    values are computed alone: the same whatever the chunk."""
    n = len(P) if rows is None else len(rows)
    out = np.empty((n, *P.shape[1:]), dtype=np.float32) if out is None else out
    for lo in range(0, n, chunk):
        out[lo:lo + chunk] = _sum_vectors(P, C, R, lo, min(n, lo + chunk), rows)
    return out


def plan_cells(n: int, exact_max_rows: int, nprobe: int, force: str | None = None) -> dict[str, int]:
    """The cell layout for ``n`` rows: ``nlist`` cells (1: flat, every row against every row), ``nprobe``
    cells probed per row, ``n_train`` rows of the seeded k-means sample."""
    kind = force or ("flat" if n <= exact_max_rows else "ivf")
    if kind == "flat" or n < 64:
        return {"nlist": 1, "nprobe": 1, "n_train": 0}
    nlist = int(min(65536, max(8, round(2 * math.sqrt(n)))))
    nlist = min(nlist, max(1, n // 39))
    return {"nlist": nlist, "nprobe": max(1, min(nprobe, nlist)), "n_train": min(n, 40 * nlist)}


def nprobe_why(plan: dict[str, int]) -> str:
    """Why ``plan_cells`` probes fewer cells than asked."""
    return f"the index of these rows has {plan['nlist']} cells: every cell was probed"


def training_sample(n: int, n_train: int) -> np.ndarray:
    """Positions (sorted) of the rows the k-means cells are trained on (seeded)."""
    return np.sort(np.random.default_rng(0).choice(n, size=n_train, replace=False))


def train_cells(sample: np.ndarray, nlist: int) -> np.ndarray:
    """Spherical k-means centroids (``nlist``, d) float32 of the sample's unit rows (FAISS, fixed seed)."""
    import faiss

    km = faiss.Kmeans(sample.shape[1], nlist, niter=10, seed=1234, spherical=True, max_points_per_centroid=1 << 30)
    km.train(np.ascontiguousarray(sample, dtype=np.float32))
    return np.asarray(km.centroids, dtype=np.float32)


def assign_cells(S: np.ndarray, centroids: np.ndarray, nprobe: int) -> np.ndarray:
    """``(n, nprobe)`` nearest cells of every row, nearest first (column 0: the row's own cell)."""
    import faiss

    quantizer = faiss.IndexFlatIP(centroids.shape[1])
    quantizer.add(centroids)
    assign = np.empty((len(S), nprobe), dtype=np.int64)
    for lo in range(0, len(S), 65536):
        assign[lo:lo + 65536] = quantizer.search(np.ascontiguousarray(S[lo:lo + 65536]), nprobe)[1]
    return assign


def cell_lists(assign: np.ndarray, nlist: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per cell: its members (rows whose nearest cell it is) and the rows that probe it, both ascending."""
    nprobe = assign.shape[1]
    primary = assign[:, 0]
    order = np.argsort(primary, kind="stable")
    bounds = np.searchsorted(primary[order], np.arange(nlist + 1))
    members = [order[bounds[c]:bounds[c + 1]] for c in range(nlist)]
    flat_cells = assign.ravel()
    qorder = np.argsort(flat_cells, kind="stable")
    qbounds = np.searchsorted(flat_cells[qorder], np.arange(nlist + 1))
    q_rows = (qorder // nprobe).astype(np.int64)
    probes = [q_rows[qbounds[c]:qbounds[c + 1]] for c in range(nlist)]
    return members, probes


class PairSet:
    """Distinct row pairs ``a < b``, each with the similarity it was first added with, deduplicated as they come:
    a pending batch is merged into the sorted keys (``a * n + b``) every ``flush`` pairs, so memory is ~12 B per
    distinct pair plus one batch (a neighbour search at 1M rows adds ~20M distinct pairs, found several times each
    through the probed cells; concatenating them all before one ``np.unique`` took ~65 B per pair found)."""

    def __init__(self, n: int, flush: int = 1 << 22) -> None:
        self.n, self.flush = n, flush
        self.keys = np.empty(0, dtype=np.int64)
        self.sims = np.empty(0, dtype=np.float32)
        self._keys: list[np.ndarray] = []
        self._sims: list[np.ndarray] = []
        self._pending = 0

    def add(self, a: np.ndarray, b: np.ndarray, sim: np.ndarray) -> None:
        self._keys.append(a.astype(np.int64) * self.n + b)
        self._sims.append(np.asarray(sim, dtype=np.float32))
        self._pending += len(a)
        if self._pending >= self.flush:
            self._merge()

    def _merge(self) -> None:
        if not self._keys:
            return
        k, first = np.unique(np.concatenate(self._keys), return_index=True)  # first occurrence (stable sort)
        s = np.concatenate(self._sims)[first]
        self._keys.clear()
        self._sims.clear()
        self._pending = 0
        self._insert(k, s)

    def _insert(self, k: np.ndarray, s: np.ndarray) -> None:
        """Sorted distinct keys ``k`` (similarities ``s``) into the set: a pair it holds keeps its similarity."""
        pos = np.searchsorted(self.keys, k)
        new = pos >= len(self.keys)
        new[~new] = self.keys[pos[~new]] != k[~new]
        self.keys = np.insert(self.keys, pos[new], k[new])
        self.sims = np.insert(self.sims, pos[new], s[new])

    def update(self, later: PairSet) -> None:
        """Add the pairs of ``later`` (found in later cells): a pair both hold keeps this set's similarity."""
        self._merge()
        later._merge()
        self._insert(later.keys, later.sims)
        later.keys, later.sims = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)

    def result(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(a, b, sim)`` ascending by ``a * n + b``."""
        self._merge()
        keys, self.keys = self.keys, np.empty(0, dtype=np.int64)
        return keys // self.n, keys % self.n, self.sims


def _spans(cell_members: list[np.ndarray], probe_rows: list[np.ndarray], parts: int) -> list[range]:
    """``parts`` runs of consecutive cells with about equal work (members x probing rows each)."""
    work = np.cumsum([len(m) * len(q) for m, q in zip(cell_members, probe_rows)], dtype=np.float64)
    if not len(work) or parts <= 1 or work[-1] == 0:
        return [range(len(cell_members))]
    cuts = np.searchsorted(work, work[-1] * np.arange(1, parts) / parts, side="right")
    bounds = [0, *sorted(set(int(c) for c in cuts)), len(cell_members)]
    return [range(lo, hi) for lo, hi in zip(bounds, bounds[1:]) if hi > lo]


def search_cells(S: np.ndarray, cell_members: list[np.ndarray], probe_rows: list[np.ndarray], k: int,
                 min_sim: float, best: np.ndarray, block_bytes: int = 1 << 26, flush: int = 1 << 22,
                 threads: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each cell's members against the rows that probe it (one matrix product per block of queries): the
    distinct pairs ``a < b`` with similarity >= ``min_sim`` (each query keeps its ``k`` best per cell), ascending
    by ``a * len(S) + b``, each with the similarity first found (in cell order); ``best`` (per row) is raised to
    the largest similarity seen (``flush``: see ``PairSet``). Cells are independent, so any subset of them can be
    searched where their rows are (the Ray engine: docs/scale.md). ``threads``: runs of consecutive cells
    searched at once (``threads.in_threads``), each into its own set and ``best``, merged in cell order: the
    same result."""
    spans = _spans(cell_members, probe_rows, threads)
    bests = [best] if len(spans) == 1 else [np.full(len(best), -np.inf, dtype=best.dtype) for _ in spans]
    sets = in_threads(lambda j: _search_span(S, [cell_members[c] for c in spans[j]],
                                             [probe_rows[c] for c in spans[j]], k, min_sim, bests[j], block_bytes,
                                             flush), range(len(spans)), threads)
    found = sets[0]
    for later in sets[1:]:
        found.update(later)
    if len(spans) > 1:
        np.maximum(best, np.max(bests, axis=0), out=best)
    return found.result()


def _search_span(S: np.ndarray, cell_members: list[np.ndarray], probe_rows: list[np.ndarray], k: int,
                 min_sim: float, best: np.ndarray, block_bytes: int, flush: int) -> PairSet:
    found = PairSet(len(S), flush)
    for members, queries in zip(cell_members, probe_rows):
        if len(members) == 0 or len(queries) == 0:
            continue
        X = S[members]
        step = max(1, block_bytes // (4 * len(members)))
        for lo in range(0, len(queries), step):
            q = queries[lo:lo + step]
            block = S[q] @ X.T
            pos = np.minimum(np.searchsorted(members, q), len(members) - 1)
            own = np.flatnonzero(members[pos] == q)
            block[own, pos[own]] = -np.inf  # a row is not its own neighbour
            np.maximum.at(best, q, block.max(axis=1))
            r, c = np.nonzero(block >= min_sim)
            if len(r):
                counts = np.bincount(r, minlength=len(q))
                crowded = np.flatnonzero(counts > k)
                if len(crowded):  # keep only the k best of rows with more than k candidates
                    drop = np.isin(r, crowded)
                    top = np.argpartition(-block[crowded], k - 1, axis=1)[:, :k]
                    r = np.concatenate([r[~drop], np.repeat(crowded, k)])
                    c = np.concatenate([c[~drop], top.ravel()])
                    vals = block[r, c]
                    ok = vals >= min_sim
                    r, c = r[ok], c[ok]
            qa, qb = q[r], members[c]
            found.add(np.minimum(qa, qb), np.maximum(qa, qb), block[r, c])
    return found


def neighbour_search(S: np.ndarray, k: int, min_sim: float, exact_max_rows: int, nprobe: int,
                     force: str | None = None, block_bytes: int = 1 << 26
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
    """Neighbours of every row of ``S`` (unit float32 rows) by inner product.

    Returns ``(a, b, sim, best, info)``: candidate pairs ``a < b`` whose similarity is >= ``min_sim``
    (each row keeps at most its ``k`` best per scanned cell), and ``best[i]``, the largest
    similarity of row i to another row found (-inf when none).

    ``flat`` (n <= exact_max_rows or force="flat"): every row against every row, as BLAS blocks.
    ``ivf``: FAISS k-means (spherical, fixed seed, trained on a sample) splits the rows into
    ``nlist ~ 2 sqrt(n)`` cells; each row lives in its nearest cell and is compared with the members
    of its ``nprobe`` nearest cells. Same partition as ``faiss.IndexIVFFlat``, but each cell is scanned
    as one matrix product for all the rows that probe it (FAISS scans its lists query by query,
    which is memory-bound and ~10x slower for this all-pairs self-join).
    """
    n, d = S.shape
    info: dict[str, Any] = {}
    plan = plan_cells(n, exact_max_rows, nprobe, force)
    if plan["nlist"] == 1:
        info["index"] = "flat (exact, BLAS blocks)"
        cell_members = [np.arange(n)]
        probe_rows = [np.arange(n)]
    else:
        clamp_record(info, "near_duplicate_pair", "nprobe", nprobe, plan["nprobe"], nprobe_why(plan))
        nlist, nprobe, n_train = plan["nlist"], plan["nprobe"], plan["n_train"]
        centroids = train_cells(S[training_sample(n, n_train)], nlist)
        cell_members, probe_rows = cell_lists(assign_cells(S, centroids, nprobe), nlist)
        sizes = np.array([len(m) for m in cell_members])
        info.update(index="ivf (FAISS k-means cells, BLAS blocks)", nlist=nlist, nprobe=nprobe, n_train=n_train,
                    largest_cell=int(sizes.max()), empty_cells=int((sizes == 0).sum()))
    best = np.full(n, -np.inf, dtype=np.float32)
    a, b, sim = search_cells(S, cell_members, probe_rows, k, min_sim, best, block_bytes, threads=native_threads())
    return a, b, sim, best, info

"""``near_duplicate_pair`` and near ``contradictory_pair`` with sentence embeddings + FAISS; also the
embedding view of ``near_identical_pair`` (chosen-vs-rejected cosine, score column ``pair_cosine``).

How it works
------------
``observe`` embeds prompt, chosen and rejected of every pair (``Embedder``, cached on disk by text
hash) and keeps only compact per-row data:

* the three L2-normalised embeddings in float16 (3 x d x 2 bytes: 2,304 B for d=384);
* a *sketch* per field for the character-level confirmation: the text normalised (casefolded,
  punctuation -> space, whitespace collapsed), kept whole when it is at most 256 UTF-8 bytes, else its
  first and last 128 bytes (3 x 257 B), plus the normalised length (3 x 4 B);
* the row number and a 64-bit hash of the exact prompt (prompt-duplication statistics): 16 B.

That is ~3.1 KB per row while observing (3.1 GB per million rows).

``finalize`` searches neighbours of the *sum* vector ``normalise(p + c + r)`` (float32, 4 d bytes
per row while searching): one 384-d search finds both near duplicates and swapped copies, because
the sum is the same whichever response is the chosen one. Up to ``exact_max_rows`` rows the search
is exact (every row against every row, as BLAS matrix blocks: what ``faiss.IndexFlatIP`` computes);
beyond that it is IVF: FAISS k-means (spherical, fixed seed, trained on a sample of 40 x nlist rows)
cuts the rows into ``nlist ~ 2 sqrt(n)`` cells, each row lives in its nearest cell and is compared
with the members of its ``nprobe`` nearest cells, each cell scanned as one matrix product (recall vs
exact search is measured by ``scripts/bench_dedup.py``). A row keeps at most ``neighbors``
neighbours per cell whose sum-vector cosine is >= ``min_search_cosine``. Each candidate pair of
rows is then verified field by field: a field matches when its normalised text is identical, or
when the embedding cosine is >= ``min_cosine`` *and* the rapidfuzz ratio of the sketches (for long
texts also the ratio of the normalised lengths) is >= ``min_char_ratio``; the cosine alone merges
same-topic pairs, the character ratio alone cannot be searched at scale.

* near duplicate: prompt, chosen and rejected each match. Rows are grouped with union-find; the
  smallest row of a group is its representative (no finding); the others get a finding with
  ``group`` = representative and ``score`` = the smallest field cosine of their closest match.
* contradiction: the prompts match and the responses match crosswise (chosen_i ~ rejected_j and
  rejected_i ~ chosen_j) while they do not match straight; every row of such a group gets a
  finding, ``group`` = smallest row of the group.

Limits: a text longer than the embedder's ``max_seq_length`` (256 word pieces for
all-MiniLM-L6-v2, about 1,000 characters of English) is embedded from its first 256 word pieces
only; the head/tail sketch and the length ratio guard against merging long texts that share a
beginning but differ later, but two long texts that differ only in their middle with the same length
can still be merged. A row whose group has more than ``neighbors`` near-identical members is still
grouped (the union of neighbour lists connects it), but a contradiction hiding in a group larger
than ``neighbors`` can be missed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import re
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from pairaudit.checks.base import CheckInfo, Stage
from pairaudit.errors import MissingDependency
from pairaudit.stages.unionfind import UnionFind
from pairaudit.types import Finding, Pair, StageResult

if TYPE_CHECKING:
    from pairaudit.config import Context
    from pairaudit.models.embedder import Embedder
    from pairaudit.tokenize import EncodedPair

SKETCH_BYTES = 256
HALF = SKETCH_BYTES // 2
FIELDS = ("prompt", "chosen", "rejected")

NEAR_DUPLICATE_INFO = CheckInfo(
    "near_duplicate_pair",
    "prompt, chosen and rejected are each near-identical to another row's: per field the normalised "
    "texts are equal, or the embedding cosine is >= min_cosine and the character ratio (rapidfuzz, on "
    "normalised text; head and tail for long texts) is >= min_char_ratio. group = smallest row of the "
    "group, which is kept; score = smallest field cosine",
    "drop",
    thresholds={"min_cosine": 0.75, "min_char_ratio": 0.80, "neighbors": 16, "min_search_cosine": 0.6,
                "exact_max_rows": 20000, "nprobe": 8},
    kind="global",
    extra="embed",
    why="near copies over-weight one preference just like exact ones; one representative keeps the signal",
)
NEAR_CONTRADICTION_INFO = CheckInfo(
    "contradictory_pair",
    "another row has a near-identical prompt and the same two responses (near-identical, matched "
    "crosswise) preferred the other way; thresholds as for near_duplicate_pair; every row of the group "
    "gets the finding, group = smallest row",
    "drop",
    thresholds={"min_cosine": 0.75, "min_char_ratio": 0.80},
    kind="global",
    extra="embed",
    why="the same comparison labelled both ways pushes the DPO logit in opposite directions",
)

_PUNCT = re.compile(r"[^\w\s]+")


def normalise(text: str) -> str:
    """Casefold, punctuation -> space, collapse whitespace."""
    return " ".join(_PUNCT.sub(" ", text.casefold()).split())


def sketch(text: str) -> tuple[bytes, int]:
    """Compact stand-in for a text in the character-level confirmation: (sketch bytes, normalised length)."""
    b = normalise(text).encode("utf-8", "surrogatepass")
    if len(b) <= SKETCH_BYTES:
        return b, len(b)
    return b[:HALF] + b"\n" + b[-HALF:], len(b)


def char_ratio(sa: bytes, la: int, sb: bytes, lb: int) -> float:
    """rapidfuzz ratio of two sketches (0..1); for long texts capped by the ratio of their lengths."""
    from rapidfuzz import fuzz

    r = fuzz.ratio(sa.decode("utf-8", "ignore"), sb.decode("utf-8", "ignore")) / 100.0
    if max(la, lb) > SKETCH_BYTES:
        r = min(r, min(la, lb) / max(la, lb))
    return r


def _prompt_hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                          "little", signed=True)


def _check_deps() -> None:
    for mod in ("torch", "sentence_transformers", "faiss"):
        if importlib.util.find_spec(mod) is None:
            raise MissingDependency(mod if mod != "faiss" else "faiss-cpu", "embed",
                                    "near-duplicate search (near_duplicate_pair)")


# --------------------------------------------------------------------------------------------
# search (usable without the stage: scripts/bench_dedup.py feeds synthetic vectors)
# --------------------------------------------------------------------------------------------

def _sum_vectors(P: np.ndarray, C: np.ndarray, R: np.ndarray, lo: int, hi: int) -> np.ndarray:
    s = P[lo:hi].astype(np.float32) + C[lo:hi] + R[lo:hi]
    norms = np.linalg.norm(s, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return s / norms


def sum_vectors(P: np.ndarray, C: np.ndarray, R: np.ndarray, chunk: int = 65536) -> np.ndarray:
    """``normalise(p + c + r)`` of every row as one float32 array (4 d bytes per row)."""
    out = np.empty(P.shape, dtype=np.float32)
    for lo in range(0, len(P), chunk):
        out[lo:lo + chunk] = _sum_vectors(P, C, R, lo, min(len(P), lo + chunk))
    return out


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
    kind = force or ("flat" if n <= exact_max_rows else "ivf")
    if kind == "flat" or n < 64:
        info["index"] = "flat (exact, BLAS blocks)"
        cell_members = [np.arange(n)]
        probe_rows = [np.arange(n)]
    else:
        import faiss

        nlist = int(min(65536, max(8, round(2 * math.sqrt(n)))))
        nlist = min(nlist, max(1, n // 39))
        nprobe = max(1, min(nprobe, nlist))
        rng = np.random.default_rng(0)
        n_train = min(n, 40 * nlist)
        sample = np.sort(rng.choice(n, size=n_train, replace=False))
        km = faiss.Kmeans(d, nlist, niter=10, seed=1234, spherical=True, max_points_per_centroid=1 << 30)
        km.train(np.ascontiguousarray(S[sample]))
        quantizer = faiss.IndexFlatIP(d)
        quantizer.add(km.centroids)
        assign = np.empty((n, nprobe), dtype=np.int64)
        for lo in range(0, n, 65536):
            assign[lo:lo + 65536] = quantizer.search(S[lo:lo + 65536], nprobe)[1]
        primary = assign[:, 0]
        order = np.argsort(primary, kind="stable")
        bounds = np.searchsorted(primary[order], np.arange(nlist + 1))
        cell_members = [order[bounds[c]:bounds[c + 1]] for c in range(nlist)]
        flat_cells = assign.ravel()
        qorder = np.argsort(flat_cells, kind="stable")
        qbounds = np.searchsorted(flat_cells[qorder], np.arange(nlist + 1))
        q_rows = (qorder // nprobe).astype(np.int64)
        probe_rows = [q_rows[qbounds[c]:qbounds[c + 1]] for c in range(nlist)]
        del assign, order, flat_cells, qorder, q_rows
        sizes = np.diff(bounds)
        info.update(index="ivf (FAISS k-means cells, BLAS blocks)", nlist=nlist, nprobe=nprobe, n_train=n_train,
                    largest_cell=int(sizes.max()), empty_cells=int((sizes == 0).sum()))
    best = np.full(n, -np.inf, dtype=np.float32)
    out_a, out_b, out_s = [], [], []
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
            out_a.append(np.minimum(qa, qb))
            out_b.append(np.maximum(qa, qb))
            out_s.append(block[r, c])
    if out_a:
        a, b, sim = np.concatenate(out_a), np.concatenate(out_b), np.concatenate(out_s)
        key, first = np.unique(a * n + b, return_index=True)
        a, b, sim = key // n, key % n, sim[first]
    else:
        a = b = np.empty(0, dtype=np.int64)
        sim = np.empty(0, dtype=np.float32)
    return a, b, sim, best, info


def _rowdot(A: np.ndarray, B: np.ndarray, a: np.ndarray, b: np.ndarray, chunk: int = 65536) -> np.ndarray:
    out = np.empty(len(a), dtype=np.float32)
    for lo in range(0, len(a), chunk):
        hi = lo + chunk
        out[lo:hi] = np.einsum("ij,ij->i", A[a[lo:hi]].astype(np.float32), B[b[lo:hi]].astype(np.float32))
    return np.clip(out, -1.0, 1.0, out=out)  # float16 storage can overshoot 1 by ~1e-5


def match_pairs(P: np.ndarray, C: np.ndarray, R: np.ndarray, sk: np.ndarray, ln: np.ndarray,
                a: np.ndarray, b: np.ndarray, min_cosine: float, min_char_ratio: float,
                straight: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Verify candidate row pairs (a[i], b[i]). ``sk``/``ln``: (n, 3) sketches / lengths.

    ``straight``: prompt~prompt, chosen~chosen, rejected~rejected; else crosswise
    (chosen_a~rejected_b, rejected_a~chosen_b). Returns (ok mask, cosines (m, 3), char ratios (m, 3))."""
    pairs = [(P, P, 0, 0), (C, C, 1, 1), (R, R, 2, 2)] if straight else [(P, P, 0, 0), (C, R, 1, 2), (R, C, 2, 1)]
    m = len(a)
    cos = np.zeros((m, 3), dtype=np.float32)
    ratio = np.zeros((m, 3), dtype=np.float32)
    ok = np.ones(m, dtype=bool)
    for f, (A, B, fa, fb) in enumerate(pairs):
        idx = np.flatnonzero(ok)
        if not len(idx):
            break
        cos[idx, f] = _rowdot(A, B, a[idx], b[idx])
        equal = (sk[a[idx], fa] == sk[b[idx], fb]) & (ln[a[idx], fa] == ln[b[idx], fb])
        ratio[idx[equal], f] = 1.0
        need = idx[~equal & (cos[idx, f] >= min_cosine)]
        for i in need.tolist():
            ratio[i, f] = char_ratio(sk[a[i], fa], int(ln[a[i], fa]), sk[b[i], fb], int(ln[b[i], fb]))
        ok[idx] = equal | ((cos[idx, f] >= min_cosine) & (ratio[idx, f] >= min_char_ratio))
    return ok, cos, ratio


def find_groups(rows: np.ndarray, P: np.ndarray, C: np.ndarray, R: np.ndarray, sk: np.ndarray, ln: np.ndarray,
                dup: dict[str, Any], con: dict[str, Any], want_dups: bool = True,
                want_contradictions: bool = True, force_index: str | None = None,
                keep_neighbours: bool = False) -> dict[str, Any]:
    """The whole search on compact arrays. Returns findings, per-row scores and stats (and the raw
    neighbour lists with ``keep_neighbours``, for benchmarks)."""
    n = len(rows)
    t0 = time.perf_counter()
    S = sum_vectors(P, C, R)
    a, b, sim, best, info = neighbour_search(S, int(dup["neighbors"]), float(dup["min_search_cosine"]),
                                             int(dup["exact_max_rows"]), int(dup["nprobe"]), force=force_index)
    del S
    t_search = time.perf_counter() - t0
    nearest_score = np.where(np.isfinite(best), best, np.nan).astype(np.float64)
    neighbours = (a, b, sim) if keep_neighbours else None
    t1 = time.perf_counter()
    findings: list[Finding] = []
    stats: dict[str, Any] = {**info, "n_rows": int(n), "n_candidates": int(len(a)),
                             "search_s": round(t_search, 3)}

    ok_s = np.zeros(len(a), dtype=bool)
    if want_dups or want_contradictions:
        ok_s, cos_s, rat_s = match_pairs(P, C, R, sk, ln, a, b, float(dup["min_cosine"]),
                                         float(dup["min_char_ratio"]), straight=True)
    if want_dups and ok_s.any():
        ea, eb, ec, er = a[ok_s], b[ok_s], cos_s[ok_s], rat_s[ok_s]
        uf = UnionFind(n)
        uf.union_edges(ea, eb)
        # each row's closest verified match (largest smallest-field cosine)
        strength = ec.min(axis=1)
        best_edge: dict[int, int] = {}
        for e in np.argsort(-strength, kind="stable").tolist():
            for x in (int(ea[e]), int(eb[e])):
                best_edge.setdefault(x, e)
        groups = uf.groups(np.concatenate([ea, eb]))
        for grp in groups:
            rep = grp[np.argmin(rows[grp])]
            rep_row = int(rows[rep])
            for x in grp.tolist():
                if x == rep:
                    continue
                e = best_edge[x]
                y = int(eb[e]) if int(ea[e]) == x else int(ea[e])
                c, r = ec[e], er[e]
                findings.append(Finding(
                    int(rows[x]), "near_duplicate_pair", None, float(round(float(c.min()), 6)), rep_row,
                    f"near duplicate of row {int(rows[y])} (cosine prompt {c[0]:.3f}, chosen {c[1]:.3f}, "
                    f"rejected {c[2]:.3f}; char ratio {r[0]:.2f}/{r[1]:.2f}/{r[2]:.2f}); "
                    f"group of {len(grp)} kept as row {rep_row}"))
        stats.update(near_duplicate_groups=len(groups), near_duplicate_rows=int(sum(len(g) for g in groups)))
    if want_contradictions and len(a):
        rest = ~ok_s
        ok_x, cos_x, rat_x = match_pairs(P, C, R, sk, ln, a[rest], b[rest], float(con["min_cosine"]),
                                         float(con["min_char_ratio"]), straight=False)
        ea, eb, ec = a[rest][ok_x], b[rest][ok_x], cos_x[ok_x]
        n_groups = 0
        if len(ea):
            uf = UnionFind(n)
            uf.union_edges(ea, eb)
            partners: dict[int, list[tuple[int, np.ndarray]]] = {}
            for x, y, c in zip(ea.tolist(), eb.tolist(), ec):
                partners.setdefault(x, []).append((y, c))
                partners.setdefault(y, []).append((x, c))
            for grp in uf.groups(np.concatenate([ea, eb])):
                n_groups += 1
                g = int(rows[grp].min())
                for x in grp.tolist():
                    ps = sorted(partners[x], key=lambda t: int(rows[t[0]]))
                    y, c = ps[0]
                    others = ", ".join(str(int(rows[p])) for p, _ in ps[:5])
                    findings.append(Finding(
                        int(rows[x]), "contradictory_pair", None, float(round(float(c.min()), 6)), g,
                        f"near-same prompt and responses preferred the other way in row(s) {others} "
                        f"(row {int(rows[y])}: cosine prompt {c[0]:.3f}, chosen~their rejected {c[1]:.3f}, "
                        f"rejected~their chosen {c[2]:.3f})"))
        stats["near_contradiction_groups"] = n_groups
    stats["verify_s"] = round(time.perf_counter() - t1, 3)
    findings.sort(key=lambda f: (f.row, f.check))
    out: dict[str, Any] = {"findings": findings, "near_duplicate_pair_score": nearest_score, "stats": stats}
    if neighbours is not None:
        out["neighbours"] = neighbours
    return out


# --------------------------------------------------------------------------------------------
# the stage
# --------------------------------------------------------------------------------------------

class NearDuplicateStage(Stage):
    infos = (NEAR_DUPLICATE_INFO, NEAR_CONTRADICTION_INFO)
    state_attrs = ("_rows", "_P", "_C", "_R", "_sk", "_ln", "_phash", "n_skipped", "_t_embed")

    def __init__(self, ctx: Context, enabled: set[str]) -> None:
        super().__init__(ctx, enabled)
        _check_deps()
        self._embedder: Embedder | None = None
        self._rows: list[np.ndarray] = []
        self._P: list[np.ndarray] = []
        self._C: list[np.ndarray] = []
        self._R: list[np.ndarray] = []
        self._sk: list[np.ndarray] = []
        self._ln: list[np.ndarray] = []
        self._phash: list[np.ndarray] = []
        self.n_skipped = 0
        self._t_embed = 0.0

    def _params(self, info: CheckInfo) -> dict[str, Any]:
        return {**info.thresholds, **self.ctx.params.get(info.name, {})}

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from pairaudit.models.embedder import Embedder

            cfg = self.ctx.config
            self._embedder = Embedder(cfg.embedder, device=cfg.device, precision=cfg.precision,
                                      batch_size=cfg.embed_batch_size, cache_dir=self.ctx.cache_dir)
            self.ctx.log(f"embedder: {self._embedder.model_id}")
        return self._embedder

    def observe(self, pairs: list[Pair], encoded: list[EncodedPair] | None) -> None:
        keep = [p for p in pairs if p.chosen is not None and p.rejected is not None]
        self.n_skipped += len(pairs) - len(keep)
        if not keep:
            return
        texts: list[str] = []
        for p in keep:
            texts += [p.prompt or "", p.chosen or "", p.rejected or ""]
        t = time.perf_counter()
        V = self.embedder.encode(texts).astype(np.float16)
        self._t_embed += time.perf_counter() - t
        for f, parts in enumerate((self._P, self._C, self._R)):
            parts.append(V[f::3].copy())
        self._rows.append(np.fromiter((p.row for p in keep), dtype=np.int64, count=len(keep)))
        sks = [sketch(t) for t in texts]
        self._sk.append(np.array([s for s, _ in sks], dtype=f"S{SKETCH_BYTES + 1}").reshape(-1, 3))
        self._ln.append(np.array([n for _, n in sks], dtype=np.int32).reshape(-1, 3))
        self._phash.append(np.fromiter((_prompt_hash(p.prompt or "") for p in keep), dtype=np.int64,
                                       count=len(keep)))

    @staticmethod
    def _concat(parts: list[np.ndarray]) -> np.ndarray:
        out = np.concatenate(parts)
        parts.clear()
        return out

    def finalize(self) -> StageResult:
        res = StageResult()
        stats: dict[str, Any] = {"n_skipped_pretokenized": self.n_skipped}
        res.stats = {"near_duplicates": stats}
        if not self._rows:
            return res
        rows = np.concatenate(self._rows)
        P, C, R = (self._concat(parts) for parts in (self._P, self._C, self._R))  # one at a time
        sk, ln = np.concatenate(self._sk), np.concatenate(self._ln)
        phash = np.concatenate(self._phash)
        self._sk.clear()
        self._ln.clear()
        emb = self.embedder
        self.ctx.models["embedder"] = emb.to_json()

        dup = self._params(NEAR_DUPLICATE_INFO)
        con = {**dup, **self._params(NEAR_CONTRADICTION_INFO)}
        out = find_groups(rows, P, C, R, sk, ln, dup, con,
                          want_dups="near_duplicate_pair" in self.enabled,
                          want_contradictions="contradictory_pair" in self.enabled)
        res.findings = out["findings"]

        # embedding view of near_identical_pair: chosen-vs-rejected cosine of every row
        idx = np.arange(len(rows))
        pair_cos = _rowdot(C, R, idx, idx)
        ni = {"min_cosine": 0.98, **self.ctx.params.get("near_identical_pair", {})}
        cfg = self.ctx.config
        if "near_identical_pair" not in cfg.skip and (cfg.only is None or "near_identical_pair" in cfg.only):
            thr = float(ni["min_cosine"])
            for i in np.flatnonzero(pair_cos >= thr).tolist():
                res.findings.append(Finding(int(rows[i]), "near_identical_pair", "rejected", float(pair_cos[i]),
                                            detail=f"chosen-vs-rejected embedding cosine {pair_cos[i]:.4f} >= {thr}"))
        res.findings.sort(key=lambda f: (f.row, f.check))
        res.rows = rows.tolist()
        res.scores = {"pair_cosine": pair_cos.astype(np.float64),
                      "near_duplicate_pair_score": out["near_duplicate_pair_score"]}

        _, counts = np.unique(phash, return_counts=True)
        stats.update(out["stats"])
        stats.update(
            distinct_prompts=int(len(counts)),
            prompts_with_several_pairs=int((counts > 1).sum()),
            pairs_sharing_a_prompt=int(counts[counts > 1].sum()),
            max_pairs_per_prompt=int(counts.max()),
            embed_s=round(self._t_embed, 3),
            embedder=emb.to_json(),
            bytes_per_row_observed=int(P.itemsize * (P.shape[1] * 3) + sk.itemsize * 3 + 3 * 4 + 16),
        )
        return res

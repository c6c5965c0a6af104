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

``finalize`` searches neighbours of the *sum* vector ``normalise(p + c + r)``: one 384-d index finds
both near duplicates and swapped copies, because the sum is the same whichever response is the
chosen one. Exact search (``IndexFlatIP``) up to ``exact_max_rows`` rows, beyond that an IVF index
(``IndexIVFFlat``, ``nlist ~ 2 sqrt(n)`` trained on a fixed-seed sample, ``nprobe`` lists probed);
``neighbors`` nearest rows per row are kept when their sum-vector cosine is at least
``min_search_cosine``. Each candidate pair of rows is then verified field by field: a field
matches when its normalised text is identical, or when the embedding cosine is >= ``min_cosine``
*and* the rapidfuzz ratio of the sketches (for long texts also the ratio of the normalised lengths)
is >= ``min_char_ratio``; the cosine alone would merge same-topic pairs, the character ratio alone
would miss nothing but cannot be searched at scale.

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
                "exact_max_rows": 20000, "nprobe": 16},
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


def neighbour_search(P: np.ndarray, C: np.ndarray, R: np.ndarray, k: int, exact_max_rows: int,
                     nprobe: int, chunk: int = 65536, force: str | None = None) -> tuple[np.ndarray, np.ndarray, dict]:
    """k nearest rows (excluding nothing: row i usually finds itself) of every row by the cosine of
    the sum vectors. Returns (sims (n, k) float32, ids (n, k) int64, info). ``force`` = "flat"|"ivf"."""
    import faiss

    n, d = P.shape
    k = min(k, n)
    info: dict[str, Any] = {}
    kind = force or ("flat" if n <= exact_max_rows else "ivf")
    if kind == "flat":
        index = faiss.IndexFlatIP(d)
        info["index"] = "IndexFlatIP"
    else:
        nlist = int(min(65536, max(16, round(2 * math.sqrt(n)))))
        nlist = min(nlist, max(1, n // 39))
        quantizer = faiss.IndexFlatIP(d)
        index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_INNER_PRODUCT)
        rng = np.random.default_rng(0)
        n_train = min(n, 50 * nlist)
        sample = np.sort(rng.choice(n, size=n_train, replace=False))
        train = _sum_vectors(P[sample], C[sample], R[sample], 0, n_train)
        index.cp.seed = 1234
        index.train(train)
        del train
        index.nprobe = min(nprobe, nlist)
        info.update(index="IndexIVFFlat", nlist=nlist, nprobe=index.nprobe, n_train=n_train)
    for lo in range(0, n, chunk):
        index.add(_sum_vectors(P, C, R, lo, min(n, lo + chunk)))
    sims = np.empty((n, k), dtype=np.float32)
    ids = np.empty((n, k), dtype=np.int64)
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        sims[lo:hi], ids[lo:hi] = index.search(_sum_vectors(P, C, R, lo, hi), k)
    return sims, ids, info


def _rowdot(A: np.ndarray, B: np.ndarray, a: np.ndarray, b: np.ndarray, chunk: int = 65536) -> np.ndarray:
    out = np.empty(len(a), dtype=np.float32)
    for lo in range(0, len(a), chunk):
        hi = lo + chunk
        out[lo:hi] = np.einsum("ij,ij->i", A[a[lo:hi]].astype(np.float32), B[b[lo:hi]].astype(np.float32))
    return out


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
                want_contradictions: bool = True, force_index: str | None = None) -> dict[str, Any]:
    """The whole search on compact arrays. Returns findings, per-row scores and stats."""
    n = len(rows)
    t0 = time.perf_counter()
    k = int(dup["neighbors"]) + 1  # +1: a row finds itself
    sims, ids, info = neighbour_search(P, C, R, k, int(dup["exact_max_rows"]), int(dup["nprobe"]),
                                       force=force_index)
    t_search = time.perf_counter() - t0
    self_idx = np.arange(n)[:, None]
    other = (ids >= 0) & (ids != self_idx)
    best = np.where(other, sims, -np.inf).max(axis=1) if n > 1 else np.full(n, -np.inf)
    nearest_score = np.where(np.isfinite(best), best, np.nan).astype(np.float64)
    cand = other & (sims >= float(dup["min_search_cosine"]))
    qa = np.broadcast_to(self_idx, ids.shape)[cand]
    qb = ids[cand]
    a, b = np.minimum(qa, qb), np.maximum(qa, qb)
    key = np.unique(a.astype(np.int64) * n + b)
    a, b = key // n, key % n
    del sims, ids, cand, qa, qb, key
    t1 = time.perf_counter()
    findings: list[Finding] = []
    stats: dict[str, Any] = {**info, "n_rows": int(n), "n_candidates": int(len(a)), "search_s": round(t_search, 3)}

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
    return {"findings": findings, "near_duplicate_pair_score": nearest_score, "stats": stats}


# --------------------------------------------------------------------------------------------
# the stage
# --------------------------------------------------------------------------------------------

class NearDuplicateStage(Stage):
    infos = (NEAR_DUPLICATE_INFO, NEAR_CONTRADICTION_INFO)

    def __init__(self, ctx: Context, enabled: set[str]) -> None:
        super().__init__(ctx, enabled)
        _check_deps()
        self._embedder: Embedder | None = None
        self._rows: list[np.ndarray] = []
        self._vecs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
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
        self._vecs.append((V[0::3].copy(), V[1::3].copy(), V[2::3].copy()))
        self._rows.append(np.fromiter((p.row for p in keep), dtype=np.int64, count=len(keep)))
        sks = [sketch(t) for t in texts]
        self._sk.append(np.array([s for s, _ in sks], dtype=f"S{SKETCH_BYTES + 1}").reshape(-1, 3))
        self._ln.append(np.array([n for _, n in sks], dtype=np.int32).reshape(-1, 3))
        self._phash.append(np.fromiter((_prompt_hash(p.prompt or "") for p in keep), dtype=np.int64,
                                       count=len(keep)))

    def finalize(self) -> StageResult:
        res = StageResult()
        stats: dict[str, Any] = {"n_skipped_pretokenized": self.n_skipped}
        res.stats = {"near_duplicates": stats}
        if not self._rows:
            return res
        rows = np.concatenate(self._rows)
        P = np.concatenate([v[0] for v in self._vecs])
        C = np.concatenate([v[1] for v in self._vecs])
        R = np.concatenate([v[2] for v in self._vecs])
        self._vecs.clear()
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

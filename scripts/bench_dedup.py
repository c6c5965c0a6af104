#!/usr/bin/env python
"""Benchmark of the near-duplicate stage. Prints numbers; asserts nothing.

Default run (``--compare``, one run so the ratios are comparable): the designs side by side on the same
real HH helpful-base test rows with planted copies (paraphrases, light edits, exact copies; seeded,
tests/support/planting.py), each in its own subprocess on a cold embedding cache:

* today       : the transformer (all-MiniLM-L6-v2) embeds every text; per field cosine >= 0.75 AND
                character ratio >= 0.80 (the stage before issue 12);
* transformer : the transformer embeds every text; the new rule (mean/floor of max(cosine, wording));
* hybrid      : (default) static model2vec vectors find candidates, the transformer embeds only those;
* static      : (--fast) the static model decides alone;
* semhash     : SemHash.self_deduplicate (PyPI semhash, a peer for semantic dedup) on prompt+chosen+rejected
                with the same static model (its default potion model needs a hub), default threshold 0.9.

Columns: recall on planted paraphrases / light edits / exact copies (grouped with their source row),
unrelated extras (findings on rows that are neither a planted copy nor its source, nor an exact repeat
already in the file), wall time of the stage (embedding included; the one-off distillation of the static
model excluded: cached), peak RSS, and the speed-up against today. Then the flip classifier's AUROC
(pairaudit.stages.flips.features, cross-validated, on UltraFeedback label_flip_10 / _20 with metadata
dropped) with each embedder.

Older sections, on request: ``--embed`` (embedding throughput, bf16 vs fp32) and ``--search`` (search time,
memory and IVF recall on synthetic vectors at 100k-1M rows).

    flock /tmp/pairaudit-bench.lock .venv/bin/python scripts/bench_dedup.py               # ~15 min on 2 cores
    .venv/bin/python scripts/bench_dedup.py --rows 600 --no-flips                           # quick
    .venv/bin/python scripts/bench_dedup.py --no-compare --search --sizes 100000 --embed
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
HH = ROOT.parent / "shared" / "data" / "hh-rlhf" / "helpful-base-test.jsonl"
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def hh_texts(n: int) -> list[str]:
    sep = "\n\nAssistant:"
    out: list[str] = []
    with open(HH, encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            c, r = d["chosen"], d["rejected"]
            k = c.rfind(sep) + len(sep)
            out += [c[:k], c[k:], r[r.rfind(sep) + len(sep):]]
            if len(out) >= n:
                break
    return out[:n]


# -- (a) embedding --------------------------------------------------------------------------------

def bench_embedding(n_texts: int, n_bf16: int, batch_size: int) -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    from pairaudit.models.device import cpu_supports_bf16
    from pairaudit.models.embedder import Embedder, bundled_embedder_dir

    texts = hh_texts(n_texts)
    chars = sum(map(len, texts))
    print(f"[embed] {len(texts)} real HH texts (prompts + responses, {chars / len(texts):.0f} chars avg), "
          f"torch threads {torch.get_num_threads()}, batch {batch_size}, "
          f"cpu bf16 kernels: {cpu_supports_bf16()}")
    folder = str(bundled_embedder_dir())
    bare = SentenceTransformer(folder, device="cpu", model_kwargs={"dtype": torch.float32})
    bare.encode(texts[:8], batch_size=batch_size)  # warm-up
    t = time.perf_counter()
    ref = bare.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
    t_bare = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as cache:
        emb = Embedder(device="cpu", precision="fp32", batch_size=batch_size, cache_dir=Path(cache))
        emb.encode(texts[:8])  # load + warm-up (these 8 are then cached; encode the rest)
        emb2 = Embedder(device="cpu", precision="fp32", batch_size=batch_size, cache_dir=Path(cache) / "b")
        emb2._model = emb._model
        t = time.perf_counter()
        ours = emb2.encode(texts)
        t_ours = time.perf_counter() - t
        emb3 = Embedder(device="cpu", precision="fp32", batch_size=batch_size, cache_dir=Path(cache) / "b")
        t = time.perf_counter()
        emb3.encode(texts)
        t_cached = time.perf_counter() - t
    drift = float(np.min(np.sum(ours * ref, axis=1)))
    print(f"[embed] fp32 bare SentenceTransformer.encode: {len(texts) / t_bare:8.1f} texts/s")
    print(f"[embed] fp32 Embedder.encode (cold cache):     {len(texts) / t_ours:8.1f} texts/s   "
          f"ratio {t_bare / t_ours:.2f} (goal >= 0.9); min cosine to bare {drift:.6f}")
    print(f"[embed] fp32 Embedder.encode (warm cache):     {len(texts) / t_cached:8.1f} texts/s   "
          f"(n_encoded={emb3.n_encoded}, n_cached={emb3.n_cached})")
    if n_bf16 > 0:
        sub = texts[:n_bf16]
        bf = SentenceTransformer(folder, device="cpu", model_kwargs={"dtype": torch.bfloat16})
        bf.encode(sub[:4], batch_size=batch_size)
        t = time.perf_counter()
        vb = bf.encode(sub, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
        t_bf = time.perf_counter() - t
        t = time.perf_counter()
        vf = bare.encode(sub, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
        t_fp = time.perf_counter() - t
        vb = np.asarray(vb, dtype=np.float32)
        vb /= np.linalg.norm(vb, axis=1, keepdims=True)
        cos = np.sum(vb * vf, axis=1)
        print(f"[embed] bf16 vs fp32 on {len(sub)} texts: bf16 {len(sub) / t_bf:.1f} texts/s, fp32 "
              f"{len(sub) / t_fp:.1f} texts/s (bf16 speed-up x{t_fp / t_bf:.2f})")
        print(f"[embed] bf16-vs-fp32 cosine drift: mean {1 - cos.mean():.2e}, max {1 - cos.min():.2e} "
              f"(1 - cosine of the same text's two embeddings)")


# -- (b, c) search ------------------------------------------------------------------------------------

def synthetic(n: int, d: int, seed: int = 0) -> dict:
    """Clustered unit vectors (topics) + planted near duplicates (1%) and swapped copies (0.2%)."""
    rng = np.random.default_rng(seed)
    n_topics = max(1, n // 40)
    centers = rng.normal(size=(3, n_topics, d)).astype(np.float32)
    topic = rng.integers(0, n_topics, size=n)
    fields = []
    for f in range(3):
        A = np.empty((n, d), dtype=np.float16)
        for lo in range(0, n, 65536):
            hi = min(n, lo + 65536)
            x = centers[f, topic[lo:hi]] + 0.95 * rng.normal(size=(hi - lo, d)).astype(np.float32)
            A[lo:hi] = x / np.linalg.norm(x, axis=1, keepdims=True)
        fields.append(A)
    P, C, R = fields
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz      ", dtype="S1")
    sk = letters[rng.integers(0, 32, size=(n, 3, 48))].view("S48").reshape(n, 3).astype("S257")
    ln = np.full((n, 3), 48, dtype=np.int32)
    n_dup, n_swap = n // 100, n // 500
    src = rng.choice(n, size=n_dup + n_swap, replace=False)
    dst = rng.choice(np.setdiff1d(np.arange(n), src), size=n_dup + n_swap, replace=False)
    for A in (P, C, R):
        noise = 0.25 * rng.normal(size=(n_dup, d)).astype(np.float32) / math.sqrt(d)
        x = A[src[:n_dup]].astype(np.float32) + noise
        A[dst[:n_dup]] = x / np.linalg.norm(x, axis=1, keepdims=True)
    sk[dst[:n_dup]] = sk[src[:n_dup]]
    s, t = src[n_dup:], dst[n_dup:]
    P[t], C[t], R[t] = P[s], R[s], C[s]
    sk[t] = sk[s][:, [0, 2, 1]]
    return {"P": P, "C": C, "R": R, "sk": sk, "ln": ln, "dup": (src[:n_dup], dst[:n_dup]), "swap": (s, t)}


class PeakRSS:
    def __init__(self) -> None:
        import psutil

        self.proc = psutil.Process()
        self.base = self.peak = self.proc.memory_info().rss
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            time.sleep(0.02)

    def __enter__(self) -> PeakRSS:
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()


def search_worker(n: int, d: int, recall_queries: int, index: str | None, nprobe: int | None) -> dict:
    from pairaudit.stages.near_duplicates.infos import NEAR_DUPLICATE_INFO
    from pairaudit.stages.near_duplicates.verify import find_groups

    t = time.perf_counter()
    data = synthetic(n, d)
    t_gen = time.perf_counter() - t
    params = dict(NEAR_DUPLICATE_INFO.thresholds)
    if nprobe:
        params["nprobe"] = nprobe
    rows = np.arange(n, dtype=np.int64)
    held = sum(data[k].nbytes for k in ("P", "C", "R", "sk", "ln")) + rows.nbytes
    with PeakRSS() as mem:
        t = time.perf_counter()
        timings: dict[str, float] = {}
        out = find_groups(rows, data["P"], data["C"], data["R"], data["sk"], data["ln"], params, params,
                          force_index=index, keep_neighbours=bool(recall_queries), timings=timings)
        out["stats"].update(search_s=timings["near_duplicates:search_s"], verify_s=timings["near_duplicates:verify_s"])
        t_search = time.perf_counter() - t
    got_dup = {(f.row, f.group) for f in out["findings"] if f.check == "near_duplicate_pair"}
    src, dst = data["dup"]
    found_dup = sum((int(b), int(a)) in got_dup or (int(a), int(b)) in got_dup for a, b in zip(src, dst))
    got_con = {f.row for f in out["findings"] if f.check == "contradictory_pair"}
    s, tt = data["swap"]
    found_con = sum(int(a) in got_con and int(b) in got_con for a, b in zip(s, tt))
    res = {"n": n, "gen_s": t_gen, "search_total_s": t_search, "stats": out["stats"],
           "held_bytes_per_row": held / n, "peak_extra_bytes_per_row": (mem.peak - mem.base) / n,
           "peak_rss_gb": mem.peak / 2**30, "planted_dups_found": found_dup / max(1, len(src)),
           "planted_swaps_found": found_con / max(1, len(s))}
    if recall_queries and not out["stats"]["index"].startswith("flat"):
        import faiss

        from pairaudit.stages.near_duplicates.search import sum_vectors

        k = int(params["neighbors"])
        rng = np.random.default_rng(1)
        q = rng.choice(n, size=min(n, recall_queries // 2), replace=False)
        # half the queries are rows with a planted near duplicate: the neighbours that matter
        q = np.unique(np.concatenate([q, rng.choice(dst, size=min(len(dst), recall_queries // 2), replace=False)]))
        a, b, _ = out["neighbours"]
        qset = set(q.tolist())
        approx: dict[int, set[int]] = {}
        for x, y in zip(a.tolist(), b.tolist()):
            if x in qset:
                approx.setdefault(x, set()).add(y)
            if y in qset:
                approx.setdefault(y, set()).add(x)
        S = sum_vectors(data["P"], data["C"], data["R"])
        ex_s, ex_i = faiss.knn(np.ascontiguousarray(S[q]), S, k + 1, faiss.METRIC_INNER_PRODUCT)
        thr = float(params["min_search_cosine"])
        for name, level in (("recall_vs_exact", thr), ("recall_vs_exact_0.85", 0.85)):
            want = hit = 0
            for row, es, ei in zip(q.tolist(), ex_s, ex_i):
                exact = {int(j) for s_, j in zip(es, ei) if s_ >= level and j != row}
                want += len(exact)
                hit += len(exact & approx.get(row, set()))
            res[name] = hit / max(1, want)
            res[name + "_pairs"] = want
        res["recall_queries"] = int(len(q))
    return res


def run_sizes(sizes: list[int], d: int, recall_queries: int, index: str | None, nprobe: int | None) -> None:
    results = []
    for n in sizes:
        cmd = [sys.executable, __file__, "--_worker", str(n), "--dim", str(d), "--recall-queries",
               str(recall_queries)] + (["--index", index] if index else []) \
            + (["--nprobe", str(nprobe)] if nprobe else [])
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"[search] n={n}: worker failed\n{proc.stderr[-2000:]}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append(r)
        st = r["stats"]
        idx = st["index"] + (f" nlist={st['nlist']} nprobe={st['nprobe']} largest cell {st['largest_cell']}"
                             if "nlist" in st else "")
        print(f"[search] n={n:>9,d}  {idx}: total {r['search_total_s']:.1f}s (neighbour search "
              f"{st['search_s']:.1f}s, verify+groups {st['verify_s']:.1f}s), {st['n_candidates']:,d} candidate "
              f"pairs; peak RSS {r['peak_rss_gb']:.2f} GiB; stage data {r['held_bytes_per_row']:.0f} B/row + "
              f"search peak {r['peak_extra_bytes_per_row']:.0f} B/row")
        print(f"[search]            planted near-dups found {r['planted_dups_found']:.4f}, swapped copies "
              f"found {r['planted_swaps_found']:.4f}"
              + (f"; recall vs exact: {r['recall_vs_exact']:.4f} of {r['recall_vs_exact_pairs']} neighbour pairs "
                 f">= min_search_cosine, {r['recall_vs_exact_0.85']:.4f} of {r['recall_vs_exact_0.85_pairs']} "
                 f">= 0.85 ({r['recall_queries']} queries)" if "recall_vs_exact" in r else ""))
    if len(results) >= 2:
        a, b = results[0], results[-1]
        exp = math.log(b["search_total_s"] / a["search_total_s"]) / math.log(b["n"] / a["n"])
        print(f"[search] scaling exponent (time ~ n^k) between n={a['n']:,d} and n={b['n']:,d}: k = {exp:.2f}")


# -- (d) side by side ----------------------------------------------------------------------------------

DESIGNS = ("today", "transformer", "hybrid", "static", "semhash")


def planted_hh(n_rows: int | None, frac: float = 0.1, seed: int = 12) -> dict:
    import random

    from support import planting as pl

    rows = pl.hh_rows(n_rows)
    rng = random.Random(seed)
    n = len(rows)
    src = rng.sample(range(n), max(30, int(n * frac)))
    k1, k2 = int(len(src) * 0.6), int(len(src) * 0.9)
    para, light, exact = {}, {}, {}
    for o in src[:k1]:
        p, c, r = rows[o]
        rows.append((pl.reword_prompt(p, rng), pl.paraphrase(c, rng), pl.paraphrase(r, rng)))
        para[len(rows) - 1] = o
    for j, o in enumerate(src[k1:k2]):
        rows.append(tuple(pl.light_edit(t, pl.LIGHT_KINDS[(j + f) % 5], rng) for f, t in enumerate(rows[o])))
        light[len(rows) - 1] = o
    for o in src[k2:]:
        rows.append(rows[o])
        exact[len(rows) - 1] = o
    first: dict[tuple, int] = {}
    natural = {i for i, r in enumerate(rows[:n]) if first.setdefault(r, i) != i}  # exact repeats in the file
    natural |= {first[rows[i]] for i in natural}
    return {"rows": rows, "n": n, "para": para, "light": light, "exact": exact,
            "involved": set(src) | set(para) | set(light) | set(exact) | natural}


def _old_rule_groups(rows_idx: np.ndarray, P: np.ndarray, C: np.ndarray, R: np.ndarray, sk: np.ndarray,
                     ln: np.ndarray) -> set[tuple[int, int]]:
    """The stage before issue 12: every field equal, or cosine >= 0.75 and character ratio >= 0.80."""
    from pairaudit.stages.near_duplicates.match import char_ratio
    from pairaudit.stages.near_duplicates.search import neighbour_search, rowdot, sum_vectors
    from pairaudit.stages.near_duplicates.unionfind import UnionFind

    a, b, _, _, _ = neighbour_search(sum_vectors(P, C, R), 16, 0.6, 20000, 8)
    ok = np.ones(len(a), dtype=bool)
    for f, A in enumerate((P, C, R)):
        cos = rowdot(A, A, a, b)
        for i in range(len(a)):
            if not ok[i]:
                continue
            same = sk[a[i], f] == sk[b[i], f] and ln[a[i], f] == ln[b[i], f]
            ok[i] = same or (cos[i] >= 0.75 and char_ratio(sk[a[i], f], int(ln[a[i], f]), sk[b[i], f],
                                                             int(ln[b[i], f])) >= 0.80)
    uf = UnionFind(len(P))
    uf.union_edges(a[ok], b[ok])
    out = set()
    for g in uf.groups(np.concatenate([a[ok], b[ok]])):
        rep = int(rows_idx[g].min())
        out |= {(int(rows_idx[x]), rep) for x in g.tolist() if int(rows_idx[x]) != rep}
    return out


def design_worker(design: str, n_rows: int | None, cache: str, frac: float) -> dict:
    from support.nd_support import fresh_cache, run_stage, to_pairs

    data = planted_hh(n_rows, frac)
    rows = data["rows"]
    pairs = to_pairs(rows)
    cache_dir = fresh_cache(Path(cache) / design)
    if design != "semhash":  # the static model is distilled once (cached): not part of any design's time
        from pairaudit.models.embedder import Embedder
        from pairaudit.models.static_embedder import StaticEmbedder

        e = Embedder(cache_dir=None)
        StaticEmbedder(Path(e.path), e.sha256 or "", e.model_id, cache_dir=cache_dir).encode(["warm-up"])
    with PeakRSS() as mem:
        t = time.perf_counter()
        if design == "semhash":
            from semhash import SemHash

            from pairaudit.models.embedder import Embedder
            from pairaudit.models.static_embedder import StaticEmbedder

            e = Embedder(cache_dir=None)
            model = StaticEmbedder(Path(e.path), e.sha256 or "", e.model_id, cache_dir=cache_dir)._load()
            records = [{"row": str(i), "prompt": p, "chosen": c, "rejected": r} for i, (p, c, r) in enumerate(rows)]
            res = SemHash.from_records(records, columns=["prompt", "chosen", "rejected"], model=model)
            out = res.self_deduplicate()
            groups = {(int(d.record["row"]), int(d.duplicate_of["row"])) for d in out.filtered}
            info: dict = {}
        else:
            mode = "transformer" if design == "today" else design
            res, stage = run_stage(pairs, cache_dir, mode=mode, batch=1000, enabled={"near_duplicate_pair"},
                                   skip=["near_identical_pair"])
            groups = {(f.row, f.group) for f in res.findings if f.check == "near_duplicate_pair"}
            info = {k: v for k, v in res.stats["near_duplicates"].items() if k in ("hybrid_candidate_rows", "mode")}
        wall = time.perf_counter() - t
    if design == "today":  # same embeddings (now cached), the old per-field gate
        from pairaudit.stages.near_duplicates.match import sketch

        emb = stage.embedder
        V = emb.encode([x for r in rows for x in r]).astype(np.float16)
        sks = [sketch(x) for r in rows for x in r]
        sk = np.array([s for s, _ in sks], dtype="S257").reshape(-1, 3)
        ln = np.array([n for _, n in sks], dtype=np.int32).reshape(-1, 3)
        groups = _old_rule_groups(np.arange(len(rows)), V[0::3], V[1::3], V[2::3], sk, ln)
    flagged = {r for r, _ in groups}
    rec = {k: sum((r, o) in groups for r, o in data[k].items()) / max(1, len(data[k]))
           for k in ("para", "light", "exact")}
    extras = sorted(r for r in flagged if r not in data["involved"])
    return {"design": design, "wall_s": wall, "peak_rss_gb": mem.peak / 2**30, "recall": rec,
            "extras": len(extras), "extra_rows": extras[:10], "n_rows": len(rows), "n_real": data["n"],
            "n_planted": {k: len(data[k]) for k in ("para", "light", "exact")}, **info}


def run_compare(n_rows: int | None, designs: list[str], frac: float) -> None:
    results = []
    with tempfile.TemporaryDirectory() as cache:
        for d in designs:
            cmd = [sys.executable, __file__, "--_design", d, "--_cache", cache, "--plant-frac", str(frac)] + (
                ["--rows", str(n_rows)] if n_rows else [])
            env = {**os.environ, "PAIRAUDIT_CACHE": os.environ.get("PAIRAUDIT_CACHE", str(Path(cache) / "session"))}
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if proc.returncode != 0:
                print(f"[compare] {d}: worker failed\n{proc.stderr[-3000:]}")
                continue
            results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    if not results:
        return
    r0 = results[0]
    print(f"[compare] {r0['n_real']} real HH rows + planted {r0['n_planted']} = {r0['n_rows']} rows "
          f"(--plant-frac {frac}); "
          f"cold embedding cache per design; 2 CPU cores shared with other jobs")
    today = next((r["wall_s"] for r in results if r["design"] == "today"), None)
    print(f"{'design':12s} {'paraphrases':>11s} {'light edits':>11s} {'exact':>6s} {'extras':>6s} {'wall s':>8s} "
          f"{'peak RSS GB':>11s} {'speed-up':>8s}  notes")
    for r in results:
        sp = f"x{today / r['wall_s']:.1f}" if today else "-"
        note = f"transformer embedded {r['hybrid_candidate_rows']} candidate rows" if "hybrid_candidate_rows" in r \
            else ""
        print(f"{r['design']:12s} {r['recall']['para']:11.3f} {r['recall']['light']:11.3f} {r['recall']['exact']:6.3f} "
              f"{r['extras']:6d} {r['wall_s']:8.1f} {r['peak_rss_gb']:11.2f} {sp:>8s}  {note}"
              + (f" extra rows {r['extra_rows']}" if r["extras"] else ""))


def flips_auroc(which: list[str]) -> None:
    from sklearn.metrics import roc_auc_score

    from pairaudit.config import default_cache_dir
    from pairaudit.models.embedder import Embedder
    from pairaudit.models.static_embedder import StaticEmbedder
    from pairaudit.stages.flips.features import length_features
    from pairaudit.stages.flips.model import fit_flip_model, oof_logodds

    base = Embedder(cache_dir=default_cache_dir())
    encoders = {"all-MiniLM-L6-v2": base.encode,
                "static (model2vec)": StaticEmbedder(Path(base.path), base.sha256 or "", base.model_id,
                                                     cache_dir=default_cache_dir()).encode}
    for name in which:
        path = ROOT.parent / "shared" / "data" / "ultrafeedback-1k" / f"{name}.jsonl"
        recs = [json.loads(line) for line in open(path, encoding="utf-8")]
        flipped = np.array([bool(((r.get("metadata") or {}).get("noise") or {}).get("selected")) for r in recs])
        chosen, rejected = [r["chosen"] for r in recs], [r["rejected"] for r in recs]
        ln = length_features(chosen, rejected)
        for ename, enc in encoders.items():
            t = time.perf_counter()
            c, r = enc(chosen), enc(rejected)
            t_emb = time.perf_counter() - t
            feats = {"embedding": oof_logodds(c - r), **{f"len{j}": ln[:, j] for j in range(ln.shape[1])}}
            auc = roc_auc_score(flipped, 1 - fit_flip_model(feats).p_correct)
            print(f"[flips] {name} ({flipped.sum()} flipped of {len(recs)}): pair classifier with {ename:20s} "
                  f"AUROC {auc:.3f}  (embedding {t_emb:.0f}s, cache as it was)")
        p = fit_flip_model({f"len{j}": ln[:, j] for j in range(ln.shape[1])}).p_correct
        print(f"[flips] {name}: length features alone AUROC {roc_auc_score(flipped, 1 - p):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=None, help="real HH rows for --compare (default: all 2,354)")
    ap.add_argument("--designs", type=lambda s: s.split(","), default=list(DESIGNS))
    ap.add_argument("--plant-frac", type=float, default=0.1, help="share of real rows that get a planted copy "
                    "(0.1: 6%% paraphrased, 3%% light edits, 1%% exact copies)")
    ap.add_argument("--no-compare", action="store_true")
    ap.add_argument("--no-flips", action="store_true")
    ap.add_argument("--embed", action="store_true", help="embedding throughput section")
    ap.add_argument("--search", action="store_true", help="search scaling / IVF recall section")
    ap.add_argument("--texts", type=int, default=256, help="real HH texts for the throughput test")
    ap.add_argument("--bf16-texts", type=int, default=48, help="texts for bf16 vs fp32 (bf16 is slow without "
                                                               "native kernels)")
    ap.add_argument("--skip-bf16", action="store_true")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[100_000, 1_000_000])
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--recall-queries", type=int, default=2000)
    ap.add_argument("--index", choices=["flat", "ivf"], default=None, help="force an index (default: by size)")
    ap.add_argument("--nprobe", type=int, default=None, help="override the nprobe default")
    ap.add_argument("--_worker", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--_design", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--_cache", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._worker is not None:
        print(json.dumps(search_worker(args._worker, args.dim, args.recall_queries, args.index, args.nprobe)))
        return
    if args._design is not None:
        from pairaudit.models.runtime import passive_openmp

        passive_openmp()  # as a scan does before torch loads (spinning OpenMP threads are ~10x slower under load)
        print(json.dumps(design_worker(args._design, args.rows, args._cache, args.plant_frac)))
        return
    t = time.perf_counter()
    if not args.no_compare:
        run_compare(args.rows, args.designs, args.plant_frac)
    if not args.no_flips:
        flips_auroc(["label_flip_10", "label_flip_20"])
    if args.embed:
        bench_embedding(args.texts, 0 if args.skip_bf16 else args.bf16_texts, args.batch_size)
    if args.search:
        run_sizes(args.sizes, args.dim, args.recall_queries, args.index, args.nprobe)
    print(f"[bench] total {time.perf_counter() - t:.0f}s")


if __name__ == "__main__":
    main()

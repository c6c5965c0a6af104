#!/usr/bin/env python
"""Issue 36: static vectors looked up from the trainer tokenizer's ids, against the current static model.

The current static model (``models/static_embedder.py``) is model2vec distilled from all-MiniLM-L6-v2 over
*its* WordPiece vocabulary: every text is tokenized a second time (WordPiece) after the trainer's BPE. The
candidate measured here: a table with one row per trainer-tokenizer id (the bundled SmolLM2 byte-level BPE,
49,152 ids), built the way model2vec builds its own (each token's decoded string, wrapped in [CLS] .. [SEP],
through the transformer once, mean pooled; PCA to 256 dimensions; Zipf/SIF weights by id rank), cached by
the sha256 of the tokenizer and the embedder; a text's vector = mean of the table rows of its ids (the ids
each row already has, so no second tokenization), L2-normalised after the same float16 rounding.

Prints, for both vector kinds:

* the planted HH set of ``scripts/bench_dedup.py`` (its planting code): paraphrase / light-edit / exact-copy
  recall, unrelated rows merged, in ``static`` and default ``hybrid`` mode (hybrid: candidate rows the
  transformer embedded, and the share of the current hybrid's flagged rows the ids-table run flags too);
* ``data/precision/neardup_heldout*.jsonl``: paraphrases found, hard negatives merged, findings on base rows;
* speed on N fresh rows (``make_scale_set.py --fresh``): texts/s of the current static encode, the ids-table
  with its own BPE tokenization, the lookup alone given the ids, and raw ``encode_batch`` of the same texts;
* ``likely_flipped`` AUROC (UltraFeedback label_flip_10 / _20) with each vector kind (``scripts/eval_flips.py``).

    flock /work/bench.lock python scripts/bench_static_ids.py --fresh-set /tmp/fresh20k.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "scripts"))
MAX_TOKENS = 512  # model2vec's StaticModel.encode truncates each text to 512 tokens; the table does the same
TABLE_VERSION = "ids1"


def trainer_tokenizer(cache: Path) -> Any:
    """The bundled SmolLM2 tokenizer (a ``tokenizers.Tokenizer``)."""
    from pairaudit.models.tokenizer import load_tokenizer

    tok, _ = load_tokenizer(None, cache)
    return tok.backend_tokenizer


def _token_strings(bpe: Any) -> list[str]:
    n = bpe.get_vocab_size(with_added_tokens=True)
    special = {i for i in range(n) if (bpe.id_to_token(i) or "").startswith("<|")}
    strings = bpe.decode_batch([[i] for i in range(n)], skip_special_tokens=False)
    return ["" if i in special else s for i, s in enumerate(strings)]


def build_table(bpe: Any, emb_path: Path, emb_sha: str, cache: Path) -> tuple[np.ndarray, float, bool]:
    """(vocab, 256) float32 table for the trainer ids, built once and cached; returns (table, seconds, cached)."""
    key = hashlib.sha256((bpe.to_str() + emb_sha + TABLE_VERSION).encode()).hexdigest()[:24]
    path = cache / "static-ids" / f"{key}.npy"
    if path.exists():
        return np.load(path), 0.0, True
    import torch
    from model2vec.distill.inference import apply_pca, compute_weights, create_embeddings
    from transformers import AutoModel, AutoTokenizer

    from pairaudit.quiet import tqdm_off

    t = time.perf_counter()
    torch.set_num_threads(2)
    wp = AutoTokenizer.from_pretrained(str(emb_path))
    strings = _token_strings(bpe)
    live = [i for i, s in enumerate(strings) if s.strip()]
    ids = wp([strings[i] for i in live], add_special_tokens=True, truncation=True, max_length=16)["input_ids"]
    model = AutoModel.from_pretrained(str(emb_path))
    with torch.inference_mode(), tqdm_off("model2vec.distill.inference"):
        out = create_embeddings(model, ids, "cpu", wp.pad_token_id or 0)
    full = np.zeros((len(strings), out.shape[1]), np.float32)
    full[live] = out
    reduced = apply_pca(full[live], 256)
    table = np.zeros((len(strings), reduced.shape[1]), np.float32)
    table[live] = reduced * compute_weights(len(strings), 1e-4)[live][:, None]
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, table)
    return table, time.perf_counter() - t, False


class IdsStatic:
    """The ``StaticEmbedder`` surface the stages use (encode / sha256 / dim / to_json), from the ids table."""

    def __init__(self, table: np.ndarray, bpe: Any) -> None:
        self.table, self.bpe = table, bpe
        self.sha256 = hashlib.sha256(table.tobytes()[:1 << 20]).hexdigest()
        self.dim = table.shape[1]

    def ids(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self.bpe.encode_batch(texts, add_special_tokens=False)]

    def lookup(self, ids: list[list[int]]) -> np.ndarray:
        """Mean of the table rows of each id list (first MAX_TOKENS), float16-rounded, L2-normalised."""
        from itertools import chain

        from scipy.sparse import csr_matrix

        ids = [x if len(x) <= MAX_TOKENS else x[:MAX_TOKENS] for x in ids]
        lens = np.fromiter(map(len, ids), np.int64, len(ids))
        flat = np.fromiter(chain.from_iterable(ids), np.int64, int(lens.sum()))
        indptr = np.concatenate([[0], np.cumsum(lens)])
        weights = np.repeat(1.0 / np.maximum(lens, 1), lens).astype(np.float32)
        counts = csr_matrix((weights, flat, indptr), shape=(len(ids), len(self.table)))
        out = np.asarray(counts @ self.table, dtype=np.float32)  # the mean of each text's rows, no gather copy
        out = out.astype(np.float16).astype(np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms

    def encode(self, texts: list[str], progress: Any = None) -> np.ndarray:
        out = self.lookup(self.ids(texts))
        if progress is not None:
            progress(len(texts))
        return out

    def to_json(self) -> dict[str, Any]:
        return {"id": "ids table (bench_static_ids.py)", "sha256": self.sha256}


def run_nd(pairs: list, cache: Path, mode: str, static: Any) -> tuple[Any, Any]:
    """The near-duplicate stage over ``pairs`` (batches of 1000), with ``static`` as its static model when given."""
    from support.nd_support import run_stage

    from pairaudit.stages.near_duplicates import stage as nd

    orig = nd.NearDuplicateStage.static
    if static is not None:
        nd.NearDuplicateStage.static = property(lambda self: static)  # type: ignore[method-assign,assignment]
    try:
        return run_stage(pairs, cache, mode=mode, batch=1000, enabled={"near_duplicate_pair", "contradictory_pair"})
    finally:
        nd.NearDuplicateStage.static = orig  # type: ignore[method-assign]


def planted_figures(kinds: dict, cache: Path, frac: float, modes: list[str]) -> None:
    from bench_dedup import planted_hh
    from support.nd_support import fresh_cache, to_pairs

    data = planted_hh(None, frac)
    pairs = to_pairs(data["rows"])
    print(f"\n[planted HH] {data['n']} real rows + {len(data['para'])} paraphrased / {len(data['light'])} lightly "
          f"edited / {len(data['exact'])} exact copies (bench_dedup planting, --plant-frac {frac})")
    print(f"{'mode':7s} {'vectors':14s} {'paraphr':>7s} {'light':>6s} {'exact':>6s} {'extras':>6s} {'cand rows':>9s} "
          f"{'flagged':>7s} {'of current':>10s} {'stage s':>7s}")
    for mode in modes:
        ref: set[int] | None = None
        for name, static in kinds.items():
            t = time.perf_counter()
            res, _ = run_nd(pairs, fresh_cache(cache / f"{mode}-{name}"), mode, static)
            wall = time.perf_counter() - t
            groups = {(f.row, f.group) for f in res.findings if f.check == "near_duplicate_pair"}
            flagged = {r for r, _ in groups}
            rec = {k: sum((r, o) in groups for r, o in data[k].items()) / max(1, len(data[k]))
                   for k in ("para", "light", "exact")}
            extras = sorted(r for r in flagged if r not in data["involved"])
            ref = flagged if ref is None else ref
            st = res.stats["near_duplicates"]
            print(f"{mode:7s} {name:14s} {rec['para']:7.3f} {rec['light']:6.3f} {rec['exact']:6.3f} {len(extras):6d} "
                  f"{st.get('hybrid_candidate_rows', '-'):>9} {len(flagged):7d} "
                  f"{len(flagged & ref) / max(1, len(ref)):10.3f} {wall:7.1f}" + (f"  extras {extras[:8]}" if extras
                                                                                  else ""))


def heldout_figures(kinds: dict, cache: Path, mode: str) -> None:
    from support.nd_support import fresh_cache

    from pairaudit.datatypes import Pair

    print(f"\n[held-out near-duplicate sets, {mode} mode] paraphrases found / hard negatives merged / findings on "
          "base rows")
    tot: dict[str, list[int]] = {k: [0, 0, 0, 0, 0] for k in kinds}
    for path in sorted((ROOT / "data" / "precision").glob("neardup_heldout*.jsonl")):
        rows = [json.loads(line) for line in path.open(encoding="utf-8")]
        pairs = [Pair(i, "standard", r["prompt"], r["chosen"], r["rejected"]) for i, r in enumerate(rows)]
        first_plant = min(i for i, r in enumerate(rows) if r.get("plant_kind"))
        line = [f"{path.name:24s}"]
        for name, static in kinds.items():
            res, _ = run_nd(pairs, fresh_cache(cache / f"held-{path.stem}-{name}"), mode, static)
            fs = [f for f in res.findings if f.check in ("near_duplicate_pair", "contradictory_pair")]
            group = {(f.row, f.check): f.group for f in fs}
            named = {(f.row, f.check): {int(x) for x in re.findall(r"of row (\d+)", f.detail or "")} for f in fs}
            got = {}
            for kind in ("paraphrase", "hard_negative"):
                idx = [i for i, r in enumerate(rows) if r.get("plant_kind") == kind]
                hit = [i for i in idx if any(
                    (group.get((i, c)) is not None and group.get((i, c)) == group.get((rows[i]["plant_of"], c)))
                    or rows[i]["plant_of"] in named.get((i, c), set()) or i in named.get((rows[i]["plant_of"], c), set())
                    for c in ("near_duplicate_pair", "contradictory_pair"))]
                got[kind] = (len(hit), len(idx))
            base = sum(f.row < first_plant for f in fs)
            t = tot[name]
            t[0] += got["paraphrase"][0]; t[1] += got["paraphrase"][1]  # noqa: E702
            t[2] += got["hard_negative"][0]; t[3] += got["hard_negative"][1]; t[4] += base  # noqa: E702
            line.append(f"{name}: {got['paraphrase'][0]}/{got['paraphrase'][1]}, {got['hard_negative'][0]}/"
                        f"{got['hard_negative'][1]}, {base}")
        print("  ".join(line))
    print("total                     " + "  ".join(f"{k}: {t[0]}/{t[1]}, {t[2]}/{t[3]}, {t[4]}" for k, t in tot.items()))


def speed_figures(kinds: dict, fresh: Path, n_rows: int) -> None:
    from pairaudit.io.formats import detect_format, normalise

    recs = [json.loads(line) for _, line in zip(range(n_rows), fresh.open(encoding="utf-8"))]
    fmt = detect_format(recs[0])
    texts = []
    for i, r in enumerate(recs):
        p = normalise(i, r, fmt)
        texts += [p.prompt or "", p.chosen or "", p.rejected or ""]
    ids_kind: IdsStatic = kinds["ids table"]
    bpe = ids_kind.bpe
    timings: dict[str, float] = {}
    t = time.perf_counter()
    ids = [e.ids for e in bpe.encode_batch(texts, add_special_tokens=False)]
    timings["raw encode_batch (trainer BPE; the ids every row has)"] = time.perf_counter() - t
    t = time.perf_counter()
    ids_kind.lookup(ids)
    timings["ids table: lookup given the ids"] = time.perf_counter() - t
    t = time.perf_counter()
    ids_kind.encode(texts)
    timings["ids table: BPE tokenize + lookup"] = time.perf_counter() - t
    t = time.perf_counter()
    kinds["current static"].encode(texts)
    timings["current static: WordPiece tokenize + lookup"] = time.perf_counter() - t
    raw = timings["raw encode_batch (trainer BPE; the ids every row has)"]
    print(f"\n[speed] {len(recs)} fresh rows ({fresh.name}), {len(texts)} texts, one pass each, 2 shared cores")
    print(f"{'':52s} {'seconds':>8s} {'texts/s':>9s} {'x encode_batch':>14s}")
    for k, v in timings.items():
        print(f"{k:52s} {v:8.2f} {len(texts) / v:9.0f} {v / raw:14.2f}")


def flips_figures(kinds: dict, cache: Path) -> None:
    from eval_flips import LEN, evaluate, load_hh, load_uf

    from pairaudit.config import Context, ScanConfig
    from pairaudit.stages.flips.stage import FlipStage
    from pairaudit.trainer import profiles

    print("\n[likely_flipped] AUROC, default features (no reference model): UltraFeedback (metadata dropped), and HH "
          "with 10% of the pairs swapped (scripts/eval_flips.py's sets)")
    for name in ("label_flip_10", "label_flip_20", "hh"):
        pairs, truth = load_hh() if name == "hh" else load_uf(name)
        for kname, static in kinds.items():
            base = ScanConfig(reference=None, device="cpu")
            cfg = profiles.resolve(base).apply(base)
            stage = FlipStage(Context(cfg, cache / "flips", lambda m: None, params={}), {"likely_flipped"})
            stage.static = static
            for s in range(0, len(pairs), 100):
                stage.observe(pairs[s:s + 100], None)
            nan = np.full(len(pairs), np.nan)
            raw = {"ref_sum": nan, "ref_mean": nan, "ref_min": nan, "ref_tokens": nan}
            lenf = np.concatenate(stage._lenf)
            raw.update({k: lenf[:, j].astype(np.float64) for j, k in enumerate(LEN)})
            out = evaluate(raw, np.concatenate(stage._emb), None, truth, False)
            print(f"  {name} ({int(truth.sum())} flipped of {len(truth)}) {kname:14s}: embedding alone AUROC "
                  f"{out['static embedding model (learned)']['auroc']}, default (embedding + length) "
                  f"{out['COMBINED default: embedding + length']['auroc']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fresh-set", type=Path, default=None, help="a make_scale_set.py --fresh file (speed)")
    ap.add_argument("--rows", type=int, default=20000, help="rows of --fresh-set for the speed figures")
    ap.add_argument("--plant-frac", type=float, default=0.1)
    ap.add_argument("--modes", type=lambda s: s.split(","), default=["static", "hybrid"])
    ap.add_argument("--held-modes", type=lambda s: s.split(","), default=["auto", "static"])
    ap.add_argument("--skip", type=lambda s: s.split(","), default=[], help="planted,heldout,speed,flips")
    args = ap.parse_args()
    from pairaudit.config import default_cache_dir
    from pairaudit.models.embedder import Embedder
    from pairaudit.models.static_embedder import StaticEmbedder

    cache = default_cache_dir()
    emb = Embedder(cache_dir=None)
    current = StaticEmbedder(Path(emb.path), emb.sha256 or "", emb.model_id, cache_dir=cache)
    current.encode(["warm-up"])
    bpe = trainer_tokenizer(cache)
    table, secs, cached = build_table(bpe, Path(emb.path), emb.sha256 or "", cache)
    print(f"[table] {table.shape[0]} trainer ids x {table.shape[1]} dims from {emb.model_id}: "
          + ("cached" if cached else f"built in {secs:.1f} s (2 shared cores), cached"))
    kinds = {"current static": current, "ids table": IdsStatic(table, bpe)}
    with tempfile.TemporaryDirectory() as tmp:
        import os

        os.environ.setdefault("PAIRAUDIT_CACHE", str(cache))
        if "speed" not in args.skip and args.fresh_set:
            speed_figures(kinds, args.fresh_set, args.rows)
        if "heldout" not in args.skip:
            for mode in args.held_modes:
                heldout_figures(kinds, Path(tmp), mode)
        if "planted" not in args.skip:
            planted_figures(kinds, Path(tmp), args.plant_frac, args.modes)
        if "flips" not in args.skip:
            flips_figures(kinds, Path(tmp))


if __name__ == "__main__":
    main()

"""Repeated texts: tokenizing, ``degenerate_repetition`` and the static vectors with their memos off and on, in one process.

    python scripts/bench_memo.py SCALE_SET.jsonl --rows 8000

Interleaves the two settings (twice each; the static vectors: the memo of one batch, as before, against the
memo across batches, ``models/batch_vectors.py``) with raw ``tokenizers`` ``encode_batch`` of the same prompt /
chosen / rejected, so every figure is taken at the same machine load; prints seconds per round. A scale
set from ``../shared/tools/make_scale_set.py`` repeats its prompts and responses (docs/performance.md).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from pairaudit.checks.repetition import DegenerateRepetition
from pairaudit.datatypes import Pair
from pairaudit.io.formats import detect_format, normalise
from pairaudit.models.tokenizer import load_tokenizer
from pairaudit.trainer.tokenizer import DPOTokenizer

BATCH = 1000


def tokenize(tok: tuple, pairs: list[Pair], memo: bool) -> float:
    d = DPOTokenizer(*tok, trainer="trl-1.14.2")
    if not memo:
        d.splitter.memo.max_texts = 0
    t = time.perf_counter()
    for k in range(0, len(pairs), BATCH):
        d.encode_rendered([d.render(p) for p in pairs[k:k + BATCH]])
    return time.perf_counter() - t


def repetition(pairs: list[Pair], memo: bool) -> float:
    chk = DegenerateRepetition()
    if not memo:
        chk.memo.max_texts = 0
    out: list = []
    t = time.perf_counter()
    for p in pairs:
        chk.check(p, None, out)
    return time.perf_counter() - t


def static_vectors(static: Any, pairs: list[Pair], cross: bool) -> float:
    from pairaudit.models import batch_vectors

    batch_vectors.CROSS_BATCH = cross
    bv = batch_vectors.BatchVectors()
    t = time.perf_counter()
    for k in range(0, len(pairs), BATCH):
        batch = pairs[k:k + BATCH]
        bv.encode(static, batch, [x or "" for p in batch for x in (p.prompt, p.chosen, p.rejected)])
    return time.perf_counter() - t


def load_static() -> Any:
    from pairaudit.config import default_cache_dir
    from pairaudit.models.embedder import Embedder
    from pairaudit.models.static_embedder import StaticEmbedder

    static = StaticEmbedder.for_embedder(Embedder(), default_cache_dir(), purpose="bench", fix="-")
    static.encode(["warm up"])
    return static


def raw(tok: tuple, pairs: list[Pair]) -> float:
    texts = [x for p in pairs for x in (p.prompt, p.chosen, p.rejected)]
    backend = tok[0].backend_tokenizer
    t = time.perf_counter()
    for k in range(0, len(texts), 3 * BATCH):
        backend.encode_batch(texts[k:k + 3 * BATCH])
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("--rows", type=int, default=8000)
    args = ap.parse_args()
    with open(args.path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line, _ in zip(fh, range(args.rows))]
    fmt = detect_format(rows[0], {})
    pairs = [normalise(i, r, fmt, {}) for i, r in enumerate(rows)]
    tok = load_tokenizer(None)
    static = load_static()
    runs: dict[str, Callable[[], float]] = {
        "raw": lambda: raw(tok, pairs),
        "tok_off": lambda: tokenize(tok, pairs, False), "tok_on": lambda: tokenize(tok, pairs, True),
        "rep_off": lambda: repetition(pairs, False), "rep_on": lambda: repetition(pairs, True),
        "emb_batch": lambda: static_vectors(static, pairs, False), "emb_cross": lambda: static_vectors(static, pairs, True),
    }
    res: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(2):
        for k, fn in runs.items():
            res[k].append(round(fn(), 2))
    print(len(pairs), "rows;", res)


if __name__ == "__main__":
    main()

"""The near-duplicate stage's transformer pass on CPU: where its time goes and what precision options cost
(issue 36, step s7_tfm; measurements in docs/performance.md).

    # 1. record the texts a default scan sends to the transformer (one scan, cold embedding cache)
    python scripts/bench_embed_cpu.py capture /work/scale/hh-100000.jsonl /tmp/x/texts.json --out /tmp/x/out
    # 2. time the pass over them per variant; vectors compared with fp32
    python scripts/bench_embed_cpu.py time /tmp/x/texts.json --variants fp32,bf16,int8,int8pc
    # 3. run any script with the embedder quantized (int8: the Linear layers, after an fp32 load), e.g. a gate
    python scripts/bench_embed_cpu.py with int8 scripts/eval_hybrid_agreement.py --findings /tmp/x/int8.jsonl

Variants: ``fp32``, ``bf16`` (the embedder's precisions), ``int8`` (``torch.ao.quantization.quantize_dynamic``
of every ``nn.Linear``, per-tensor weights: its default), ``int8pc`` (the same with per-channel weights). The int8
variants are not pairaudit options: they failed the near-duplicate quality gates (docs/near_duplicates.md).
``with`` keeps its variant's vectors apart: they are written under the fp32 cache key, so give the run its own
cache (``PAIRAUDIT_CACHE`` or the script's ``--cache``), never the user cache.
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

INT8 = ("int8", "int8pc")


def quantize(model: Any, variant: str) -> None:
    """Quantize ``model``'s Linear layers to int8 in place (dynamic: activations quantized per call).

    Args:
        model: a loaded fp32 SentenceTransformer.
        variant: ``int8`` (per-tensor weights) or ``int8pc`` (per-channel weights).
    """
    import torch
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    spec: Any = {torch.nn.Linear: per_channel_dynamic_qconfig} if variant == "int8pc" else {torch.nn.Linear}
    quantize_dynamic(model, spec, dtype=torch.qint8, inplace=True)


def patch_embedder(variant: str) -> None:
    """Make every ``Embedder`` of this process load fp32 and quantize to ``variant`` (``int8`` / ``int8pc``)."""
    from pairaudit.models import embedder as emb

    init, load = emb.Embedder.__init__, emb.Embedder._load

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self._requested_precision = "fp32"

    def _load(self: Any) -> Any:
        fresh = self._model is None
        model = load(self)
        if fresh:
            quantize(model, variant)
        return model

    emb.Embedder.__init__ = __init__  # type: ignore[method-assign]
    emb.Embedder._load = _load  # type: ignore[method-assign]


def capture(data: str, texts_out: str, out: str) -> None:
    """Run a default scan of ``data`` and write the texts the transformer encoded (JSON list, in call order).

    Args:
        data: the dataset to scan.
        texts_out: where the texts go.
        out: the scan's output folder.
    """
    import pairaudit
    from pairaudit.models import embedder as emb

    calls: list[list[str]] = []
    raw = emb.Embedder._encode_raw

    def spy(self: Any, texts: list[str], progress: Any = None) -> np.ndarray:
        calls.append(list(texts))
        return raw(self, texts, progress)

    emb.Embedder._encode_raw = spy  # type: ignore[method-assign]
    t = time.perf_counter()
    pairaudit.scan(data, out=out, log=lambda m: None)
    texts = [x for c in calls for x in c]
    print(f"scan {time.perf_counter() - t:.1f} s; {len(calls)} transformer calls, {len(texts)} texts")
    Path(texts_out).write_text(json.dumps(texts), encoding="utf-8")


def time_variants(texts_path: str, variants: list[str], every: int) -> None:
    """Per variant: seconds for the pass over the texts (after a warm-up) and the cosine to fp32's vectors.

    Args:
        texts_path: a ``capture`` file.
        variants: names (``fp32`` first gives the reference; else one fp32 pass is added).
        every: take every n-th text.
    """
    import torch

    from pairaudit.models.embedder import Embedder

    texts = json.loads(Path(texts_path).read_text(encoding="utf-8"))[::every]
    e = Embedder(device="cpu", precision="fp32", cache_dir=None)
    lengths = e.token_lengths(texts)
    groups = np.unique(lengths, return_counts=True)[1]
    print(f"{len(texts)} texts, {int(lengths.sum())} tokens (median {np.median(lengths):.0f}, max_seq_length "
          f"{e.max_seq_length}, {int((lengths >= (e.max_seq_length or 0)).sum())} at it); {len(groups)} token "
          f"lengths, {int(np.ceil(groups / e.batch_size).sum())} batches; torch threads {torch.get_num_threads()}")
    ref: np.ndarray | None = None
    for v in (variants if variants[0] == "fp32" else ["fp32", *variants]):
        e = Embedder(device="cpu", precision="fp32" if v in INT8 else v, cache_dir=None)
        if v in INT8:
            quantize(e._load(), v)
        e._encode_raw(texts[:32])  # load + warm-up
        t = time.perf_counter()
        vec = e._encode_raw(texts)
        dt = time.perf_counter() - t
        vec /= np.linalg.norm(vec, axis=1, keepdims=True)
        ref = vec if ref is None else ref
        cos = np.sum(vec * ref, axis=1)
        print(f"{v:8s} {dt:7.2f} s {len(texts) / dt:7.1f} texts/s   cosine to fp32 min {cos.min():.5f} "
              f"p1 {np.percentile(cos, 1):.5f} mean {cos.mean():.6f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("capture")
    c.add_argument("data")
    c.add_argument("texts_out")
    c.add_argument("--out", required=True)
    t = sub.add_parser("time")
    t.add_argument("texts")
    t.add_argument("--variants", type=lambda s: s.split(","), default=["fp32", "bf16", "int8", "int8pc"])
    t.add_argument("--every", type=int, default=1, help="take every n-th text")
    w = sub.add_parser("with")
    w.add_argument("variant", choices=INT8)
    w.add_argument("script")
    w.add_argument("args", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if args.cmd == "capture":
        capture(args.data, args.texts_out, args.out)
    elif args.cmd == "time":
        time_variants(args.texts, args.variants, args.every)
    else:
        patch_embedder(args.variant)
        sys.argv = [args.script, *args.args]
        runpy.run_path(args.script, run_name="__main__")


if __name__ == "__main__":
    main()

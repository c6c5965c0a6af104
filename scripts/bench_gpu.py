#!/usr/bin/env python
"""The GPU paths, measured: prints numbers, asserts nothing. Run it where CUDA is (each section also runs
on a CPU-only machine, with the CUDA half skipped).

    python scripts/bench_gpu.py env
    python scripts/bench_gpu.py embed --texts 8000         # the embedder: texts/s per device and precision,
                                                           # and how far its vectors move from CPU fp32
    python scripts/bench_gpu.py reference --config CFG --tokenizer TOK --work DIR
                                                           # the reference-model log-prob kernel: tokens/s
                                                           # on CUDA (bf16, fp32) and CPU, and the log-probs'
                                                           # agreement with CPU fp32

``reference`` builds a causal LM from a config with seeded random weights (a folder ``DIR/model``): its speed
is that of the trained model of the same architecture (same shapes, same kernels); its log-probs are only
compared across devices. Pass SmolLM2-135M-Instruct's config to time the default reference model where its
GGUF is not installed. Whole scans on CUDA against the CPU are compared with ``scripts/compare_outputs.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
HH = Path(os.environ.get("BENCH_HH", ROOT.parent / "shared" / "data" / "hh-rlhf" / "helpful-base-test.jsonl"))
SEP = "\n\nAssistant:"


def hh_texts(n: int) -> list[str]:
    """Real HH texts, prompt / chosen / rejected of each row in turn; distinct."""
    out: dict[str, None] = {}
    with open(HH, encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            c, r = d["chosen"], d["rejected"]
            k = c.rfind(SEP) + len(SEP)
            for t in (c[:k], c[k:], r[r.rfind(SEP) + len(SEP):]):
                out.setdefault(t)
            if len(out) >= n:
                break
    return list(out)[:n]


def sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def env() -> None:
    import torch

    from pairaudit.models.device import cpu_supports_bf16

    info = {"python": sys.version.split()[0], "torch": torch.__version__, "cuda": torch.cuda.is_available(),
            "cpu_count": os.cpu_count(), "cpu_bf16_kernels": cpu_supports_bf16()}
    if torch.cuda.is_available():
        info |= {"gpu": torch.cuda.get_device_name(0), "cuda_bf16": torch.cuda.is_bf16_supported(),
                 "gpu_memory_gib": round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)}
    for pkg in ("transformers", "sentence_transformers", "tokenizers", "faiss", "polars", "datasets", "pyarrow",
                "model2vec", "rapidfuzz", "huggingface_hub"):
        try:
            info[pkg] = __import__(pkg).__version__
        except Exception as exc:  # noqa: BLE001 - a report, not a check
            info[pkg] = f"missing ({type(exc).__name__}: {exc})"
    print(json.dumps(info, indent=1))


def cosines(a: np.ndarray, b: np.ndarray) -> str:
    c = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return f"cosine to CPU fp32: min {c.min():.5f}, mean {c.mean():.6f}, share >= 0.999 {np.mean(c >= 0.999):.4f}"


def embed(n: int, n_cpu: int, batch_size: int) -> None:
    import torch

    from pairaudit.models.embedder import Embedder

    texts = hh_texts(n)
    print(f"[embed] {len(texts)} distinct real HH texts ({sum(map(len, texts)) / len(texts):.0f} chars avg); "
          f"CPU fp32 reference on the first {n_cpu}; batch {batch_size}")
    ref = Embedder(device="cpu", precision="fp32", batch_size=batch_size).encode(texts[:n_cpu])
    configs = [("cpu", "auto")]
    if torch.cuda.is_available():
        configs = [("cuda", "auto"), ("cuda", "fp32"), ("cuda", "bf16"), *configs]
    for dev, prec in configs:
        emb = Embedder(device=dev, precision=prec, batch_size=batch_size)
        emb.encode(texts[:64])  # load + warm-up
        part = texts if dev != "cpu" else texts[:n_cpu]
        times = []
        for _ in range(2):  # the second pass: every batch shape seen before (kernel selection warmed up)
            emb2 = Embedder(device=dev, precision=prec, batch_size=batch_size)
            emb2._model = emb._model
            sync()
            t0 = time.perf_counter()
            vecs = emb2.encode(part)
            sync()
            times.append(time.perf_counter() - t0)
        print(f"  {dev}/{emb.precision:>4}: {len(part)} texts in {times[0]:.2f} s = {len(part) / times[0]:,.0f} texts/s "
              f"(again: {len(part) / times[1]:,.0f} texts/s); " + cosines(vecs[:n_cpu], ref), flush=True)


def reference(config: str, tokenizer: str, work: Path, n_seqs: int, seq_len: int,
              batches: list[tuple[int, int]] | None = None) -> None:
    """Tokens/s of the reference kernel per device and precision; on CUDA also per (batch tokens, max batch) of
    ``batches`` (the scorer's own defaults first)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from pairaudit.models.reference import LogpScorer

    folder = work / "model"
    if not (folder / "config.json").exists():
        torch.manual_seed(0)
        cfg = AutoConfig.from_pretrained(config)
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
        model.save_pretrained(str(folder))
        AutoTokenizer.from_pretrained(tokenizer).save_pretrained(str(folder))
    rng = np.random.default_rng(0)
    vocab = AutoConfig.from_pretrained(str(folder)).vocab_size
    lens = rng.integers(seq_len // 4, seq_len, size=n_seqs)
    seqs = [(rng.integers(0, vocab, 16).tolist(), rng.integers(0, vocab, int(k)).tolist()) for k in lens]
    n_tokens = int(sum(16 + k for k in lens))
    print(f"[reference] {folder} (seeded random weights, {sum(p.numel() for p in AutoModelForCausalLM.from_pretrained(str(folder)).parameters()) / 1e6:.0f}M "
          f"parameters); {n_seqs} sequences, {n_tokens:,} tokens (16-token prompt, completions "
          f"{seq_len // 4}-{seq_len} tokens)")
    base = None
    configs = [("cpu", "fp32")]
    if torch.cuda.is_available():
        configs = [*configs, ("cuda", "bf16"), ("cuda", "fp32")]
        configs += [("cuda", "bf16", bt, mb) for bt, mb in batches or []]
    for dev, prec, *size in configs:
        kw = {"batch_tokens": size[0], "max_batch": size[1]} if size else {}
        sc = LogpScorer(str(folder), device=dev, precision=prec, **kw)
        part = seqs if dev != "cpu" else seqs[: max(8, n_seqs // 16)]
        sc.score_seqs(part[:4])  # load + warm-up
        times = []
        for _ in range(2):  # the second pass: every batch shape seen before
            sc2 = LogpScorer(str(folder), device=dev, precision=prec, **kw)  # a fresh in-memory log-prob cache
            sc2._model = sc._model
            sync()
            t0 = time.perf_counter()
            logp, _hidden = sc2.score_seqs(part)
            sync()
            times.append(time.perf_counter() - t0)
        dt = times[0]
        toks = sum(len(p) + len(c) for p, c in part)
        logp = np.asarray(logp, dtype=np.float64).reshape(len(part), -1)[:, 0]
        if base is None:
            base = logp
        d = np.abs(logp[: len(base)] - base[: len(logp)])
        rel = d / np.maximum(np.abs(base[: len(logp)]), 1.0)
        label = f" batch tokens {size[0]}, max batch {size[1]}" if size else ""
        print(f"  {dev}/{prec}{label}: {len(part)} sequences in {dt:.2f} s = {len(part) / dt:,.1f} seq/s, {toks / dt:,.0f} "
              f"tokens/s (again: {toks / times[1]:,.0f}; batch tokens, rows {sc.batch_size()}); summed log-prob vs CPU fp32: max abs diff {d.max():.3f}, "
              f"max relative {rel.max():.2e}\n    seconds per phase, second pass: "
              + ", ".join(f"{k} {v:.2f}" for k, v in sorted(sc2.timings.items())), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    sub.add_parser("env")
    e = sub.add_parser("embed")
    e.add_argument("--texts", type=int, default=8000)
    e.add_argument("--cpu-texts", type=int, default=600)
    e.add_argument("--batch-size", type=int, default=64)
    r = sub.add_parser("reference")
    r.add_argument("--config", required=True, help="folder or config.json of the architecture")
    r.add_argument("--tokenizer", required=True, help="tokenizer folder saved beside the random weights")
    r.add_argument("--work", type=Path, required=True)
    r.add_argument("--seqs", type=int, default=2048)
    r.add_argument("--seq-len", type=int, default=512)
    r.add_argument("--batches", default="", help="more CUDA bf16 runs: comma list of BATCH_TOKENS:MAX_BATCH")
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if a.what == "env":
        env()
    elif a.what == "embed":
        embed(a.texts, a.cpu_texts, a.batch_size)
    else:
        batches = [tuple(int(v) for v in x.split(":")) for x in a.batches.split(",") if x]
        reference(a.config, a.tokenizer, a.work, a.seqs, a.seq_len, batches)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()

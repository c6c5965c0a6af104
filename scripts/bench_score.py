"""Reference scoring throughput vs a bare forward pass, where the time goes, and faster CPU paths.

"scored" = ``sequence_logps`` (batching, decoder forward, LM head on scored positions + fp32 log-softmax,
pooling); "bare" = ``model(input_ids, attention_mask)`` on the identical padded batches (``make_batches``,
built before timing; full logits, nothing else). Tokens/s count real tokens of real UltraFeedback pairs
tokenized as the scan does. Rounds are interleaved over all variants; each keeps its best time.
Candidates: int8 (``quantize_dynamic``, every ``nn.Linear``) and ONNX Runtime (decoder exported; head and
log-softmax stay in torch, same kernel), worth using only if faster than fp32 AND every sequence's summed
log-prob is within 0.05 nats. ONNX is no project dependency: without ``onnxruntime`` here, the
site-packages of a scratch venv (``--onnx-venv``: ``pip install onnxruntime onnx``) joins ``sys.path``.

    nice -n 10 .venv/bin/python scripts/bench_score.py --pairs 16 --rounds 2
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
DATA = "/work/shared/data/ultrafeedback-1k/train_clean.jsonl"
PHASES = ("batching", "forward", "log_softmax", "pooling")
TOL = 0.05  # nats per sequence (summed completion log-prob)
MAX_BATCH = 64  # LogpScorer's default


def load_pairs(path: str, n: int) -> list[Any]:
    from pairaudit.io.formats import detect_format, normalise

    with open(path, encoding="utf-8") as fh:
        recs = [json.loads(line) for line in itertools.islice(fh, n)]
    return [normalise(i, rec, detect_format(rec) or "standard") for i, rec in enumerate(recs)]


def padded_batches(seqs: list, batch_tokens: int, pad: int) -> list[tuple[Any, Any]]:
    """The kernel's batches (same grouping, same padding), as (input_ids, attention_mask) tensors."""
    import torch

    from pairaudit.models.logp_kernel import make_batches

    lengths = [len(p) + len(c) for p, c in seqs]
    out = []
    for batch in make_batches(lengths, batch_tokens, MAX_BATCH):
        T = max(lengths[i] for i in batch)
        ids = torch.full((len(batch), T), pad, dtype=torch.long)
        mask = torch.zeros((len(batch), T), dtype=torch.long)
        for b, i in enumerate(batch):
            full = seqs[i][0] + seqs[i][1]
            ids[b, : len(full)] = torch.tensor(full, dtype=torch.long)
            mask[b, : len(full)] = 1
        out.append((ids, mask))
    return out


def bare(model: Any, batches: list[tuple[Any, Any]]) -> None:
    import torch

    with torch.inference_mode():
        for ids, mask in batches:
            model(input_ids=ids, attention_mask=mask)


def drift(ref: np.ndarray, other: np.ndarray) -> dict[str, Any]:
    """|summed log-prob difference| per sequence (nats), and the largest per scored token."""
    d = np.abs(ref[:, 0] - other[:, 0])
    return {"max": round(float(d.max()), 4), "mean": round(float(d.mean()), 4), "ok": bool(d.max() < TOL),
            "max_per_token": round(float((d / np.maximum(ref[:, 1], 1)).max()), 4)}


def drift_text(d: dict[str, Any]) -> str:
    return (f"|diff| vs fp32 max {d['max']:.4f}, mean {d['mean']:.4f} nats per sequence (max "
            f"{d['max_per_token']:.4f} per token), {'<' if d['ok'] else '>='} {TOL}")


def verdict(speedup: float, d: dict[str, Any]) -> str:
    if speedup > 1 and d["ok"]:
        return "use it"
    why = [] if speedup > 1 else [f"not faster ({speedup:.2f}x fp32 scored)"]
    if not d["ok"]:
        why.append(f"log-probs differ (max {d['max']:.3f} nats >= {TOL})")
    return "do not use: " + " and ".join(why)


class OrtModel:
    """What ``sequence_logps`` needs of a model, with the decoder forward run by ONNX Runtime."""

    def __init__(self, model: Any, sess: Any) -> None:
        self.m, self.sess, self.config = model, sess, model.config

    def __getattr__(self, name: str) -> Any:  # parameters, get_input/output_embeddings: the torch model's
        return getattr(self.__dict__["m"], name)

    def get_decoder(self) -> Any:
        import torch

        def run(input_ids: Any, attention_mask: Any) -> Any:
            h = self.sess.run(None, {"ids": input_ids.numpy(), "mask": attention_mask.numpy()})[0]
            return SimpleNamespace(last_hidden_state=torch.from_numpy(h))

        return run


def onnx_model(model: Any, venv: str, tmp: str) -> tuple[Any, str]:
    """(OrtModel, note) or (None, why ONNX was not measured)."""
    import torch

    where = "the project venv"
    try:
        import onnxruntime as ort
    except ImportError:
        v = sys.version_info
        sys.path.append(f"{venv}/lib/python{v.major}.{v.minor}/site-packages")
        where = f"scratch venv {venv}, not a project dependency"
        try:
            import onnxruntime as ort
        except ImportError as exc:
            return None, f"onnxruntime is not importable, here or from {venv} ({exc})"

    class Decoder(torch.nn.Module):
        def __init__(self, dec: Any) -> None:
            super().__init__()
            self.dec = dec

        def forward(self, ids: Any, mask: Any) -> Any:
            return self.dec(input_ids=ids, attention_mask=mask, use_cache=False).last_hidden_state

    path, ids = os.path.join(tmp, "decoder.onnx"), torch.randint(0, 1000, (2, 16))
    mask = torch.ones_like(ids)
    mask[1, 10:] = 0  # a padded row, so the traced graph handles padding
    dyn = {k: {0: "batch", 1: "time"} for k in ("ids", "mask", "h")}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(Decoder(model.get_decoder()).eval(), (ids, mask), path, input_names=["ids", "mask"],
                              output_names=["h"], dynamic_axes=dyn, dynamo=False, opset_version=17)
        so = ort.SessionOptions()
        so.intra_op_num_threads = torch.get_num_threads()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - any export/runtime failure is a result to report
        return None, f"export or session failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    return OrtModel(model, sess), f"onnxruntime {ort.__version__} from {where}; fp32 decoder, opset 17"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=16, help="UltraFeedback pairs (2 sequences each)")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved repetitions; the best time is kept")
    ap.add_argument("--batch-tokens", type=int, default=4096, help="padded tokens per batch (CPU default)")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's)")
    ap.add_argument("--cache", default="/work/evalcache", help="pairaudit cache dir (dequantized model)")
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--skip-onnx", action="store_true")
    ap.add_argument("--onnx-venv", default="/work/onnxvenv", help="scratch venv holding onnxruntime")
    args = ap.parse_args()

    import torch

    from pairaudit.config import ScanConfig
    from pairaudit.models.device import cpu_supports_bf16
    from pairaudit.models.logp_kernel import sequence_logps
    from pairaudit.models.reference import LogpScorer
    from pairaudit.trainer import profiles

    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__} | threads {torch.get_num_threads()} | cpu native bf16: {cpu_supports_bf16()}"
          f" | batch_tokens {args.batch_tokens} | best of {args.rounds} interleaved rounds", flush=True)
    cfg = profiles.resolve(ScanConfig()).apply(ScanConfig())
    scorer = LogpScorer(None, cache_dir=Path(args.cache), device="cpu", precision="fp32",
                        max_length=cfg.max_length, max_prompt_length=cfg.max_prompt_length,
                        max_completion_length=cfg.max_completion_length, truncation_mode=cfg.truncation_mode)
    pairs = load_pairs(args.data, args.pairs)
    t0 = time.perf_counter()
    per_pair, skipped = scorer.sequences(pairs)
    t_tok = time.perf_counter() - t0
    seqs = [s for pp in per_pair if pp is not None for s in pp]
    pad = scorer.dtok.pad_id if scorer.dtok.pad_id is not None else (scorer.dtok.eos_id or 0)
    ntok = sum(len(p) + len(c) for p, c in seqs)
    batches = padded_batches(seqs, args.batch_tokens, pad)
    print(f"data: {len(pairs)} pairs ({len(skipped)} skipped) -> {len(seqs)} sequences, {ntok} tokens, "
          f"{sum(len(c) for _, c in seqs)} completion tokens; batches of {[int(b[0].shape[0]) for b in batches]} "
          f"sequences; trainer {cfg.trainer}: max_length {cfg.max_length}, max_prompt_length "
          f"{cfg.max_prompt_length}, truncation {cfg.truncation_mode}")
    print(f"tokenize: {t_tok:.3f} s ({ntok / t_tok:.0f} tok/s) for {len(pairs)} pairs (LogpScorer.sequences)",
          flush=True)

    fp32 = scorer.model.eval()
    models: dict[str, Any] = {"fp32": fp32, "bf16": copy.deepcopy(fp32).to(torch.bfloat16)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models["int8"] = torch.ao.quantization.quantize_dynamic(copy.deepcopy(fp32), {torch.nn.Linear},
                                                                dtype=torch.qint8)
    tmp = tempfile.TemporaryDirectory()
    onnx_note = "skipped (--skip-onnx)"
    if not args.skip_onnx:
        ort_model, onnx_note = onnx_model(fp32, args.onnx_venv, tmp.name)
        if ort_model is not None:
            models["onnx"] = ort_model

    for name in models:  # warm-up: one short sequence each
        sequence_logps(models[name], seqs[-1:], batch_tokens=args.batch_tokens, pad_id=pad, pool=True)
    best: dict[str, float] = {}
    phases: dict[str, dict[str, float]] = {}
    stats: dict[str, np.ndarray] = {}
    for _ in range(args.rounds):
        for name in models:
            if name in ("fp32", "bf16"):
                start = time.perf_counter()
                bare(models[name], batches)
                best[name + "_bare"] = min(best.get(name + "_bare", float("inf")), time.perf_counter() - start)
            t: dict[str, float] = {}
            start = time.perf_counter()
            stats[name], _ = sequence_logps(models[name], seqs, batch_tokens=args.batch_tokens, max_batch=MAX_BATCH,
                                            pad_id=pad, pool=True, timings=t)
            if (dt := time.perf_counter() - start) < best.get(name, float("inf")):
                best[name], phases[name] = dt, t

    summary: dict[str, Any] = {"torch": torch.__version__, "threads": torch.get_num_threads(),
                               "native_bf16": cpu_supports_bf16(), "pairs": len(pairs), "sequences": len(seqs),
                               "tokens": ntok, "tokenize_s": round(t_tok, 4)}
    for name in ("fp32", "bf16"):
        s_rate, b_rate = ntok / best[name], ntok / best[name + "_bare"]
        ratio = s_rate / b_rate
        print(f"{name}: scored {s_rate:.0f} tok/s, bare forward {b_rate:.0f} tok/s, scored/bare {ratio:.2f} -> "
              f"{'PASS' if ratio >= 0.8 else 'FAIL'} (>= 0.8)")
        ph = {k: phases[name].get(k, 0.0) for k in PHASES}
        ph["other"] = max(best[name] - sum(ph.values()), 0.0)
        print("  phases: " + ", ".join(f"{k} {v:.3f} s ({100 * v / best[name]:.1f}%)" for k, v in ph.items())
              + f"; total {best[name]:.3f} s")
        summary[name] = {"scored_tok_s": round(s_rate, 1), "bare_tok_s": round(b_rate, 1), "ratio": round(ratio, 3),
                         "pass": ratio >= 0.8, "phases_s": {k: round(v, 4) for k, v in ph.items()}}
    d = drift(stats["fp32"], stats["bf16"])
    summary["bf16"]["drift"] = d
    print(f"bf16 drift: {drift_text(d)}")
    labels = {"int8": "int8 (quantize_dynamic qint8, all nn.Linear)", "onnx": f"onnx ({onnx_note})"}
    for name in ("int8", "onnx"):
        if name not in models:
            continue
        rate, speedup, d = ntok / best[name], best["fp32"] / best[name], drift(stats["fp32"], stats[name])
        v = verdict(speedup, d)
        print(f"{labels[name]}: scored {rate:.0f} tok/s = {speedup:.2f}x fp32 scored "
              f"({best['bf16'] / best[name]:.2f}x bf16); {drift_text(d)} -> {v}")
        summary[name] = {"scored_tok_s": round(rate, 1), "speedup_vs_fp32": round(speedup, 3), "drift": d,
                         "verdict": v}
    if "onnx" not in models:
        print(f"ONNX not measured: {onnx_note}")
        summary["onnx"] = {"measured": False, "reason": onnx_note}
    tmp.cleanup()
    print("JSON " + json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    main()

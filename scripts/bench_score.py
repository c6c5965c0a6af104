"""Throughput of the reference scoring pass vs a bare model forward over the same batches, and the
log-prob drift of bf16 vs fp32.

"scored" = ``sequence_logps`` (build padded batch, decoder forward, LM head on scored positions only,
fp32 log-softmax, per-sequence sums). "bare" = ``model(input_ids, attention_mask)`` on the identical
padded batches (full logits, nothing else). Tokens/s count real (unpadded) tokens. Sequences are
real UltraFeedback pairs tokenized exactly as for DPO (chat-free explicit prompt, EOS appended).

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/bench_score.py --pairs 8 --bf16-pairs 3
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=8, help="UltraFeedback pairs (2 sequences each) for fp32")
    ap.add_argument("--bf16-pairs", type=int, default=3, help="pairs for bf16 (emulated bf16 is slow on AVX2 CPUs)")
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--max-prompt-length", type=int, default=64)
    ap.add_argument("--batch-tokens", type=int, default=2048)
    ap.add_argument("--rounds", type=int, default=2, help="interleaved repetitions; the best time is kept")
    ap.add_argument("--cache", default=os.environ.get("PAIRAUDIT_CACHE", "/tmp/pairaudit-eval-cache"))
    ap.add_argument("--data", default="/work/shared/data/ultrafeedback-1k/train_clean.jsonl")
    args = ap.parse_args()

    import torch

    from pairaudit.models.reference import LogpScorer, cpu_supports_bf16, make_batches, sequence_logps
    from pairaudit.tokenize import kept_sequence
    from pairaudit.types import Pair

    scorer = LogpScorer(None, cache_dir=Path(args.cache), device="cpu", precision="fp32",
                        max_length=args.max_length, max_prompt_length=args.max_prompt_length)
    pairs = []
    with open(args.data, encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if i >= args.pairs:
                break
            r = json.loads(line)
            pairs.append(Pair(i, "standard", r["prompt"], r["chosen"], r["rejected"]))
    seqs = []
    for enc in scorer.dtok.encode_pairs(pairs):
        seqs.append(kept_sequence(enc.prompt_ids, enc.chosen_ids, enc.chosen_kept))
        seqs.append(kept_sequence(enc.prompt_ids, enc.rejected_ids, enc.rejected_kept))
    model = scorer.model
    pad = scorer.dtok.pad_id
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, cpu native bf16: {cpu_supports_bf16()}")

    def bare(m, ss: list) -> None:  # noqa: ANN001
        lengths = [len(p) + len(c) for p, c in ss]
        with torch.inference_mode():
            for batch in make_batches(lengths, args.batch_tokens, 64):
                T = max(lengths[i] for i in batch)
                ids = torch.full((len(batch), T), pad, dtype=torch.long)
                mask = torch.zeros((len(batch), T), dtype=torch.long)
                for b, i in enumerate(batch):
                    full = ss[i][0] + ss[i][1]
                    ids[b, : len(full)] = torch.tensor(full)
                    mask[b, : len(full)] = 1
                m(input_ids=ids, attention_mask=mask)

    results = {}
    for prec, dtype, n_pairs in (("fp32", torch.float32, args.pairs), ("bf16", torch.bfloat16, args.bf16_pairs)):
        ss = seqs[: 2 * n_pairs]
        m = model.to(dtype)
        lengths = [len(p) + len(c) for p, c in ss]
        ntok = sum(lengths)
        batches = make_batches(lengths, args.batch_tokens, 64)
        sequence_logps(m, ss[-2:], batch_tokens=args.batch_tokens, pad_id=pad)  # warm-up
        bare(m, ss[-2:])
        t_bare = t_scored = float("inf")
        for _ in range(args.rounds):  # interleaved, best of N: the machine is shared and noisy
            t = time.perf_counter()
            bare(m, ss)
            t_bare = min(t_bare, time.perf_counter() - t)
            t = time.perf_counter()
            out = sequence_logps(m, ss, batch_tokens=args.batch_tokens, pad_id=pad)
            t_scored = min(t_scored, time.perf_counter() - t)
        results[prec] = out
        print(f"{prec}: {len(ss)} sequences, {ntok} tokens, batches of {[len(b) for b in batches]} sequences "
              f"(<= {args.batch_tokens} padded tokens): scored {ntok / t_scored:.1f} tok/s, bare forward "
              f"{ntok / t_bare:.1f} tok/s, ratio scored/bare {t_bare / t_scored:.2f} (best of {args.rounds})", flush=True)
    n = len(results["bf16"])
    a, b = results["fp32"][:n], results["bf16"]
    d_sum = np.abs(a[:, 0] - b[:, 0])
    d_tok = d_sum / np.maximum(a[:, 1], 1)
    margin32 = a[0::2, 0] - a[1::2, 0]
    margin16 = b[0::2, 0] - b[1::2, 0]
    print(f"bf16 vs fp32 log-prob drift over {n} sequences ({int(a[:, 1].sum())} scored tokens): summed log-prob "
          f"|diff| mean {d_sum.mean():.3f} max {d_sum.max():.3f} nats; per token mean {d_tok.mean():.4f} nats; "
          f"pair margin |diff| max {np.abs(margin32 - margin16).max():.3f} nats; "
          f"fp32 sums {np.round(a[:, 0], 2).tolist()} vs bf16 {np.round(b[:, 0], 2).tolist()}")


if __name__ == "__main__":
    main()

"""The log-prob kernel: summed completion log-probs (and a pooled hidden state) of many sequences.

A sequence is ``prompt + completion`` token ids. The completion token at position ``t`` is scored
from the logits at ``t - 1`` (t >= 1), as TRL's shifted labels do. Sequences are right-padded, masked
from their real lengths (never ``id != pad``: SmolLM2 has pad == eos), grouped longest first into
batches bounded by a padded-token budget. For architectures whose logits are exactly
``lm_head(last_hidden_state)`` only the scored positions go through the head; log-softmax and sums
are float32 whatever the model's dtype.

The same forward also yields, at no extra model cost, the mean of the last layer's hidden states over
the completion tokens: a few hundred floats per sequence that ``likely_flipped``'s reward probe learns
from (stored float16).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any

import numpy as np

Seq = tuple[list[int], list[int]]  # (kept prompt ids, kept completion ids)

# architectures whose logits are exactly ``lm_head(last_hidden_state)`` (no softcapping/scaling):
# for them only the scored positions go through the head. Others get the full forward.
PLAIN_HEAD_TYPES = frozenset({"llama", "mistral", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "phi3", "olmo",
                              "olmo2", "smollm3", "mixtral", "starcoder2", "stablelm"})


def make_batches(lengths: list[int], batch_tokens: int, max_batch: int) -> list[list[int]]:
    """Indices grouped into batches, longest first, with padded size (n * longest) <= batch_tokens."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    cur: list[int] = []
    for i in order:
        longest = lengths[cur[0]] if cur else lengths[i]
        if cur and ((len(cur) + 1) * longest > batch_tokens or len(cur) >= max_batch):
            batches.append(cur)
            cur = []
        cur.append(i)
    if cur:
        batches.append(cur)
    return batches


def hidden_size(model: Any) -> int:
    return int(model.get_input_embeddings().weight.shape[1])


@contextmanager
def _phase(timings: dict[str, float] | None, name: str, device: Any):
    """Add the wall time of the block to ``timings[name]`` (CUDA work is synchronised first)."""
    if timings is None:
        yield
        return
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)
    t0 = time.perf_counter()
    yield
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    timings[name] = timings.get(name, 0.0) + time.perf_counter() - t0


def chunked_head(model: Any) -> bool:
    """Whether :func:`sequence_logps` computes only the completion tokens' logits, ``head_chunk`` tokens at a time
    (a decoder of ``PLAIN_HEAD_TYPES`` with its output embeddings), so that a batch's memory is the forward's
    activations, not the whole batch's logits over the vocabulary.

    Args:
        model: a causal LM (transformers).

    Returns:
        True where the head is applied in chunks.

    Example:
        >>> class _Cfg: model_type = "gpt2"
        >>> class _M: config = _Cfg()
        >>> chunked_head(_M())
        False
    """
    return getattr(model.config, "model_type", None) in PLAIN_HEAD_TYPES and model.get_output_embeddings() is not None


def sequence_logps(model: Any, seqs: list[Seq], *, batch_tokens: int = 4096, max_batch: int = 64,
                   pad_id: int = 0, head_chunk: int = 1024, pool: bool = False,
                   timings: dict[str, float] | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """``(stats, pooled)``: stats ``(n, 3)`` float64 = summed completion log-prob, scored tokens, min
    token log-prob (0 if none); pooled ``(n, hidden)`` float16 = mean last-layer hidden state over the
    completion tokens (zeros for an empty completion), or None without ``pool``.

    ``timings`` (optional) accumulates seconds per phase: ``batching``, ``forward``, ``log_softmax``,
    ``pooling``.
    """
    import torch

    out = np.zeros((len(seqs), 3), dtype=np.float64)
    pooled = np.zeros((len(seqs), hidden_size(model)), dtype=np.float16) if pool else None
    if not seqs:
        return out, pooled
    device = next(model.parameters()).device
    lengths = [len(p) + len(c) for p, c in seqs]
    plain = chunked_head(model)
    decoder = model.get_decoder() if plain else None
    head = model.get_output_embeddings() if plain else None
    for batch in make_batches(lengths, batch_tokens, max_batch):
        T = max(lengths[i] for i in batch)
        if T == 0:
            continue
        with _phase(timings, "batching", device):
            ids = torch.full((len(batch), T), pad_id, dtype=torch.long)
            mask = torch.zeros((len(batch), T), dtype=torch.long)
            weights = torch.zeros((len(batch), T), dtype=torch.float32) if pool else None
            rows, pos, tgt = [], [], []
            for b, i in enumerate(batch):
                p, c = seqs[i]
                full = p + c
                if full:
                    ids[b, : len(full)] = torch.tensor(full, dtype=torch.long)
                    mask[b, : len(full)] = 1
                if weights is not None and c:
                    weights[b, len(p): len(full)] = 1.0 / len(c)
                for t in range(max(len(p), 1), len(full)):
                    rows.append(b)
                    pos.append(t - 1)
                    tgt.append(full[t])
            rows_t = torch.tensor(rows, dtype=torch.long, device=device)
            pos_t = torch.tensor(pos, dtype=torch.long, device=device)
            tgt_t = torch.tensor(tgt, dtype=torch.long, device=device)
            ids_d, mask_d = ids.to(device), mask.to(device)
        lp = torch.empty(len(tgt), dtype=torch.float32, device=device)
        with torch.inference_mode():
            with _phase(timings, "forward", device):
                if plain:
                    hidden = decoder(input_ids=ids_d, attention_mask=mask_d).last_hidden_state
                    sel = hidden[rows_t, pos_t]
                else:
                    res = model(input_ids=ids_d, attention_mask=mask_d, output_hidden_states=pool)
                    logits = res.logits
                    hidden = res.hidden_states[-1] if pool else None
            with _phase(timings, "log_softmax", device):
                for s in range(0, len(tgt), head_chunk):
                    if plain:
                        chunk = head(sel[s: s + head_chunk]).float()
                    else:
                        chunk = logits[rows_t[s: s + head_chunk], pos_t[s: s + head_chunk]].float()
                    lp[s: s + head_chunk] = chunk.log_softmax(-1).gather(1, tgt_t[s: s + head_chunk, None])[:, 0]
            if pooled is not None:
                with _phase(timings, "pooling", device):
                    w = weights.to(device)
                    pooled_b = torch.einsum("bt,btd->bd", w, hidden.float()).cpu().numpy()
                    pooled[batch] = pooled_b.astype(np.float16)
        if not tgt:
            continue
        lp_np = lp.double().cpu().numpy()
        rows_np = np.asarray(rows)
        sums = np.bincount(rows_np, weights=lp_np, minlength=len(batch))
        counts = np.bincount(rows_np, minlength=len(batch))
        mins = np.zeros(len(batch))
        np.minimum.at(mins, rows_np, lp_np)
        out[batch] = np.stack([sums, counts, mins], axis=1)
    return out, pooled

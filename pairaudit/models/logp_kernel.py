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
from collections.abc import Callable
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


def out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` says the device ran out of memory (CUDA's ``OutOfMemoryError``; the MPS and CPU allocators'
    RuntimeErrors), so that smaller batches may succeed.

    Args:
        exc: an exception raised by a forward.

    Returns:
        True for an out-of-memory error.

    Example:
        >>> out_of_memory(RuntimeError("MPS backend out of memory (MPS allocated: 7.9 GB)"))
        True
        >>> out_of_memory(ValueError("bad shape"))
        False
    """
    import torch

    oom = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError
    text = str(exc).lower()
    return isinstance(exc, oom) or (isinstance(exc, RuntimeError)
                                    and ("out of memory" in text or "can't allocate memory" in text))


def _batch_arrays(seqs: list[Seq], batch: list[int], T: int, pad_id: int, pool: bool
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray, np.ndarray, np.ndarray]:
    """One batch's right-padded ``ids`` and ``mask`` ``(len(batch), T)``, the completion-mean ``weights`` (with
    ``pool``), and per scored token (row by row, position by position) its row, the position whose logits score it
    (``t - 1``) and its id: numpy, a slice per sequence (no loop over tokens)."""
    n = len(batch)
    ids = np.full((n, T), pad_id, dtype=np.int64)
    mask = np.zeros((n, T), dtype=np.int64)
    weights = np.zeros((n, T), dtype=np.float32) if pool else None
    rows, pos, tgt = [], [], []
    for b, i in enumerate(batch):
        p, c = seqs[i]
        full = np.asarray(p + c, dtype=np.int64)
        end = len(full)
        ids[b, :end] = full
        mask[b, :end] = 1
        if weights is not None and c:
            weights[b, len(p): end] = 1.0 / len(c)
        start = max(len(p), 1)
        if end > start:
            rows.append(np.full(end - start, b, dtype=np.int64))
            pos.append(np.arange(start - 1, end - 1, dtype=np.int64))
            tgt.append(full[start:])
    none = np.zeros(0, dtype=np.int64)
    return (ids, mask, weights, np.concatenate(rows) if rows else none, np.concatenate(pos) if pos else none,
            np.concatenate(tgt) if tgt else none)


def _score_batch(model: Any, seqs: list[Seq], batch: list[int], T: int, out: np.ndarray, pooled: np.ndarray | None,
                 pad_id: int, head_chunk: int, timings: dict[str, float] | None) -> None:
    """Score one batch of ``seqs`` (indices ``batch``, padded to ``T``) into ``out`` and ``pooled``."""
    import torch

    device = next(model.parameters()).device
    plain = chunked_head(model)
    with _phase(timings, "batching", device):
        ids, mask, weights, rows, pos, tgt = _batch_arrays(seqs, batch, T, pad_id, pooled is not None)
        rows_t, pos_t, tgt_t = (torch.from_numpy(a).to(device) for a in (rows, pos, tgt))
        ids_d, mask_d = torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device)
    lp = torch.empty(len(tgt), dtype=torch.float32, device=device)
    with torch.inference_mode():
        with _phase(timings, "forward", device):
            if plain:
                hidden = model.get_decoder()(input_ids=ids_d, attention_mask=mask_d).last_hidden_state
                sel = hidden[rows_t, pos_t]
            else:
                res = model(input_ids=ids_d, attention_mask=mask_d, output_hidden_states=pooled is not None)
                logits = res.logits
                hidden = res.hidden_states[-1] if pooled is not None else None
        with _phase(timings, "log_softmax", device):
            head = model.get_output_embeddings() if plain else None
            for s in range(0, len(tgt), head_chunk):
                if plain:
                    chunk = head(sel[s: s + head_chunk]).float()
                else:
                    chunk = logits[rows_t[s: s + head_chunk], pos_t[s: s + head_chunk]].float()
                lp[s: s + head_chunk] = chunk.log_softmax(-1).gather(1, tgt_t[s: s + head_chunk, None])[:, 0]
        if pooled is not None:
            with _phase(timings, "pooling", device):
                pooled_b = torch.einsum("bt,btd->bd", torch.from_numpy(weights).to(device), hidden.float())
                pooled[batch] = pooled_b.cpu().numpy().astype(np.float16)
    if not len(tgt):
        return
    lp_np = lp.double().cpu().numpy()
    sums = np.bincount(rows, weights=lp_np, minlength=len(batch))
    counts = np.bincount(rows, minlength=len(batch))
    mins = np.zeros(len(batch))
    np.minimum.at(mins, rows, lp_np)
    out[batch] = np.stack([sums, counts, mins], axis=1)


def sequence_logps(model: Any, seqs: list[Seq], *, batch_tokens: int = 4096, max_batch: int = 64,
                   pad_id: int = 0, head_chunk: int = 1024, pool: bool = False,
                   timings: dict[str, float] | None = None,
                   on_oom: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """``(stats, pooled)``: stats ``(n, 3)`` float64 = summed completion log-prob, scored tokens, min
    token log-prob (0 if none); pooled ``(n, hidden)`` float16 = mean last-layer hidden state over the
    completion tokens (zeros for an empty completion), or None without ``pool``.

    A batch the device has no memory for (``out_of_memory``) is not an error while it holds more than one
    sequence: the token budget becomes half the failed batch's padded tokens, the rest of the sequences are
    batched again with it (the same order) and ``on_oom(batch_tokens, max_batch)`` is told the new budget; one
    sequence alone that does not fit raises.

    ``timings`` (optional) accumulates seconds per phase: ``batching``, ``forward``, ``log_softmax``,
    ``pooling``.
    """
    out = np.zeros((len(seqs), 3), dtype=np.float64)
    pooled = np.zeros((len(seqs), hidden_size(model)), dtype=np.float16) if pool else None
    lengths = [len(p) + len(c) for p, c in seqs]
    todo = make_batches(lengths, batch_tokens, max_batch)
    k = 0
    while k < len(todo):
        batch = todo[k]
        T = max(lengths[i] for i in batch)
        try:
            if T:
                _score_batch(model, seqs, batch, T, out, pooled, pad_id, head_chunk, timings)
        except Exception as exc:
            if len(batch) == 1 or not out_of_memory(exc):
                raise
            _free_cache(model)
            batch_tokens = max(1, min(batch_tokens, len(batch) * T) // 2)  # half the batch that failed
            rest = [i for b in todo[k:] for i in b]  # longest first already: re-batched in the same order
            todo = todo[:k] + [[rest[j] for j in b] for b in make_batches([lengths[i] for i in rest], batch_tokens,
                                                                          max_batch)]
            if on_oom is not None:
                on_oom(batch_tokens, max_batch)
            continue
        k += 1
    return out, pooled


def _free_cache(model: Any) -> None:
    """Give the failed batch's memory back to the device (CUDA's caching allocator keeps it otherwise)."""
    import torch

    if next(model.parameters()).device.type == "cuda":
        torch.cuda.empty_cache()

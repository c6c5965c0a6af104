"""Reference (and policy) causal-LM log-probabilities exactly as the DPO loss sees them.

For every pair we compute, under a causal LM, the summed log-probability of the chosen and of the
rejected completion given the prompt, over the *same* tokens TRL's ``DPOTrainer`` feeds the loss:
the chat template applied TRL-style, EOS appended to each completion, TRL's truncation
(``max_prompt_length`` / ``max_completion_length`` / ``max_length`` with ``truncation_mode``) and
prompt tokens masked out. A completion token at sequence position 0 (prompt fully truncated) has
no context and, as in TRL (labels shifted by one), is not scored.

Sequences are right-padded and masked with an attention mask built from the real lengths, never
from ``id != pad`` (SmolLM2 has pad == eos, and every completion ends with EOS). Batches are
length-sorted and bounded by a padded-token budget. Only the hidden states of scored positions
go through the LM head (for architectures where the head is a plain linear layer); log-softmax
and sums are computed in float32 whatever the model's dtype.

Per-sequence results (sum of log-probs, scored tokens, minimum token log-prob) are cached on disk
under ``cache_dir/reference/<model sha>-<precision>/`` keyed by a hash of the kept prompt and
completion token ids, so a rerun with other thresholds computes nothing and does not even load
the model. Shards are written to a temporary file and renamed into place.

Heavy imports (torch, transformers) happen inside functions.
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pairaudit.errors import ConfigError, ModelError, require
from pairaudit.models.loading import ModelSpec, hub_error, resolve_model
from pairaudit.types import Pair

PRECISIONS = ("auto", "fp32", "bf16", "fp16")
KEY_BYTES = 16
# architectures whose logits are exactly ``lm_head(last_hidden_state)`` (no softcapping/scaling):
# for them only the scored positions go through the head. Others get the full forward.
PLAIN_HEAD_TYPES = frozenset({"llama", "mistral", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "phi3", "olmo",
                              "olmo2", "smollm3", "mixtral", "starcoder2", "stablelm"})

Seq = tuple[list[int], list[int]]  # (kept prompt ids, kept completion ids)


# ------------------------------------------------------------------------------------------------
# device / precision
# ------------------------------------------------------------------------------------------------
def cpu_supports_bf16() -> bool:
    """True when oneDNN has native bf16 kernels (AVX-512 BF16 / AMX). Without them PyTorch emulates
    bf16 and a forward pass is several times *slower* than fp32 (measured here: AVX2-only CPU)."""
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except Exception:  # noqa: BLE001 - private op, absent on some builds
        return False


def pick_device(device: str = "auto") -> str:
    import torch

    if device in (None, "", "auto"):
        if torch.cuda.is_available():
            return "cuda"
        return "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"--device {device} was requested but CUDA is not available",
                          fix="use --device cpu (or auto), or install a CUDA build of torch")
    return device


def pick_precision(precision: str, device: str) -> str:
    """``auto``: bf16 on CUDA with bf16 support (else fp32), bf16 on CPUs with native bf16 kernels,
    else fp32. fp16 is only used when asked for (summed log-probs lose precision in half types)."""
    if precision not in PRECISIONS:
        raise ConfigError(f"unknown precision {precision!r}", expected=" | ".join(PRECISIONS))
    if precision != "auto":
        return precision
    import torch

    if device.startswith("cuda"):
        return "bf16" if torch.cuda.is_bf16_supported() else "fp32"
    if device == "cpu":
        return "bf16" if cpu_supports_bf16() else "fp32"
    return "fp32"


def torch_dtype(precision: str) -> Any:
    import torch

    return {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]


# ------------------------------------------------------------------------------------------------
# loading
# ------------------------------------------------------------------------------------------------
def _dequantized_dir(cache_dir: Path | None, spec: ModelSpec) -> Path | None:
    if cache_dir is None or not spec.gguf_file or not spec.sha256:
        return None
    return Path(cache_dir) / "reference" / "models" / spec.sha256[:32]


def load_causal_lm(spec: ModelSpec, *, cache_dir: Path | None = None, device: str = "cpu",
                   precision: str = "fp32", trust_remote_code: bool = False,
                   log: Callable[[str], None] | None = None) -> Any:
    """Load a causal LM (HF folder, hub id or GGUF file) in eval mode on ``device``/``precision``.

    A GGUF file is dequantized by transformers (tens of seconds for 135M parameters); the
    dequantized weights are saved once under ``cache_dir/reference/models/<sha>`` and reloaded
    from there (well under a second).
    """
    require("torch", "models", "reference-model scoring")
    from transformers import AutoModelForCausalLM

    dtype = torch_dtype(precision)
    saved = _dequantized_dir(cache_dir, spec)
    try:
        if saved is not None and (saved / "config.json").exists():
            model = AutoModelForCausalLM.from_pretrained(str(saved), dtype=dtype)
        else:
            kwargs = spec.from_pretrained_kwargs()
            if not spec.gguf_file:
                kwargs["trust_remote_code"] = trust_remote_code
            if log and spec.gguf_file:
                log(f"dequantizing GGUF {spec.display} (once; cached under {saved})")
            model = AutoModelForCausalLM.from_pretrained(spec.path, **kwargs)
            if saved is not None:
                _save_dequantized(model, saved)
            model = model.to(dtype)
    except Exception as exc:  # noqa: BLE001 - transformers raises many types
        if isinstance(exc, ModelError):
            raise
        raise hub_error(spec, "model", exc) from exc
    model.eval()
    return model.to(device)


def _save_dequantized(model: Any, saved: Path) -> None:
    """Save a GGUF-loaded (already dequantized, fp32) model as safetensors; best effort."""
    import shutil

    tmp = saved.with_name(saved.name + f".tmp{uuid.uuid4().hex[:8]}")
    try:
        model.hf_quantizer = None  # weights are plain tensors; the gguf marker only blocks saving
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(str(tmp))
        os.replace(tmp, saved)
    except Exception:  # noqa: BLE001 - caching is an optimisation only
        shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# the log-prob kernel
# ------------------------------------------------------------------------------------------------
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


def sequence_logps(model: Any, seqs: list[Seq], *, batch_tokens: int = 4096, max_batch: int = 64,
                   pad_id: int = 0, head_chunk: int = 1024) -> np.ndarray:
    """``(n, 3)`` float64: summed completion log-prob, scored tokens, min token log-prob (0 if none).

    Sequence ``prompt + completion`` is right-padded; the completion token at position ``t`` is
    scored from the logits at ``t - 1`` (t >= 1).
    """
    import torch

    out = np.zeros((len(seqs), 3), dtype=np.float64)
    if not seqs:
        return out
    device = next(model.parameters()).device
    lengths = [len(p) + len(c) for p, c in seqs]
    plain = getattr(model.config, "model_type", None) in PLAIN_HEAD_TYPES and model.get_output_embeddings() is not None
    decoder = model.get_decoder() if plain else None
    head = model.get_output_embeddings() if plain else None
    for batch in make_batches(lengths, batch_tokens, max_batch):
        T = max(lengths[i] for i in batch)
        if T == 0:
            continue
        ids = torch.full((len(batch), T), pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), T), dtype=torch.long)
        rows, pos, tgt = [], [], []
        for b, i in enumerate(batch):
            p, c = seqs[i]
            full = p + c
            if full:
                ids[b, : len(full)] = torch.tensor(full, dtype=torch.long)
                mask[b, : len(full)] = 1
            for t in range(max(len(p), 1), len(full)):
                rows.append(b)
                pos.append(t - 1)
                tgt.append(full[t])
        if not tgt:
            continue
        rows_t = torch.tensor(rows, dtype=torch.long, device=device)
        pos_t = torch.tensor(pos, dtype=torch.long, device=device)
        tgt_t = torch.tensor(tgt, dtype=torch.long, device=device)
        with torch.inference_mode():
            ids_d, mask_d = ids.to(device), mask.to(device)
            if plain:
                hidden = decoder(input_ids=ids_d, attention_mask=mask_d).last_hidden_state
                sel = hidden[rows_t, pos_t]
                lp = torch.empty(len(tgt), dtype=torch.float32, device=device)
                for s in range(0, len(tgt), head_chunk):
                    logits = head(sel[s: s + head_chunk]).float()
                    lp[s: s + head_chunk] = logits.log_softmax(-1).gather(1, tgt_t[s: s + head_chunk, None])[:, 0]
            else:
                logits = model(input_ids=ids_d, attention_mask=mask_d).logits
                lp = torch.empty(len(tgt), dtype=torch.float32, device=device)
                for s in range(0, len(tgt), head_chunk):
                    chunk = logits[rows_t[s: s + head_chunk], pos_t[s: s + head_chunk]].float()
                    lp[s: s + head_chunk] = chunk.log_softmax(-1).gather(1, tgt_t[s: s + head_chunk, None])[:, 0]
        lp_np = lp.double().cpu().numpy()
        rows_np = np.asarray(rows)
        sums = np.bincount(rows_np, weights=lp_np, minlength=len(batch))
        counts = np.bincount(rows_np, minlength=len(batch))
        mins = np.zeros(len(batch))
        np.minimum.at(mins, rows_np, lp_np)
        for b, i in enumerate(batch):
            out[i] = (sums[b], counts[b], mins[b])
    return out


# ------------------------------------------------------------------------------------------------
# on-disk cache of per-sequence results
# ------------------------------------------------------------------------------------------------
def seq_key(prompt: list[int], completion: list[int]) -> bytes:
    h = hashlib.blake2b(digest_size=KEY_BYTES)
    h.update(len(prompt).to_bytes(8, "little"))
    h.update(np.asarray(list(prompt) + list(completion), dtype=np.int64).tobytes())
    return h.digest()


class LogpCache:
    """key -> (sum, count, min) store made of immutable ``.npz`` shards (temp file + rename)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._keys = np.empty(0, dtype=f"S{KEY_BYTES}")
        self._vals = np.empty((0, 3), dtype=np.float64)
        self._pending: dict[bytes, np.ndarray] = {}
        if folder is not None and folder.is_dir():
            keys, vals = [], []
            for path in sorted(folder.glob("*.npz")):
                try:
                    with np.load(path) as z:
                        k, v = z["keys"], z["vals"]
                except (OSError, ValueError, KeyError):  # damaged shard: recompute
                    continue
                if k.ndim == 2 and k.shape[1] == KEY_BYTES and v.shape == (len(k), 3):
                    keys.append(np.ascontiguousarray(k).view(f"S{KEY_BYTES}").ravel())
                    vals.append(v)
            if keys:
                allk, allv = np.concatenate(keys), np.concatenate(vals)
                order = np.argsort(allk, kind="stable")
                self._keys, self._vals = allk[order], allv[order]

    def __len__(self) -> int:
        return len(self._keys) + len(self._pending)

    def get(self, keys: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """(hit mask, values) for ``keys``."""
        vals = np.zeros((len(keys), 3))
        hit = np.zeros(len(keys), dtype=bool)
        if len(self._keys) and keys:
            q = np.array(keys, dtype=f"S{KEY_BYTES}")
            pos = np.minimum(np.searchsorted(self._keys, q), len(self._keys) - 1)
            hit = self._keys[pos] == q
            vals[hit] = self._vals[pos[hit]]
        for i, k in enumerate(keys):
            if not hit[i] and k in self._pending:
                vals[i], hit[i] = self._pending[k], True
        return hit, vals

    def put(self, keys: list[bytes], vals: np.ndarray) -> None:
        for k, v in zip(keys, vals):
            self._pending[k] = np.asarray(v, dtype=np.float64)
        if self.folder is None or not keys:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{os.getpid()}-{uuid.uuid4().hex}.npz"
        tmp = path.with_name(path.name + ".tmp")
        karr = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), KEY_BYTES)
        with open(tmp, "wb") as fh:
            np.savez(fh, keys=karr, vals=np.asarray(vals, dtype=np.float64))
        os.replace(tmp, path)


# ------------------------------------------------------------------------------------------------
# per-pair scoring
# ------------------------------------------------------------------------------------------------
@dataclass
class PairLogps:
    """Per-pair arrays (NaN where a pair was not scored)."""

    logp_chosen: np.ndarray
    logp_rejected: np.ndarray
    tokens_chosen: np.ndarray
    tokens_rejected: np.ndarray
    min_chosen: np.ndarray
    min_rejected: np.ndarray
    skipped: dict[int, str] = field(default_factory=dict)  # index -> reason

    @classmethod
    def empty(cls, n: int) -> PairLogps:
        nan = lambda: np.full(n, np.nan)  # noqa: E731
        return cls(nan(), nan(), nan(), nan(), nan(), nan())

    @property
    def margin(self) -> np.ndarray:
        return self.logp_chosen - self.logp_rejected

    @property
    def mean_chosen(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.tokens_chosen > 0, self.logp_chosen / self.tokens_chosen, np.nan)

    @property
    def mean_rejected(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.tokens_rejected > 0, self.logp_rejected / self.tokens_rejected, np.nan)


def pretokenized_parts(pair: Pair) -> tuple[list[int], list[int], list[int]]:
    """(prompt, chosen completion, rejected completion) ids of a pre-tokenized pair.

    With ``prompt_input_ids`` the ``*_input_ids`` are completions (TRL >= 0.12 preprocessing);
    with ``*_labels`` the prompt is the leading ``-100`` labels; otherwise the prompt is the common
    prefix of chosen and rejected. Positions whose ``*_attention_mask`` is 0 are dropped.
    """
    ids = pair.ids or {}

    def side(name: str) -> list[int]:
        seq = list(ids.get(f"{name}_input_ids") or [])
        m = ids.get(f"{name}_attention_mask")
        if m is not None and len(m) == len(seq):
            seq = [t for t, keep in zip(seq, m) if keep]
        return seq

    c, r = side("chosen"), side("rejected")
    if "prompt_input_ids" in ids:
        return side("prompt"), c, r
    labels = ids.get("chosen_labels")
    if labels is not None and len(labels) == len(ids.get("chosen_input_ids") or []):
        k = 0
        while k < len(labels) and labels[k] == -100:
            k += 1
        k = min(k, len(c))
        if c[:k] == r[:k]:
            return c[:k], c[k:], r[k:]
    k = 0
    while k < min(len(c), len(r)) and c[k] == r[k]:
        k += 1
    if k == len(c) or k == len(r):  # identical or prefix pair: keep at least one completion token
        k = max(0, min(len(c), len(r)) - 1)
    return c[:k], c[k:], r[k:]


class LogpScorer:
    """Summed completion log-probs of pairs under one causal LM, as the DPO loss sees them.

    ``model_arg``: None = the bundled SmolLM2-135M-Instruct GGUF; else an HF folder, hub id or
    ``.gguf`` file. The model's own tokenizer renders and tokenizes pairs (``dpo_tokenizer`` to
    force another one, e.g. the reference's tokenizer for a policy). Counters: ``n_cached`` /
    ``n_computed`` (sequences), ``tokens_computed``, ``seconds``.
    """

    def __init__(self, model_arg: str | None = None, *, cache_dir: Path | None = None, device: str = "auto",
                 precision: str = "auto", trust_remote_code: bool = False, max_length: int | None = 1024,
                 max_prompt_length: int | None = 512, max_completion_length: int | None = None,
                 truncation_mode: str = "keep_end", dpo_tokenizer: Any = None,
                 batch_tokens: int | None = None, max_batch: int = 64,
                 log: Callable[[str], None] | None = None, role: str = "reference") -> None:
        from pairaudit.tokenize import DPOTokenizer, load_tokenizer

        self.role = role
        self.log = log or (lambda msg: None)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.trust_remote_code = trust_remote_code
        self.spec = resolve_model(model_arg)
        if dpo_tokenizer is None:
            tok, _ = load_tokenizer(model_arg, self.cache_dir, trust_remote_code=trust_remote_code)
            dpo_tokenizer = DPOTokenizer(tok, self.spec, max_length=max_length, max_prompt_length=max_prompt_length,
                                         max_completion_length=max_completion_length,
                                         truncation_mode=truncation_mode)
        self.dtok = dpo_tokenizer
        self.device = pick_device(device)
        self.precision = pick_precision(precision, self.device)
        self.batch_tokens = batch_tokens or (32768 if self.device.startswith("cuda") else 4096)
        self.max_batch = max_batch
        self._model: Any = None
        self.n_cached = 0
        self.n_computed = 0
        self.tokens_computed = 0
        self.seconds = 0.0
        self.tokens_per_s: float | None = None  # measured
        ident = self.spec.sha256 or hashlib.sha256(self.spec.display.encode()).hexdigest()
        self.model_key = f"{ident[:32]}-{self.precision}"
        self.cache = LogpCache(self.cache_dir / "reference" / self.model_key if self.cache_dir else None)

    # -- model ---------------------------------------------------------------------------------
    @property
    def model(self) -> Any:
        if self._model is None:
            t0 = time.perf_counter()
            self._model = load_causal_lm(self.spec, cache_dir=self.cache_dir, device=self.device,
                                         precision=self.precision, trust_remote_code=self.trust_remote_code,
                                         log=self.log)
            vocab = self._model.get_input_embeddings().weight.shape[0]
            if vocab < self.dtok.vocab_size:
                raise ModelError(
                    f"the {self.role} model {self.spec.display} has {vocab} embeddings but the tokenizer used "
                    f"for it has {self.dtok.vocab_size} tokens",
                    expected="a model trained with this tokenizer", fix=f"pass a matching --{self.role}")
            self.log(f"{self.role}: loaded {self.spec.display} on {self.device}/{self.precision} "
                     f"in {time.perf_counter() - t0:.1f}s")
        return self._model

    def set_model(self, model: Any) -> None:
        """Use an already-built model (tests, notebooks); it must match ``precision``."""
        self._model = model.eval()

    def to_json(self) -> dict[str, Any]:
        return {**self.spec.to_json(), "device": self.device, "precision": self.precision}

    # -- tokens --------------------------------------------------------------------------------
    def sequences(self, pairs: list[Pair], encoded: list[Any] | None = None, *,
                  pretokenized_ok: bool = True) -> tuple[list[tuple[Seq, Seq] | None], dict[int, str]]:
        """Kept (prompt, completion) token lists for chosen and rejected of every pair.

        ``encoded``: EncodedPairs from the training tokenizer, used when they come from this same
        tokenizer (saves re-tokenizing). ``pretokenized_ok``: pre-tokenized pairs are scored only if
        this model's tokenizer is the training tokenizer.
        """
        from pairaudit.tokenize import kept_sequence

        mode = self.dtok.truncation_mode
        out: list[tuple[Seq, Seq] | None] = [None] * len(pairs)
        skipped: dict[int, str] = {}
        todo: list[int] = []
        for i, pair in enumerate(pairs):
            enc = encoded[i] if encoded is not None and i < len(encoded) else None
            if enc is not None:
                out[i] = (kept_sequence(enc.prompt_ids, enc.chosen_ids, enc.chosen_kept, mode),
                          kept_sequence(enc.prompt_ids, enc.rejected_ids, enc.rejected_kept, mode))
            elif pair.pretokenized:
                if not pretokenized_ok:
                    skipped[i] = (f"pre-tokenized pair: its ids come from the training tokenizer, not the "
                                  f"{self.role} tokenizer {self.dtok.display}")
                    continue
                p, c, r = pretokenized_parts(pair)
                out[i] = (kept_sequence(p, c, self.dtok.kept(len(p), len(c)), mode),
                          kept_sequence(p, r, self.dtok.kept(len(p), len(r)), mode))
            else:
                todo.append(i)
        if todo:
            try:
                encs = self.dtok.encode_pairs([pairs[i] for i in todo])
            except ModelError:
                encs = []
                for i in todo:  # render one by one so a single bad row does not stop the batch
                    try:
                        encs.append(self.dtok.encode_pairs([pairs[i]])[0])
                    except ModelError as exc:
                        encs.append(None)
                        skipped[i] = str(exc).splitlines()[0]
            for i, enc in zip(todo, encs):
                if enc is None:
                    continue
                out[i] = (kept_sequence(enc.prompt_ids, enc.chosen_ids, enc.chosen_kept, mode),
                          kept_sequence(enc.prompt_ids, enc.rejected_ids, enc.rejected_kept, mode))
        return out, skipped

    # -- scoring -------------------------------------------------------------------------------
    def pending(self, seqs: list[Seq]) -> tuple[int, int]:
        """(sequences, tokens) among ``seqs`` that are not cached yet (what scoring will compute)."""
        keys = [seq_key(p, c) for p, c in seqs]
        hit, _ = self.cache.get(keys)
        miss = {k: len(seqs[i][0]) + len(seqs[i][1]) for i, k in enumerate(keys) if not hit[i]}
        return len(miss), sum(miss.values())

    def estimate_seconds(self, n_tokens: int) -> float | None:
        return n_tokens / self.tokens_per_s if self.tokens_per_s else None

    def score_seqs(self, seqs: list[Seq]) -> np.ndarray:
        """``(n, 3)``: sum log-prob, scored tokens, min token log-prob; cached by content hash."""
        keys = [seq_key(p, c) for p, c in seqs]
        hit, vals = self.cache.get(keys)
        self.n_cached += int(hit.sum())
        miss = [i for i in range(len(seqs)) if not hit[i]]
        # identical sequences inside one call are computed once
        uniq: dict[bytes, int] = {}
        for i in miss:
            uniq.setdefault(keys[i], i)
        todo = list(uniq.values())
        if todo:
            model = self.model
            t0 = time.perf_counter()
            pad = self.dtok.pad_id if self.dtok.pad_id is not None else (self.dtok.eos_id or 0)
            res = sequence_logps(model, [seqs[i] for i in todo], batch_tokens=self.batch_tokens,
                                 max_batch=self.max_batch, pad_id=pad)
            dt = time.perf_counter() - t0
            ntok = sum(len(seqs[i][0]) + len(seqs[i][1]) for i in todo)
            self.seconds += dt
            self.tokens_computed += ntok
            self.n_computed += len(todo)
            if self.seconds > 0:
                self.tokens_per_s = self.tokens_computed / self.seconds
            self.cache.put([keys[i] for i in todo], res)
            by_key = {keys[i]: res[j] for j, i in enumerate(todo)}
            for i in miss:
                vals[i] = by_key[keys[i]]
        return vals

    def score_pairs(self, pairs: list[Pair], encoded: list[Any] | None = None, *, pretokenized_ok: bool = True,
                    seqs: list[tuple[Seq, Seq] | None] | None = None) -> PairLogps:
        if seqs is None:
            seqs, skipped = self.sequences(pairs, encoded, pretokenized_ok=pretokenized_ok)
        else:
            skipped = {}
        res = PairLogps.empty(len(pairs))
        res.skipped = skipped
        idx = [i for i, s in enumerate(seqs) if s is not None]
        flat: list[Seq] = []
        for i in idx:
            flat.extend(seqs[i])  # type: ignore[arg-type]
        vals = self.score_seqs(flat)
        for j, i in enumerate(idx):
            c, r = vals[2 * j], vals[2 * j + 1]
            res.logp_chosen[i], res.tokens_chosen[i], res.min_chosen[i] = c
            res.logp_rejected[i], res.tokens_rejected[i], res.min_rejected[i] = r
        return res

    def measure_speed(self, n_tokens: int = 256) -> float:
        """Time one forward of ``n_tokens`` tokens (after a tiny warm-up) -> tokens/s estimate."""
        rng = np.random.default_rng(0)
        ids = rng.integers(0, self.dtok.vocab_size, size=n_tokens).tolist()
        sequence_logps(self.model, [([ids[0]], ids[1:16])], pad_id=0)
        t0 = time.perf_counter()
        sequence_logps(self.model, [([ids[0]], ids[1:])], pad_id=0)
        rate = n_tokens / max(time.perf_counter() - t0, 1e-9)
        if self.tokens_per_s is None:
            self.tokens_per_s = rate
        return rate


def dpo_logits(beta: float, policy: PairLogps, reference: PairLogps) -> np.ndarray:
    """``beta * ((logpi_c - logref_c) - (logpi_r - logref_r))`` per pair (NaN where unscored)."""
    return beta * ((policy.logp_chosen - reference.logp_chosen) - (policy.logp_rejected - reference.logp_rejected))

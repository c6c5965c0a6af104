"""Reference (and policy) causal-LM log-probabilities exactly as the DPO loss sees them.

For every pair we compute, under a causal LM, the summed log-probability of the chosen and of the
rejected completion given the prompt, over the *same* tokens the trainer feeds the loss: the chat
template applied TRL-style, EOS appended to each completion, the trainer profile's truncation and
prompt tokens masked out (``pairaudit.trainer.tokenizer``). The kernel is ``logp_kernel.sequence_logps``; it
also returns each completion's mean last-layer hidden state, which ``likely_flipped``'s reward probe
uses.

Per-sequence results (sum of log-probs, scored tokens, minimum token log-prob, pooled hidden state)
are cached on disk under ``cache_dir/reference/<model sha>-<precision>-v2/`` keyed by a hash of the
kept prompt and completion token ids (``logp_cache``), so a rerun with other thresholds computes
nothing and does not even load the model.

Heavy imports (torch, transformers) happen inside functions.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pairaudit.datatypes import Pair
from pairaudit.errors import ModelError
from pairaudit.models.causal_lm import load_causal_lm
from pairaudit.models.device import pick_device, pick_precision
from pairaudit.models.loading import resolve_model
from pairaudit.models.logp_cache import LogpCache, seq_key
from pairaudit.models.logp_kernel import Seq, sequence_logps

CACHE_VERSION = "v2"  # v2: shards also hold the pooled hidden state


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
    # mean last-layer hidden state of each completion, float16 (n, hidden); NaN rows where unscored
    hidden_chosen: np.ndarray | None = None
    hidden_rejected: np.ndarray | None = None

    @classmethod
    def empty(cls, n: int) -> PairLogps:
        nan = lambda: np.full(n, np.nan)  # noqa: E731
        return cls(nan(), nan(), nan(), nan(), nan(), nan())

    @property
    def margin(self) -> np.ndarray:
        return self.logp_chosen - self.logp_rejected



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
                 batch_tokens: int | None = None, max_batch: int | None = None,
                 log: Callable[[str], None] | None = None, role: str = "reference") -> None:
        from pairaudit.models.tokenizer import load_tokenizer
        from pairaudit.trainer.tokenizer import DPOTokenizer

        self.role = role
        self.log = log or (lambda msg: None)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.trust_remote_code = trust_remote_code
        self.spec = resolve_model(model_arg)
        if dpo_tokenizer is None:
            tok, _ = load_tokenizer(model_arg, self.cache_dir, trust_remote_code=trust_remote_code, option=f"--{role}")
            dpo_tokenizer = DPOTokenizer(tok, self.spec, max_length=max_length, max_prompt_length=max_prompt_length,
                                         max_completion_length=max_completion_length,
                                         truncation_mode=truncation_mode)
        self.dtok = dpo_tokenizer
        self.device = pick_device(device)
        self.precision = pick_precision(precision, self.device)
        self.batch_tokens, self.max_batch = batch_tokens, max_batch  # None: by device and model (``batch_size``)
        self._model: Any = None
        self.n_cached = 0
        self.n_computed = 0
        self.tokens_computed = 0
        self.seconds = 0.0
        self.tokens_per_s: float | None = None  # measured
        # seconds per phase: tokenize, batching, forward, log_softmax, pooling, cache
        self.timings: dict[str, float] = {}
        ident = self.spec.sha256 or hashlib.sha256(self.spec.display.encode()).hexdigest()
        self.model_key = f"{ident[:32]}-{self.precision}-{CACHE_VERSION}"
        self.cache = LogpCache(self.cache_dir / "reference" / self.model_key if self.cache_dir else None,
                               hidden=True)

    # -- model ---------------------------------------------------------------------------------
    @property
    def model(self) -> Any:
        if self._model is None:
            t0 = time.perf_counter()
            self._model = load_causal_lm(self.spec, cache_dir=self.cache_dir, device=self.device,
                                         precision=self.precision, trust_remote_code=self.trust_remote_code,
                                         log=self.log, option=f"--{self.role}")
            vocab = self._model.get_input_embeddings().weight.shape[0]
            if vocab < self.dtok.vocab_size:
                raise ModelError(
                    f"the {self.role} model {self.spec.display} has {vocab} embeddings but the tokenizer used "
                    f"for it has {self.dtok.vocab_size} tokens",
                    expected="a model trained with this tokenizer", fix=f"pass a matching --{self.role}")
            self.log(f"{self.role}: loaded {self.spec.display} on {self.device}/{self.precision} "
                     f"in {time.perf_counter() - t0:.1f}s")
        return self._model

    def batch_size(self) -> tuple[int, int]:
        """Tokens and rows of a batch: as asked, else by device and model. On CUDA, where only the completion
        tokens' logits are computed a chunk at a time (``logp_kernel.chunked_head``: a batch's memory is the
        forward's activations, which grow with the hidden size), 131,072 tokens for the bundled model's hidden size
        (576) and proportionally fewer for wider models (at least 16,384: 18,432 for a 4,096-wide 7B), and 256 rows:
        3x the first pass's tokens/s of 32,768 and 64 on an H100 (docs/performance.md); 32,768 and 64 for a model
        whose full logits are computed; 4,096 and 64 on a CPU. A batch the device has no memory for halves the
        budget for the rest of the scan (``sequence_logps``; logged).

        Returns:
            ``(batch_tokens, max_batch)``.
        """
        from pairaudit.models.logp_kernel import chunked_head, hidden_size

        cuda = self.device.startswith("cuda")
        wide = cuda and chunked_head(self.model)
        tokens = max(16384, min(131072, 131072 * 576 // hidden_size(self.model))) if wide else 32768 if cuda else 4096
        return self.batch_tokens or tokens, self.max_batch or (256 if wide else 64)

    def _smaller_batches(self, tokens: int, rows: int) -> None:
        """``sequence_logps`` ran out of device memory: the rest of the scan uses ``tokens`` and ``rows``."""
        self.batch_tokens, self.max_batch = tokens, rows
        hint = "free device memory or pass --device cpu" if self.device != "cpu" else "free memory or pass fewer --workers"
        self.log(f"{self.role}: out of {self.device} memory; scoring continues with batches of at most {tokens:,} "
                 f"tokens and {rows} rows (slower; {hint} if this repeats)")

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
        from pairaudit.trainer.truncation import kept_sequence

        t0 = time.perf_counter()
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
        self._time("tokenize", t0)
        return out, skipped

    def _time(self, phase: str, t0: float) -> None:
        self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - t0

    # -- scoring -------------------------------------------------------------------------------
    def pending(self, seqs: list[Seq]) -> tuple[int, int]:
        """(sequences, tokens) among ``seqs`` that are not cached yet (what scoring will compute)."""
        keys = [seq_key(p, c) for p, c in seqs]
        hit, _, _ = self.cache.get(keys)
        miss = {k: len(seqs[i][0]) + len(seqs[i][1]) for i, k in enumerate(keys) if not hit[i]}
        return len(miss), sum(miss.values())

    def score_seqs(self, seqs: list[Seq]) -> tuple[np.ndarray, np.ndarray | None]:
        """``(vals, hidden)``: vals ``(n, 3)`` = sum log-prob, scored tokens, min token log-prob; hidden
        ``(n, d)`` float16 pooled completion states (None when nothing was scored); cached by content."""
        t0 = time.perf_counter()
        keys = [seq_key(p, c) for p, c in seqs]
        hit, vals, hid = self.cache.get(keys)
        self._time("cache", t0)
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
            tokens, rows = self.batch_size()
            res, pooled = sequence_logps(model, [seqs[i] for i in todo], batch_tokens=tokens, max_batch=rows,
                                         pad_id=pad, pool=True, timings=self.timings, on_oom=self._smaller_batches)
            dt = time.perf_counter() - t0
            ntok = sum(len(seqs[i][0]) + len(seqs[i][1]) for i in todo)
            self.seconds += dt
            self.tokens_computed += ntok
            self.n_computed += len(todo)
            if self.seconds > 0:
                self.tokens_per_s = self.tokens_computed / self.seconds
            t0 = time.perf_counter()
            self.cache.put([keys[i] for i in todo], res, pooled)
            self._time("cache", t0)
            if hid is None or hid.shape[1] != pooled.shape[1]:
                hid = np.zeros((len(seqs), pooled.shape[1]), np.float16)
            by_key = {keys[i]: j for j, i in enumerate(todo)}
            for i in miss:
                vals[i] = res[by_key[keys[i]]]
                hid[i] = pooled[by_key[keys[i]]]
        return vals, hid

    def score_pairs(self, pairs: list[Pair], encoded: list[Any] | None = None, *, pretokenized_ok: bool = True,
                    seqs: list[tuple[Seq, Seq] | None] | None = None) -> PairLogps:
        if seqs is None:
            seqs, skipped = self.sequences(pairs, encoded, pretokenized_ok=pretokenized_ok)
        else:
            skipped = {}
        res = self.score_sequence_pairs(seqs)
        res.skipped = skipped
        return res

    def score_sequence_pairs(self, seqs: list[tuple[Seq, Seq] | None]) -> PairLogps:
        """Per pair, the chosen and the rejected sequence (``sequences``' output; None: not scored)."""
        res = PairLogps.empty(len(seqs))
        idx = [i for i, s in enumerate(seqs) if s is not None]
        flat: list[Seq] = []
        for i in idx:
            flat.extend(seqs[i])  # type: ignore[arg-type]
        vals, hid = self.score_seqs(flat)
        for j, i in enumerate(idx):
            c, r = vals[2 * j], vals[2 * j + 1]
            res.logp_chosen[i], res.tokens_chosen[i], res.min_chosen[i] = c
            res.logp_rejected[i], res.tokens_rejected[i], res.min_rejected[i] = r
        if hid is not None and idx:
            res.hidden_chosen = np.full((len(seqs), hid.shape[1]), np.nan, np.float16)
            res.hidden_rejected = res.hidden_chosen.copy()
            res.hidden_chosen[idx] = hid[0::2]
            res.hidden_rejected[idx] = hid[1::2]
        return res

    def measure_speed(self, n_tokens: int = 256) -> float:
        """Time one forward of ``n_tokens`` tokens (after a tiny warm-up) -> tokens/s estimate."""
        rng = np.random.default_rng(0)
        ids = rng.integers(0, self.dtok.vocab_size, size=n_tokens).tolist()
        sequence_logps(self.model, [([ids[0]], ids[1:16])], pad_id=0, pool=True)
        t0 = time.perf_counter()
        sequence_logps(self.model, [([ids[0]], ids[1:])], pad_id=0, pool=True)
        rate = n_tokens / max(time.perf_counter() - t0, 1e-9)
        if self.tokens_per_s is None:
            self.tokens_per_s = rate
        return rate


def dpo_logits(beta: float, policy: PairLogps, reference: PairLogps) -> np.ndarray:
    """``beta * ((logpi_c - logref_c) - (logpi_r - logref_r))`` per pair (NaN where unscored)."""
    return beta * ((policy.logp_chosen - reference.logp_chosen) - (policy.logp_rejected - reference.logp_rejected))

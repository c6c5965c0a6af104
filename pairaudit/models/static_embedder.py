"""A static (token-lookup) embedding model distilled offline from the sentence-transformers embedder.

model2vec (PyPI ``model2vec``) turns a sentence-transformers model into a *static* model: every
vocabulary token is passed through the transformer once, the outputs are reduced with PCA (256
dimensions) and weighted (SIF), and a text's embedding is then the mean of its tokens' vectors. No
attention at run time: on 2 CPU cores it embeds thousands of texts a second instead of ~10
(``scripts/bench_dedup.py`` measures it), at the cost of word order and context.

No hub is needed: the model is distilled from the local folder of the source model (by default the
bundled all-MiniLM-L6-v2, ~20 s on 2 cores, needs torch + transformers + ``skeletoken``) the first
time it is asked for, and saved under ``<cache>/static-embedders/<sha256 of the source folder>-<settings>/``
(15 MB). The distillation is deterministic (one forward pass per token, PCA by SVD), so two machines
with the same source model get the same vectors. Without a cache dir it is distilled into memory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pairaudit.cache import cache_write
from pairaudit.errors import ConfigError, ModelError, require

PCA_DIMS = 256
DISTILL_VERSION = "m2v1"  # bump when the distillation settings change (new cache folder)


#: static models distilled in this process that no cache holds (no cache dir, or it could not be written)
_UNSAVED: dict[str, Any] = {}
_ANNOUNCED: set[str] = set()  # the models whose distillation this process has announced
#: static models read from the cache in this process, by folder (a cached model's folder never changes)
_LOADED: dict[str, Any] = {}


def _settings_key(source_sha: str) -> str:
    return f"{source_sha[:16]}-{DISTILL_VERSION}-pca{PCA_DIMS}"


class StaticEmbedder:
    """model2vec static model distilled from ``source_dir`` (a sentence-transformers folder)."""

    def __init__(self, source_dir: Path, source_sha256: str, source_id: str, cache_dir: Path | None = None,
                 batch_size: int = 1024) -> None:
        self.source_dir = Path(source_dir)
        self.source_sha256 = source_sha256
        self.source_id = source_id
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.batch_size = batch_size
        self._model: Any = None
        self.distilled_now = False  # True when this instance had to distil (run-specific; not in report.json)

    @classmethod
    def for_embedder(cls, emb: Any, cache_dir: Path | None, *, purpose: str, fix: str,
                     log: Callable[[str], None] | None = None) -> StaticEmbedder:
        """The static model distilled from ``emb`` (a loaded-lazily ``Embedder``), which must be a local
        folder with a known hash; logs when the first use will distil it."""
        if not emb.local or emb.sha256 is None:
            raise ConfigError(f"{purpose} distils a static model from a local embedder folder; {emb.model_id} is "
                              "a hub id", fix=fix)
        static = cls(emb.path, emb.sha256, emb.model_id, cache_dir=cache_dir)
        key = _settings_key(emb.sha256)
        cached = (static.folder is not None and (static.folder / "model.safetensors").exists()) or key in _UNSAVED
        if log is not None and not cached and key not in _ANNOUNCED:  # said once a process, not once a stage
            _ANNOUNCED.add(key)
            log("distilling the static embedding model from the embedder (once; ~20 s on 2 cores)")
        return static

    @property
    def folder(self) -> Path | None:
        if self.cache_dir is None:
            return None
        return self.cache_dir / "static-embedders" / _settings_key(self.source_sha256)

    def _distil(self) -> Any:
        require("skeletoken", "embed", "distilling the static embedding model (model2vec)")
        require("transformers", "embed", "distilling the static embedding model (model2vec)")
        distill = require("model2vec.distill", "embed", "distilling the static embedding model (model2vec)")
        from pairaudit.quiet import tqdm_off

        try:
            with tqdm_off("model2vec.distill.inference"):  # its per-token bar, "Encoding tokens"
                return distill.distill(str(self.source_dir), pca_dims=PCA_DIMS, device="cpu")
        except Exception as exc:
            raise ModelError(f"could not distil a static model from {self.source_dir}: {type(exc).__name__}: {exc}",
                             expected="a local sentence-transformers folder with a fast (tokenizer.json) tokenizer",
                             fix="use the default embedder, or --embed-mode transformer") from exc

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        m2v = require("model2vec", "embed", "the static embedding model (model2vec)")
        folder = self.folder
        if folder is not None and (folder / "model.safetensors").exists():
            if str(folder) not in _LOADED:  # the stages of one process share one read-only copy
                _LOADED[str(folder)] = m2v.StaticModel.from_pretrained(str(folder))
            self._model = _LOADED[str(folder)]
            return self._model
        key = _settings_key(self.source_sha256)
        if key in _UNSAVED:  # distilled before in this process, and the cache could not keep it
            self._model = _UNSAVED[key]
            return self._model
        model = self._distil()
        self.distilled_now = True
        saved = None
        if folder is not None:  # a temp folder, then renamed: a reader never sees half a model
            saved = cache_write(folder.parent, lambda tmp: model.save_pretrained(str(tmp)), name=folder.name,
                                what="the distilled static embedding model")
        if saved is not None:
            model = m2v.StaticModel.from_pretrained(str(saved))
        else:  # no cache: distilled once per process, not once per stage
            _UNSAVED[key] = model
        self._model = model
        return model

    @property
    def sha256(self) -> str:
        """Identity of the static model: the source weights' hash and the distillation settings."""
        return hashlib.sha256(_settings_key(self.source_sha256).encode()).hexdigest()

    @property
    def dim(self) -> int:
        return int(self._load().dim)

    def encode(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """``(len(texts), d)`` float32, L2-normalised, in input order (the empty text gives zeros)."""
        model = self._load()
        parts = []
        for lo in range(0, len(texts), self.batch_size):
            parts.append(np.asarray(model.encode(texts[lo:lo + self.batch_size], show_progress_bar=False,
                                                 use_multiprocessing=False), dtype=np.float32))
            if progress is not None:
                progress(min(len(texts), lo + self.batch_size))
        out = np.concatenate(parts) if parts else np.empty((0, self.dim), np.float32)
        # float16 rounding + re-normalisation, as for the transformer embeddings (cache parity)
        out = out.astype(np.float16).astype(np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms

    def to_json(self) -> dict[str, Any]:
        return {"id": f"model2vec distilled from {self.source_id}", "source_sha256": self.source_sha256,
                "settings": {"pca_dims": PCA_DIMS, "version": DISTILL_VERSION}, "sha256": self.sha256}

"""On-disk embedding cache: key -> float16 vector, made of immutable ``.npy`` shards.

Layout (``cache_dir/embeddings/<model key>-<precision>/``)::

    <shard>.vecs.npy   (m, d) float16  embeddings
    <shard>.keys.npy   (m, 16) uint8   first 16 bytes of sha256(text, UTF-8)

Each shard is written to a temporary file and renamed into place (:func:`pairaudit.cache.cache_write`),
vectors first and keys last, so a reader that lists ``*.keys.npy`` only ever sees complete shards; two
concurrent runs can write shards side by side (a text encoded by both just appears twice, which is
harmless). When the cache cannot be written, a shard stays in memory for the run.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

import numpy as np

from pairaudit.cache import cache_write

KEY_BYTES = 16


def text_key(text: str) -> bytes:
    """Cache key of one text: the first 16 bytes of its UTF-8 sha256 (lone surrogates kept)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:KEY_BYTES]


class ShardStore:
    """key -> embedding store made of immutable ``.npy`` shards; lookups by binary search."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._shards: list[Path] = []
        self._vecs: list[np.ndarray | None] = []  # memory-mapped on first use
        self._on_disk: list[bool] = []  # per shard: written (False: the cache could not be written; kept in memory)
        self._keys = np.empty(0, dtype=f"S{KEY_BYTES}")  # sorted
        self._loc = np.empty(0, dtype=np.int64)  # shard index << 32 | row
        self._pending: dict[bytes, int] = {}  # written by this process since the last merge
        self._pending_keys: list[np.ndarray] = []
        self._pending_loc: list[np.ndarray] = []
        self._load()

    def _load(self) -> None:
        if not self.folder.is_dir():
            return
        keys, locs = [], []
        for path in sorted(self.folder.glob("*.keys.npy")):
            vec_path = path.with_name(path.name[: -len(".keys.npy")] + ".vecs.npy")
            try:
                k = np.load(path)
            except (OSError, ValueError):  # a damaged shard is ignored and re-encoded
                continue
            if not vec_path.exists() or k.ndim != 2 or k.shape[1] != KEY_BYTES:
                continue
            idx = len(self._shards)
            self._shards.append(vec_path)
            self._vecs.append(None)
            self._on_disk.append(True)
            keys.append(np.ascontiguousarray(k).view(f"S{KEY_BYTES}").ravel())
            locs.append((np.int64(idx) << 32) | np.arange(len(k), dtype=np.int64))
        if keys:
            self._set_main(np.concatenate(keys), np.concatenate(locs))

    def _set_main(self, keys: np.ndarray, locs: np.ndarray) -> None:
        order = np.argsort(keys, kind="stable")
        self._keys, self._loc = keys[order], locs[order]

    def __len__(self) -> int:
        return len(self._keys) + len(self._pending)

    def lookup(self, keys: list[bytes]) -> np.ndarray:
        """Location of each key (-1 when absent)."""
        out = np.full(len(keys), -1, dtype=np.int64)
        if not keys:
            return out
        if len(self._keys):
            q = np.array(keys, dtype=f"S{KEY_BYTES}")
            pos = np.searchsorted(self._keys, q)
            pos_c = np.minimum(pos, len(self._keys) - 1)
            hit = self._keys[pos_c] == q
            out[hit] = self._loc[pos_c[hit]]
        if self._pending:
            for i, k in enumerate(keys):
                if out[i] < 0:
                    out[i] = self._pending.get(k, -1)
        return out

    def _vectors(self, shard: int) -> np.ndarray:
        v = self._vecs[shard]
        if v is None:
            v = np.load(self._shards[shard], mmap_mode="r")
            self._vecs[shard] = v
        return v

    def gather(self, locs: np.ndarray) -> np.ndarray:
        shards = (locs >> 32).astype(np.int64)
        rows = (locs & 0xFFFFFFFF).astype(np.int64)
        first = self._vectors(int(shards[0]))
        out = np.empty((len(locs), first.shape[1]), dtype=np.float16)
        for s in np.unique(shards):
            sel = np.nonzero(shards == s)[0]
            out[sel] = self._vectors(int(s))[rows[sel]]
        return out

    def add(self, keys: list[bytes], vecs16: np.ndarray) -> None:
        """Write one shard (temp file + rename, :func:`pairaudit.cache.cache_write`) and make it visible to
        lookups; when the cache cannot be written the shard stays in memory for this run."""
        name = f"{os.getpid()}-{uuid.uuid4().hex}"
        karr = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), KEY_BYTES)
        vec_path = cache_write(self.folder, lambda tmp: _save(tmp, vecs16), name=f"{name}.vecs.npy",
                               what="embedding vectors")
        # keys last: they commit the shard (a vectors file without keys is removed)
        if vec_path is not None and cache_write(self.folder, lambda tmp: _save(tmp, karr), name=f"{name}.keys.npy",
                                                what="embedding vectors") is None:
            vec_path.unlink(missing_ok=True)
            vec_path = None
        self._on_disk.append(vec_path is not None)
        idx = len(self._shards)
        self._shards.append(vec_path or self.folder / f"{name}.in-memory")
        self._vecs.append(np.asarray(vecs16))  # already in memory; no need to map it
        locs = (np.int64(idx) << 32) | np.arange(len(keys), dtype=np.int64)
        for k, loc in zip(keys, locs.tolist()):
            self._pending[k] = loc
        self._pending_keys.append(karr.view(f"S{KEY_BYTES}").ravel())
        self._pending_loc.append(locs)
        # merge into the sorted arrays with geometric growth (amortised O(n log n) overall)
        if len(self._pending) > max(65536, len(self._keys) // 4):
            self._set_main(np.concatenate([self._keys, *self._pending_keys]),
                           np.concatenate([self._loc, *self._pending_loc]))
            self._pending.clear()
            self._pending_keys.clear()
            self._pending_loc.clear()
            # shards we wrote ourselves can be memory-mapped from now on
            self._vecs = [None if isinstance(v, np.ndarray) and not isinstance(v, np.memmap) and disk else v
                          for v, disk in zip(self._vecs, self._on_disk)]


def _save(path: Path, arr: np.ndarray) -> None:
    with open(path, "wb") as fh:
        np.save(fh, arr)

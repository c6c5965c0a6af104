"""On-disk cache of per-sequence model results, keyed by a hash of the exact token ids.

A store is a folder of immutable ``.npz`` shards (written to a temp file and renamed into place), each
holding ``keys`` (16-byte blake2b digests), ``vals`` (float64, ``width`` columns) and, for stores with
``hidden``, ``hid`` (float16 pooled hidden states). Damaged or mismatched shards are ignored (their
sequences are computed again). Nothing is ever unpickled (``np.load`` with its default
``allow_pickle=False``).
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

import numpy as np

from pairaudit.cache import cache_write

KEY_BYTES = 16


def seq_key(prompt: list[int], completion: list[int]) -> bytes:
    h = hashlib.blake2b(digest_size=KEY_BYTES)
    h.update(len(prompt).to_bytes(8, "little"))
    h.update(np.asarray(list(prompt) + list(completion), dtype=np.int64).tobytes())
    return h.digest()


class LogpCache:
    """key -> (``width`` float64 values[, float16 hidden vector]) store."""

    def __init__(self, folder: Path | None, width: int = 3, hidden: bool = False) -> None:
        self.folder = folder
        self.width = width
        self.hidden = hidden
        self._keys = np.empty(0, dtype=f"S{KEY_BYTES}")
        self._vals = np.empty((0, width), dtype=np.float64)
        self._hid: np.ndarray | None = None
        self._pending: dict[bytes, tuple[np.ndarray, np.ndarray | None]] = {}
        if folder is not None and folder.is_dir():
            self._load(folder)

    def _load(self, folder: Path) -> None:
        keys, vals, hids = [], [], []
        for path in sorted(folder.glob("*.npz")):
            try:
                with np.load(path) as z:
                    k, v = z["keys"], z["vals"]
                    h = z["hid"] if self.hidden else None
            except (OSError, ValueError, KeyError):  # damaged or older shard: recompute
                continue
            if k.ndim != 2 or k.shape[1] != KEY_BYTES or v.shape != (len(k), self.width):
                continue
            if h is not None and (h.ndim != 2 or len(h) != len(k) or (hids and h.shape[1] != hids[0].shape[1])):
                continue
            keys.append(np.ascontiguousarray(k).view(f"S{KEY_BYTES}").ravel())
            vals.append(v)
            if h is not None:
                hids.append(h.astype(np.float16))
        if keys:
            allk = np.concatenate(keys)
            order = np.argsort(allk, kind="stable")
            self._keys, self._vals = allk[order], np.concatenate(vals)[order]
            if hids:
                self._hid = np.concatenate(hids)[order]

    def __len__(self) -> int:
        return len(self._keys) + len(self._pending)

    def get(self, keys: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(hit mask, values, hidden vectors or None) for ``keys``; misses hold zeros."""
        vals = np.zeros((len(keys), self.width))
        hit = np.zeros(len(keys), dtype=bool)
        dim = self._dim()
        hid = np.zeros((len(keys), dim), np.float16) if self.hidden and dim else None
        if len(self._keys) and keys:
            q = np.array(keys, dtype=f"S{KEY_BYTES}")
            pos = np.minimum(np.searchsorted(self._keys, q), len(self._keys) - 1)
            hit = self._keys[pos] == q
            vals[hit] = self._vals[pos[hit]]
            if hid is not None and self._hid is not None:
                hid[hit] = self._hid[pos[hit]]
        for i, k in enumerate(keys):
            if not hit[i] and k in self._pending:
                v, h = self._pending[k]
                vals[i], hit[i] = v, True
                if hid is not None and h is not None:
                    hid[i] = h
        return hit, vals, hid

    def _dim(self) -> int:
        if self._hid is not None:
            return int(self._hid.shape[1])
        for _, h in self._pending.values():
            if h is not None:
                return len(h)
        return 0

    def put(self, keys: list[bytes], vals: np.ndarray, hid: np.ndarray | None = None) -> None:
        for j, k in enumerate(keys):
            self._pending[k] = (np.asarray(vals[j], dtype=np.float64), None if hid is None else hid[j])
        if self.folder is None or not keys:
            return
        karr = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), KEY_BYTES)
        arrays = {"keys": karr, "vals": np.asarray(vals, dtype=np.float64)}
        if hid is not None:
            arrays["hid"] = np.asarray(hid, dtype=np.float16)

        def save(tmp: Path) -> None:
            with open(tmp, "wb") as fh:
                np.savez(fh, **arrays)

        # values stay in memory (``_pending``) when the cache cannot be written
        cache_write(self.folder, save, name=f"{os.getpid()}-{uuid.uuid4().hex}.npz", what="model scores")

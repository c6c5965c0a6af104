"""Per-row columns held once per distinct text, for the whole-dataset decision.

Data with several pairs per prompt repeats its texts: at 1M rows of the scale set each prompt and each response
is in ~425 rows. The decision reads a row's static vector, sketch, word-sorted sketch and length by row, for ~20M
candidate pairs; from the spilled per-row columns each read maps a window of a file (most of the verification's
time at 1M rows). A text's vector, sketch and length depend on the text alone, so :class:`TextTable` keeps one
entry per distinct text (by the rows' digests of the raw texts) and :class:`ByText` reads ``table[ids[rows]]``:
the same values, from memory. Only where it pays and fits: the texts repeat and their tables stay under
``MAX_TABLE_BYTES``; otherwise the stage reads the spilled columns as before.
"""

from __future__ import annotations

from typing import Any

import numpy as np

DIGEST_BYTES = 48  # a row's number, its prompt's digest and its responses' (normalised and raw): 8-byte integers
MAX_TABLE_BYTES = 256 << 20  # the per-text tables of one decision, at most
MAX_TEXT_SHARE = 2 / 3  # used when the distinct texts are at most this share of the rows' texts (3 a row)


class ByText:
    """A read-only per-row array ``table[ids]``, indexed like the column it stands for.

    ``table`` (T, d) with ``ids`` (n,): a column of vectors, one row per row; ``table`` (T,) with ``ids`` (n, k): a
    column of k per-text values a row (sketches, lengths of prompt / chosen / rejected).

    Example:
        >>> import numpy as np
        >>> sk = ByText(np.array([b"hi", b"yo"]), np.array([[0, 1, 1], [0, 0, 1]]))
        >>> sk[1].tolist(), sk[np.array([0, 1]), 2].tolist(), sk.shape
        ([b'hi', b'hi', b'yo'], [b'yo', b'yo'], (2, 3))
    """

    def __init__(self, table: np.ndarray, ids: np.ndarray) -> None:
        self.table, self.ids = table, ids
        self.shape = tuple(ids.shape) if table.ndim == 1 else (len(ids), *table.shape[1:])
        self.dtype, self.itemsize, self.ndim = table.dtype, table.itemsize, len(self.shape)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: Any) -> Any:
        if self.table.ndim == 1:
            return self.table[self.ids[key]]
        first, rest = (key[0], key[1:]) if isinstance(key, tuple) and key else (key, ())
        at = self.ids[first]
        v = self.table[at]
        if not rest:
            return v
        return v[rest] if np.ndim(at) == 0 else v[(slice(None), *rest)]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self[:]
        return out if dtype is None else out.astype(dtype)


class TextTable:
    """Dense ids of the rows' texts (prompt, chosen, rejected) by their digests, and the per-text columns built on
    them. Two rows with the same digest hold the same text (64-bit BLAKE2b of the raw text, ``texts.text_hash``).

    Args:
        ids: (n, 3) ids in ``0 .. n_texts - 1``.
        n_texts: the distinct texts.
    """

    def __init__(self, ids: np.ndarray, n_texts: int) -> None:
        self.ids, self.n_texts = ids, n_texts

    @classmethod
    def of(cls, phash: np.ndarray, hraw: np.ndarray, width: int, text_bytes: int) -> TextTable | None:
        """The table of rows whose prompt digests are ``phash`` (n,) and response digests ``hraw`` (n, 2), or None
        where it does not pay (the distinct texts are more than ``MAX_TEXT_SHARE`` of the rows' texts) or does not
        fit (``width`` float16 values a field and two ``text_bytes`` sketches a text over ``MAX_TABLE_BYTES``).

        Example:
            >>> import numpy as np
            >>> t = TextTable.of(np.array([7, 7, 7]), np.array([[1, 2], [1, 2], [2, 1]]), 4, 8)
            >>> t.n_texts, t.ids.tolist()
            (3, [[2, 0, 1], [2, 0, 1], [2, 1, 0]])
        """
        keys = np.concatenate([np.asarray(phash, np.int64).reshape(-1, 1),
                               np.asarray(hraw, np.int64).reshape(-1, 2)], axis=1)
        n = len(keys)
        if not n:
            return None
        uniq, inv = np.unique(keys, return_inverse=True)
        per_text = 2 * 3 * width * 2 + 2 * text_bytes + 4  # vectors (raw and centred) of 3 fields, sketches, length
        if len(uniq) > MAX_TEXT_SHARE * 3 * n or len(uniq) * per_text > MAX_TABLE_BYTES:
            return None
        return cls(inv.reshape(n, 3).astype(np.int32), len(uniq))

    def field(self, A: Any, f: int) -> ByText:
        """Field ``f``'s column of vectors ``A`` (n, d; any array-like, e.g. a spilled column), read once per
        distinct text of that field."""
        u, first = np.unique(self.ids[:, f], return_index=True)
        table = np.zeros((self.n_texts, *A.shape[1:]), dtype=A.dtype)
        order = np.argsort(first)  # the rows in file order
        table[u[order]] = np.asarray(A[first[order]])
        return ByText(table, self.ids[:, f])

    def fields(self, A: Any) -> ByText:
        """A column of per-text values (n, 3; sketches, lengths), read once per distinct text."""
        _, first = np.unique(self.ids.reshape(-1), return_index=True)  # the ids are 0 .. n_texts - 1
        rows, f = first // 3, first % 3
        order = np.argsort(rows, kind="stable")
        table = np.empty(self.n_texts, dtype=A.dtype)
        table[order] = np.asarray(A[rows[order]])[np.arange(len(rows)), f[order]]
        return ByText(table, self.ids)

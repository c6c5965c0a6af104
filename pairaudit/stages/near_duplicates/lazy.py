"""The transformer's vectors in hybrid mode: only the fields a decision reads, embedded in one planned pass.

The static model proposes candidate row pairs; the transformer decides. It is needed only where texts are
not settled by themselves: a field equal in both rows of a candidate pair is "same text" whatever its
vector, so (in data with several pairs per prompt, where candidates mostly share the prompt) most prompts
never need the transformer. :class:`FieldVectors` holds the vectors of some rows' fields; :meth:`plan`
embeds every (row, field) known to be read in one call (so progress has its total), and a field read
without a plan is embedded when it is read (``n_unplanned``). Because the embedder encodes texts in
batches of equal token length, a text's vector is the same whichever texts share the call, so embedding
only what is read gives exactly the vectors of embedding every field of every row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pairaudit.stages.near_duplicates.match import MATCH_CHUNK

FIELDS = 3  # prompt, chosen, rejected
ENABLED = True  # False: every field of every row is embedded (the previous behaviour; tests compare both)
EMBED_CHUNK = 1 << 15  # texts embedded per call (a text's vector does not depend on the others of its call)


class FieldVectors:
    """Vectors of fields (0 prompt, 1 chosen, 2 rejected) of ``rows`` (row indices of the stage's arrays).
    ``texts(i)`` gives row i's three texts; ``embed(texts, remaining)`` their unit vectors (float32 or float16;
    ``remaining``: the texts left to embed in this pass, these included, for progress);
    ``too_long(texts)``: which of them the model sees cut (longer than its maximum length).

    ``n_read`` / ``n_read_cut`` count the fields some decision read (and of them, the cut ones): what the
    transformer compared, the same whether a field was embedded in the plan, on reading, or (``ENABLED``
    False) because every field was."""

    def __init__(self, rows: np.ndarray, texts: Callable[[int], list[str]],
                 embed: Callable[[list[str]], np.ndarray],
                 too_long: Callable[[list[str]], np.ndarray] | None = None) -> None:
        self.rows = np.asarray(rows, dtype=np.int64)
        self._texts, self._embed, self._too_long = texts, embed, too_long
        self._have = np.zeros((FIELDS, len(self.rows)), dtype=bool)
        self._read = np.zeros_like(self._have)
        self._cut = np.zeros_like(self._have)
        self._vec: np.ndarray | None = None  # (3, m, d) float16, allocated on the first embedding
        self.n_planned = 0
        self.n_unplanned = 0

    @property
    def n_read(self) -> int:
        return int(self._read.sum())

    @property
    def n_read_cut(self) -> int:
        return int((self._read & self._cut).sum())

    def positions(self, rows: np.ndarray) -> np.ndarray:
        """Positions of ``rows`` (all of which must be among ``self.rows``)."""
        pos = np.searchsorted(self.rows, rows)
        assert np.array_equal(self.rows[np.minimum(pos, len(self.rows) - 1)], rows), "rows without vectors"
        return pos

    def plan(self, need: np.ndarray) -> None:
        """Embed every field marked in ``need`` (3, m) that is not embedded yet, in one call."""
        need = np.asarray(need, dtype=bool) & ~self._have
        self.n_planned += int(need.sum())
        self._fill(need)

    def view(self, rows: np.ndarray) -> tuple[Any, Any, Any]:
        """(P, C, R): arrays of ``len(rows)`` vectors each, indexed by position in ``rows``."""
        pos = self.positions(np.asarray(rows, dtype=np.int64))
        return tuple(_Field(self, f, pos) for f in range(FIELDS))  # type: ignore[return-value]

    def read(self, f: int, pos: np.ndarray) -> np.ndarray:
        pos = np.asarray(pos, dtype=np.int64)
        missing = np.unique(pos[~self._have[f, pos]])
        if len(missing):
            need = np.zeros_like(self._have)
            need[f, missing] = True
            self.n_unplanned += len(missing)
            self._fill(need)
        self._read[f, pos] = True
        assert self._vec is not None
        return self._vec[f, pos]

    def _fill(self, need: np.ndarray) -> None:
        """Embed the fields marked in ``need``, ``EMBED_CHUNK`` texts at a time (row by row, so each row's texts
        are unpacked once): the texts and their float32 vectors are held for one chunk, not for every field
        (331,901 texts at 1M rows). ``embed(texts, remaining)`` gets the texts left in this fill, for progress."""
        fs, ps = np.nonzero(need)
        if not len(ps):
            return
        order = np.lexsort((fs, ps))
        fs, ps = fs[order], ps[order]
        for lo in range(0, len(ps), EMBED_CHUNK):
            f_, p_ = fs[lo:lo + EMBED_CHUNK], ps[lo:lo + EMBED_CHUNK]
            texts, last, row_texts = [], -1, []
            for f, i in zip(f_.tolist(), self.rows[p_].tolist()):
                if i != last:
                    row_texts, last = self._texts(i), i
                texts.append(row_texts[f])
            V = np.asarray(self._embed(texts, len(ps) - lo), dtype=np.float16)
            if self._vec is None:
                self._vec = np.zeros((FIELDS, len(self.rows), V.shape[1]), dtype=np.float16)
            self._vec[f_, p_] = V
            if self._too_long is not None:
                self._cut[f_, p_] = np.asarray(self._too_long(texts), dtype=bool)
        self._have |= need


class _Field:
    """One field's vectors for some rows, read through :meth:`FieldVectors.read` (array-like for ``rowdot``)."""

    def __init__(self, owner: FieldVectors, f: int, pos: np.ndarray) -> None:
        self.owner, self.f, self.pos = owner, f, pos

    def __len__(self) -> int:
        return len(self.pos)

    def __getitem__(self, key: Any) -> np.ndarray:
        return self.owner.read(self.f, self.pos[key])


def decision_plan(store: FieldVectors, a: np.ndarray, b: np.ndarray, sk: Any, ln: Any, responses: np.ndarray
                  ) -> np.ndarray:
    """(3, len(store.rows)) fields the hybrid decision reads: the prompts of the candidate pairs (rows ``a[i]``,
    ``b[i]``) whose prompts are not the same text, and chosen and rejected of the rows ``responses`` (the
    calibration compares each of its rows' own chosen and rejected, and every candidate's responses are
    compared). ``sk``/``ln``: the stage's sketches and lengths (every row)."""
    need = np.full((FIELDS, len(store.rows)), not ENABLED, dtype=bool)
    need[1:, store.positions(np.asarray(responses, dtype=np.int64))] = True
    for lo in range(0, len(a), MATCH_CHUNK):  # a slice of pairs at a time: their sketches are copied to compare
        x, y = a[lo:lo + MATCH_CHUNK], b[lo:lo + MATCH_CHUNK]
        differ = ~((sk[x, 0] == sk[y, 0]) & (ln[x, 0] == ln[y, 0]))
        need[0, store.positions(np.unique(np.concatenate([x[differ], y[differ]])))] = True
    return need

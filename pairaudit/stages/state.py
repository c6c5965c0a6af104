"""What a whole-dataset stage keeps between ``observe`` and ``finalize``, declared once per stage.

A stage names every attribute its ``observe`` fills in ``state``, each with its kind. The kind says how the
attribute starts, how two instances' values merge (in row order: the worker pool and the Ray engine run
``observe`` in other processes and merge what they export), and how it is cut to some of its rows (a Ray
hash partition, the flip model's fitting sample)::

    state = {"_rows": Column(np.int64), "_lens": Column(np.int32), "n_skipped": Count()}

The base class (``stages.base.Stage``) creates the declared attributes before the stage's ``__init__`` runs,
exports and merges them, and checks the declaration when the class is defined (``check_observe``): an
``observe`` that writes to an attribute not declared here fails at import, since a worker's copy of it would
be lost without a word.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


class Kind:
    """How one attribute of a stage's state starts, merges and is cut to some rows."""

    #: True: a list of per-batch arrays whose rows are the stage's rows, in order
    row_aligned = False

    def empty(self) -> Any:
        raise NotImplementedError

    def merge(self, current: Any, new: Any) -> Any:
        raise NotImplementedError

    def take(self, value: Any, idx: np.ndarray | None) -> Any:
        """``value`` restricted to the rows ``idx`` (None: all), as one part; values that are not per row as they are."""
        return value


class Column(Kind):
    """A per-row column, kept as a list of per-batch arrays (first axis: rows). ``join`` makes one array of
    the parts (default ``np.concatenate``; None when there are none)."""

    row_aligned = True

    def __init__(self, dtype: Any, join: Callable[[list[np.ndarray]], np.ndarray | None] | None = None) -> None:
        self.dtype = np.dtype(dtype)
        self.join = join or (lambda parts: np.concatenate(parts) if parts else None)

    def empty(self) -> list[np.ndarray]:
        return []

    def merge(self, current: list[np.ndarray], new: list[np.ndarray]) -> list[np.ndarray]:
        return current + list(new)

    def take(self, value: list[np.ndarray], idx: np.ndarray | None) -> list[np.ndarray]:
        if not value:
            return value
        if idx is not None and len(value) == 1 and not isinstance(value[0], np.ndarray):
            return [value[0][idx]]  # a spilled column (stages/spill.py): only the rows taken are read
        x = self.join(value)
        return [] if x is None else [x if idx is None else x[idx]]


class Columns(Kind):
    """Several per-row columns by name (``{name: [per-batch arrays]}``), e.g. model scores."""

    row_aligned = True

    def __init__(self, dtype: Any) -> None:
        self.dtype = np.dtype(dtype)

    def empty(self) -> dict[str, list[np.ndarray]]:
        return {}

    def merge(self, current: dict[str, list[np.ndarray]], new: dict[str, list[np.ndarray]]) -> dict[str, Any]:
        out = dict(current)
        for k, v in new.items():
            out[k] = out[k] + list(v) if k in out else v
        return out

    def take(self, value: dict[str, list[np.ndarray]], idx: np.ndarray | None) -> dict[str, list[np.ndarray]]:
        out = {}
        for name, parts in value.items():
            if parts:
                x = np.concatenate(parts)
                out[name] = [x if idx is None else x[idx]]
        return out


class Count(Kind):
    """A number that adds up over instances (rows skipped, seconds spent)."""

    def __init__(self, type_: type = int) -> None:
        self.type = type_

    def empty(self) -> Any:
        return self.type()

    def merge(self, current: Any, new: Any) -> Any:
        return current + new


class Items(Kind):
    """A list of small values, concatenated in row order (row numbers, notes)."""

    def empty(self) -> list[Any]:
        return []

    def merge(self, current: list[Any], new: list[Any]) -> list[Any]:
        return current + list(new)


class Tally(Kind):
    """Counters by key (``{reason: count}``), added key by key."""

    def empty(self) -> dict[str, Any]:
        return {}

    def merge(self, current: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        out = dict(current)
        for k, v in new.items():
            out[k] = out[k] + v if k in out else v
        return out


"""A scanned shard's per-row state parked on disk until an operation needs it (the Ray engine's actors).

An actor scans many shards and keeps, per shard, what the later phases read: the per-pair findings and
per-row metrics (read once, when the shard's outputs are written) and the kept state of the whole-dataset
stages (read by the operation that finalizes the stage). Held in memory they made the actor grow by ~460 bytes
for every row it scanned (measured on real HH rows: metrics ~140 B, flip features ~100 B, findings, lengths and
preference keys); parked, the actor holds a few handles per shard, and each operation loads one shard's part,
uses it and lets it go. The files go in the actor's spill folder (``stages.spill.actor_folder``: removed when
the actor ends, or by a surviving actor of the same machine after a kill), each removed when its part is taken.

Arrays and plain data are written in the wire format (``engines.wire``: JSON + ``.npy``, no pickle); what the
wire cannot carry (a column already on disk, e.g. a ``spill.Mapped`` view) stays in memory as it is.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from pairaudit.engines.wire import dumps, loads

_KEPT = "__kept__"  # a value the wire cannot carry, left in memory (its index in ``Parked.kept``)


def _wired(obj: Any) -> bool:
    if isinstance(obj, np.ndarray):
        return not obj.dtype.hasobject or (obj.ndim == 1 and all(isinstance(b, bytes) for b in obj))
    return obj is None or isinstance(obj, (str, int, float, bool, np.generic))


def _swap_out(obj: Any, kept: list[Any]) -> Any:
    if isinstance(obj, dict) and all(isinstance(k, str) for k in obj):
        return {k: _swap_out(v, kept) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_swap_out(v, kept) for v in obj]
    if _wired(obj):
        return obj
    kept.append(obj)
    return {_KEPT: len(kept) - 1}


def _swap_in(obj: Any, kept: list[Any]) -> Any:
    if isinstance(obj, dict):
        if set(obj) == {_KEPT}:
            return kept[obj[_KEPT]]
        return {k: _swap_in(v, kept) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_swap_in(v, kept) for v in obj]
    return obj


class Parked:
    """``obj`` (dicts, lists, arrays, plain values) written to ``path``; :meth:`load` gives an equal copy back
    (numpy scalars come back as Python numbers, as after any wire trip)."""

    def __init__(self, path: Path, obj: Any) -> None:
        self.kept: list[Any] = []
        path.write_bytes(dumps(_swap_out(obj, self.kept)))
        self.path = path

    def load(self, *, remove: bool = False) -> Any:
        """The parked value; ``remove``: the file is deleted (the value is taken for good)."""
        out = _swap_in(loads(self.path.read_bytes()), self.kept)
        if remove:
            self.path.unlink(missing_ok=True)
        return out


class ParkedFrames:
    """A list of polars frames written to ``path`` as Arrow IPC streams (schemas and values exact)."""

    def __init__(self, path: Path, frames: list[Any]) -> None:
        ends, pos = [], 0
        with open(path, "wb") as fh:
            for df in frames:
                buf = io.BytesIO()
                df.write_ipc_stream(buf)
                pos += fh.write(buf.getvalue())
                ends.append(pos)
        self.path, self.ends = path, ends

    def load(self, *, remove: bool = False) -> list[Any]:
        import polars as pl

        data = self.path.read_bytes()
        if remove:
            self.path.unlink(missing_ok=True)
        return [pl.read_ipc_stream(io.BytesIO(data[lo:hi])) for lo, hi in zip([0, *self.ends[:-1]], self.ends)]


def park_shard(folder: Path, s: int, findings: list[list[Any]], metrics: list[Any], states: dict[str, Any],
               keep: set[str]) -> dict[str, Any]:
    """One scanned shard's parts parked in ``folder``: findings (wire lists), metrics (frames) and every stage
    state but those named in ``keep`` (states the actor works on in place, e.g. the near-duplicate columns).

    Args:
        folder: the actor's spill folder.
        s: the shard's number (names its files).
        findings: the shard's per-pair findings as wire lists (``partition.FINDING_FIELDS`` order).
        metrics: the shard's per-batch metric frames.
        states: the stages' kept states, by stage name.
        keep: stage names whose state stays in memory.

    Returns:
        ``{"findings": Parked, "metrics": ParkedFrames, "states": {name: Parked or the state}}``; read them back
        with :func:`unpark`.
    """
    return {"findings": Parked(folder / f"shard{s}.findings.npz", findings),
            "metrics": ParkedFrames(folder / f"shard{s}.metrics.arrow", metrics),
            "states": {name: state if name in keep else Parked(folder / f"shard{s}.{name}.npz", state)
                       for name, state in states.items()}}


def unpark(value: Any, *, remove: bool = False) -> Any:
    """A parked value read back (``remove``: its file deleted); anything else as it is."""
    return value.load(remove=remove) if isinstance(value, (Parked, ParkedFrames)) else value


def discard(value: Any) -> None:
    """A parked value that no operation will read: its file deleted, nothing loaded; anything else is left."""
    if isinstance(value, (Parked, ParkedFrames)):
        value.path.unlink(missing_ok=True)

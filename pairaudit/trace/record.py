"""Which rows each optimizer step saw: one table format for recorded and reconstructed runs.

The recording callback (:mod:`pairaudit.trace.recorder`) writes, under ``OUTPUT_DIR/pairaudit-record/``:

- ``rank-00000.bin`` (one file per process): fixed-size little-endian records, one per training sample
  (``STEP_DTYPE``: step, epoch, rank, micro-batch, trainer index, source row, session; 36 bytes), appended and flushed after every optimizer
  step, so a crash loses at most the step in flight. Read with ``numpy.fromfile``; nothing is unpickled.
- ``meta.json``: the settings that decide the order, the versions, and one entry per ``train()`` session
  (``start_step``: the global step it resumed from); written atomically.
- ``events.jsonl``: non-finite gradients / logits / logged values, one JSON object a line.
- ``incident-rank-00000.json``: the rows of the first non-finite step with their findings.

A step can appear in several sessions (a run that crashed after its last checkpoint and was resumed):
the record of the latest session wins (:meth:`StepTable.latest`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

RECORD_DIR = "pairaudit-record"
META = "meta.json"
EVENTS = "events.jsonl"
STEP_DTYPE = np.dtype([("step", "<i8"), ("epoch", "<i4"), ("rank", "<i2"), ("micro", "<i2"),
                       ("index", "<i8"), ("row", "<i8"), ("session", "<i4")])


def rank_file(folder: Path, rank: int) -> Path:
    return Path(folder) / f"rank-{rank:05d}.bin"


@dataclass
class StepTable:
    """One row per (step, rank, micro-batch, position): the trainer dataset ``index`` and the source ``row``
    (-1 where unknown). ``data`` is a structured array of ``STEP_DTYPE``, sorted by step, rank, micro."""

    data: np.ndarray

    @classmethod
    def empty(cls) -> StepTable:
        return cls(np.zeros(0, dtype=STEP_DTYPE))

    @classmethod
    def from_parts(cls, parts: list[np.ndarray]) -> StepTable:
        if not parts:
            return cls.empty()
        return cls(np.concatenate(parts))

    def __len__(self) -> int:
        return len(self.data)

    @property
    def steps(self) -> np.ndarray:
        return np.unique(self.data["step"])

    def latest(self) -> StepTable:
        """Keep, for each (step, process), only the records of the latest session that recorded it."""
        d = self.data
        if not len(d):
            return self
        keys = list(zip(d["step"].tolist(), d["rank"].tolist()))
        sessions = d["session"].tolist()
        last: dict[tuple[int, int], int] = {}
        for k, se in zip(keys, sessions):
            last[k] = max(se, last.get(k, se))
        keep = np.fromiter((last[k] == se for k, se in zip(keys, sessions)), dtype=bool, count=len(d))
        out = d[keep]
        order = np.lexsort((np.arange(len(out)), out["micro"], out["rank"], out["step"]))
        return StepTable(out[order])

    def select(self, first: int, last: int) -> StepTable:
        d = self.data
        return StepTable(d[(d["step"] >= first) & (d["step"] <= last)])

    def with_rows(self, rows: np.ndarray) -> StepTable:
        """Fill ``row`` from ``rows[index]`` (the trainer-index -> source-row map) where it is -1."""
        d = self.data.copy()
        unknown = d["row"] < 0
        ok = unknown & (d["index"] >= 0) & (d["index"] < len(rows))
        d["row"][ok] = rows[d["index"][ok]]
        return StepTable(d)

    def per_step(self) -> dict[int, list[list[list[int]]]]:
        """step -> per rank -> per micro-batch -> source rows (trainer indices where rows are unknown)."""
        out: dict[int, dict[int, dict[int, list[int]]]] = {}
        for r in self.data:
            val = int(r["row"]) if r["row"] >= 0 else int(r["index"])
            out.setdefault(int(r["step"]), {}).setdefault(int(r["rank"]), {}).setdefault(int(r["micro"]), []).append(val)
        return {s: [[m[k] for k in sorted(m)] for _, m in sorted(ranks.items())] for s, ranks in sorted(out.items())}


def read_record(folder: Path) -> tuple[StepTable, dict[str, Any]]:
    """The recorded steps (latest session per step) and ``meta.json`` of a record folder."""
    folder = Path(folder)
    meta = json.loads((folder / META).read_text(encoding="utf-8")) if (folder / META).exists() else {}
    parts = []
    for path in sorted(folder.glob("rank-*.bin")):
        raw = path.read_bytes()
        whole = len(raw) - len(raw) % STEP_DTYPE.itemsize  # a torn last write is ignored
        if whole:
            parts.append(np.frombuffer(raw[:whole], dtype=STEP_DTYPE).copy())
    return StepTable.from_parts(parts).latest(), meta


def read_events(folder: Path) -> list[dict[str, Any]]:
    path = Path(folder) / EVENTS
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def write_json_atomic(path: Path, obj: Any) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=_jsonable) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)

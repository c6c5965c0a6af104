"""Plain-data pieces of the distributed finalize (no Ray here, so they are tested on their own).

* :func:`split_state`: a shard's state of a ``distribute = "hash"`` stage cut into hash partitions
  (rows keep their order inside a partition, so a partition absorbed in shard order is in row order);
* :func:`route`: a stage result (findings, per-row scores) cut by the shards' row ranges, so each part
  goes back to the worker that writes those rows;
* :func:`merge_stats`: report.json ``stats`` of the partitions of one stage, summed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pairaudit.datatypes import Finding, StageResult

FINDING_FIELDS = ("row", "check", "field", "score", "group", "detail", "action")


def split_state(state: dict[str, list[np.ndarray]], key: str, n: int,
                aliases: tuple[np.ndarray, np.ndarray] | None = None) -> list[dict[str, list[np.ndarray]]]:
    """Cut row-aligned state arrays into ``n`` partitions by ``key % n`` (keys are 64-bit hashes; a 2-D key
    column: its first column). ``aliases``: (sorted keys, the key each one stands for): rows whose keys are
    aliases of one key land in one partition."""
    cols = {k: np.concatenate(v) for k, v in state.items() if len(v)}
    if key not in cols:
        return [{k: [] for k in state} for _ in range(n)]
    keys = cols[key][:, 0] if cols[key].ndim == 2 else cols[key]
    if aliases is not None and len(aliases[0]):
        at = np.minimum(np.searchsorted(aliases[0], keys.astype(np.int64)), len(aliases[0]) - 1)
        hit = aliases[0][at] == keys.astype(np.int64)
        keys = np.where(hit, aliases[1][at], keys.astype(np.int64))
    bucket = (keys.astype(np.uint64) % np.uint64(n)).astype(np.int64)
    order = np.argsort(bucket, kind="stable")
    bounds = np.searchsorted(bucket[order], np.arange(n + 1))
    return [{k: [c[order[a:b]]] for k, c in cols.items()} for a, b in zip(bounds[:-1], bounds[1:])]


def shard_of(rows: np.ndarray, starts: list[int]) -> np.ndarray:
    """Index of the shard holding each row (``starts``: first row number of each shard, ascending)."""
    return np.searchsorted(np.asarray(starts, dtype=np.int64), np.asarray(rows, dtype=np.int64), side="right") - 1


def route(res: StageResult, findings: list[Finding], starts: list[int]) -> list[dict[str, Any]]:
    """Per shard: ``{"findings": [[fields...]], "rows": int64 array, "scores": {col: array}}``."""
    n = len(starts)
    out: list[dict[str, Any]] = [{"findings": [], "rows": np.zeros(0, np.int64), "scores": {}} for _ in range(n)]
    if findings:
        where = shard_of(np.fromiter((f.row for f in findings), np.int64, len(findings)), starts)
        for f, s in zip(findings, where.tolist()):
            out[s]["findings"].append(finding_list(f))
    if res.rows is not None and res.scores:
        rows = np.asarray(res.rows, dtype=np.int64)
        where = shard_of(rows, starts)
        for s in np.unique(where).tolist():
            mask = where == s
            out[s]["rows"] = rows[mask]
            out[s]["scores"] = {k: np.asarray(v)[mask] for k, v in res.scores.items()}
    return out


def finding_list(f: Finding) -> list[Any]:
    """A finding as the plain list that travels (``FINDING_FIELDS`` order; :func:`findings_of` reads it back)."""
    return [getattr(f, k) for k in FINDING_FIELDS]


def findings_of(parts: list[dict[str, Any]]) -> list[Finding]:
    return [Finding(**dict(zip(FINDING_FIELDS, f))) for p in parts for f in p["findings"]]


def merge_routed(parts: list[dict[str, Any]]) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """One shard's rows and score columns from the partitions that held some of its rows, in row order."""
    parts = [p for p in parts if len(p["rows"]) and p["scores"]]
    if not parts:
        return None
    rows = np.concatenate([p["rows"] for p in parts])
    order = np.argsort(rows, kind="stable")
    cols = {k: np.concatenate([np.asarray(p["scores"][k]) for p in parts])[order] for k in parts[0]["scores"]}
    return rows[order], cols


def merge_stats(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Numbers add up; anything else must agree (the first is kept)."""
    out: dict[str, Any] = {}
    for part in parts:
        for k, v in part.items():
            if k not in out:
                out[k] = v
            elif isinstance(v, dict) and isinstance(out[k], dict):
                out[k] = merge_stats([out[k], v])
            elif isinstance(v, (int, float)) and not isinstance(v, bool) and isinstance(out[k], (int, float)):
                out[k] = out[k] + v
    return out

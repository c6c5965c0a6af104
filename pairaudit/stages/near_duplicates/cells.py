"""The near-duplicate stage spread over workers (``NearDuplicateStage.distribute = "cells"``; the Ray engine runs
it, docs/scale.md): the stage's own building blocks (search cells, field-by-field verification, calibration,
union-find over edges), cut into phases that each run where their data is. Texts never leave their shard.

1. shards: row counts and field sums (the field means; exact, since float16 values add up exactly in float64);
2. shards: centred vectors; the k-means training rows, the prompt digests and the compared response pairs go
   to one worker, the *index* (8 + 8 B a row, plus the sample);
3. index: the k-means cells (the local engine's sample, seed and FAISS settings), the cells gathered into cell
   groups (k-means over the centroids, so a row's probed cells mostly share a group), the calibration sample;
4. shards: every row to its ``nprobe`` nearest cells (the local rule); a row travels once to each cell group
   holding one of them, with its vectors, sketches and digests;
5. groups: each of their cells' members against the rows that probe it, then the verification. Hybrid mode:
   the loose candidate rule; the shards embed their candidate rows with the transformer and send the vectors
   to the groups that asked; the groups find their pairs whose prompts may pass (``CellGroup.prompts``); the
   index calibrates on the local engine's negative pairs among those pairs' rows and the sample (only the rows
   of the chosen pairs travel); the groups verify;
6. driver: union-find over the verified edges (``verify.edge_findings``: memory O(edges)); an edge carries its
   rows' prompt digests, so rows known to be different comparisons stay apart as in the local engine.

Recall across cells is the local engine's: a pair is found when one row's cell is among the other's ``nprobe``
nearest cells, whichever worker holds those cells; a pair found in two groups is verified in both and its
edge kept once. Findings and scores equal the local engine's for the same rows and settings (same search
blocks, calibration pairs and edge order); a few ``stats`` differ (``n_candidates`` / ``n_candidate_pairs``
count a pair once per group that found it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from pairaudit.stages.near_duplicates.cell_groups import CellGroup, CellIndex, no_edges  # noqa: F401 - the phases in one place
from pairaudit.stages.near_duplicates.match import compared_keys
from pairaudit.stages.near_duplicates.search import assign_cells, center, rowdot, sum_vectors
from pairaudit.stages.near_duplicates.verify import EDGE_FIELDS

if TYPE_CHECKING:
    from pairaudit.stages.near_duplicates.stage import NearDuplicateStage

VECTORS = ("P", "C", "R")


# -- shards ------------------------------------------------------------------------------------------------
SMALL = ("rows", "phash", "hresp")  # a few bytes a row: read into memory even when spilled
PIECE = 8192  # rows read at a time from a spilled column


def shard_columns(state: dict[str, Any], spill: Any = None) -> dict[str, Any]:
    """One shard's observed state (``export_state``, or ``export_spilled`` with the ``spill`` owning its files) as
    columns, in row order: a spilled column stays on disk (its read-only view), read in pieces where used."""
    def cat(key: str) -> Any:
        parts = state[key]
        if len(parts) == 1 and not isinstance(parts[0], np.ndarray):  # spilled: a Mapped or Blobs view
            return np.asarray(parts[0]) if key[1:] in SMALL else parts[0]
        return np.concatenate(parts) if parts else None

    d = {k: cat(f"_{k}") for k in ("rows", "P", "C", "R", "sk", "ln", "phash", "hresp", "texts")}
    n = 0 if d["rows"] is None else len(d["rows"])
    d.update(n=n, n_skipped=int(state["n_skipped"]), t_embed=float(state["_t_embed"]), spill=spill)
    if n:
        d["hresp"] = d["hresp"].reshape(-1, 2)
    return d


def close_shard(d: dict[str, Any]) -> None:
    """Remove a shard's spill files (its columns, centred copies and sums), once its result is taken."""
    if d.get("spill") is not None:
        d.pop("spill").close()


def _col_sum(A: Any) -> np.ndarray:
    """Column sums of ``A`` in float64, read ``PIECE`` rows at a time (exact for float16 values)."""
    total = np.zeros(A.shape[1], np.float64)
    for lo in range(0, len(A), PIECE):
        total += np.asarray(A[lo:lo + PIECE]).astype(np.float64).sum(axis=0)
    return total


def _on_disk(d: dict[str, Any], name: str, shape: tuple[int, ...], dtype: Any, fill: Any) -> Any:
    """``fill(out)`` into a scratch column of the shard's spill (on disk, then read-only) when it spilled, else
    into memory."""
    spill = d.get("spill")
    if spill is None:
        return fill(None)
    return spill.reopen(fill(spill.scratch(name, shape, dtype)))


def shard_summary(d: dict[str, Any]) -> dict[str, Any]:
    """Row count, field sums (float64), what the report needs from the observed columns."""
    from pairaudit.stages.near_duplicates.texts import blob_bytes

    out: dict[str, Any] = {"n": d["n"], "n_skipped": d["n_skipped"], "t_embed": d["t_embed"]}
    if d["n"]:
        out["sums"] = np.stack([_col_sum(d[k]) for k in VECTORS])
        out["blob_bytes"] = blob_bytes(d["texts"]) if d["texts"] is not None else 0
        out["itemsizes"] = [int(d["P"].itemsize), int(d["sk"].itemsize)]
        out["dim"] = int(d["P"].shape[1])
    return out


def shard_prepare(stage: NearDuplicateStage, d: dict[str, Any], plan: dict[str, Any], train: np.ndarray,
                  timings: dict[str, float]) -> tuple[dict[str, Any], ...]:
    """Deciding vectors (transformer ones below ``min_rows_static``; centred in static/hybrid mode), the
    chosen-vs-rejected cosine; returns the sum vectors of the training rows ``train`` (local indices), the
    prompt digests and the compared response pairs, for the index."""
    n = d["n"]
    if n and plan["below_static"]:
        d["P"], d["C"], d["R"] = stage._transformer_vectors(d["texts"], np.arange(n), timings)
    every = np.arange(n)
    d["pair_raw"] = rowdot(d["C"], d["R"], every, every) if n else np.zeros(0, np.float32)
    d["dim"] = int(d["P"].shape[1]) if n else 0
    if n and plan["means"] is not None:
        d["P"], d["C"], d["R"] = (_on_disk(d, f"{k}_centred", d[k].shape, np.float16,
                                           lambda out, A=d[k], m=m: center(A, np.asarray(m, np.float32), out=out))
                                  for k, m in zip(VECTORS, plan["means"]))
    S = sum_vectors(*(d[k][train] for k in VECTORS)) if n and len(train) else np.zeros((0, plan["dim"]), np.float32)
    keys = compared_keys(d["hresp"]) if n else np.zeros(0, np.int64)
    phash = d["phash"] if n else np.zeros(0, np.int64)
    return {"S": S}, {"phash": phash}, {"keys": keys}


def shard_assign(d: dict[str, Any], plan: dict[str, Any], quantizer: dict[str, Any],
                 encode: Callable[[Iterator[dict[str, Any]]], Any] | None = None, piece_rows: int = 16_384
                 ) -> list[Any]:
    """Every row to its nprobe nearest cells; per cell group, the rows that group needs (its cells' members and
    the rows probing them), then the shard's cell sizes. ``encode``: given each group's rows as pieces of at most
    ``piece_rows`` rows, cut as they are read (the Ray actor encodes each as it comes and parks the group's part
    for the group's actor to pull: ``engines/ray_exchange.py``); None: each group's rows as one dict."""
    n, nlist, groups = d["n"], plan["nlist"], plan["groups"]
    if nlist > 1 and n:
        S = _on_disk(d, "sums", d["P"].shape, np.float32, lambda out: sum_vectors(*(d[k] for k in VECTORS), out=out))
        assign = assign_cells(S, quantizer["centroids"], plan["nprobe"])
    else:
        assign = np.zeros((n, 1), np.int64)
    cell_group = np.asarray(quantizer["cell_group"], np.int64)
    pos = d["offset"] + np.arange(n)
    out, copies = [], 0
    for g in range(groups):
        sel = (cell_group[assign] == g).any(axis=1) if n else np.zeros(0, bool)
        cols = {"pos": pos, "rows": d["rows"], "assign": assign, "P": d["P"], "C": d["C"], "R": d["R"],
                "sk": d["sk"], "ln": d["ln"], "hresp": d["hresp"], "phash": d["phash"]}
        copies += int(sel.sum()) if n else 0
        if encode is None:
            out.append({k: v[sel] for k, v in cols.items()} if n else {})
        else:
            out.append(encode(_pieces(cols, np.flatnonzero(sel), piece_rows)))
    sizes = np.bincount(assign[:, 0], minlength=nlist) if n else np.zeros(nlist, np.int64)
    return [*out, {"cell_sizes": sizes, "copies": copies}]


def _pieces(cols: dict[str, Any], idx: np.ndarray, rows: int) -> Iterator[dict[str, Any]]:
    """The rows ``idx`` of ``cols``, ``rows`` at a time (a spilled column is read a piece at a time)."""
    for lo in range(0, len(idx), rows):
        at = idx[lo:lo + rows]
        yield {k: v[at] for k, v in cols.items()}


def shard_embed(stage: NearDuplicateStage, d: dict[str, Any], wanted: list[np.ndarray], sample: np.ndarray,
                timings: dict[str, float]) -> list[dict[str, Any]]:
    """Hybrid mode: the transformer vectors of this shard's candidate rows (``wanted``: per group, positions)
    and calibration-sample rows, once each; per group the vectors it asked for, then its counts of candidate rows
    and of those rows and sample rows together (for the driver)."""
    off, n = d["offset"], d["n"]
    cand = np.unique(np.concatenate([np.asarray(w, np.int64) for w in wanted])) if wanted else np.zeros(0, np.int64)
    mine = sample[(sample >= off) & (sample < off + n)]
    idx = np.union1d(cand, mine) - off
    Pt, Ct, Rt = stage._transformer_vectors(d["texts"], idx, timings) if len(idx) else (None, None, None)
    d["tvec"] = (idx, Ct, Rt)  # the calibration reads chosen and rejected (``shard_rows``), then they go
    out = []
    for w in wanted:
        at = np.searchsorted(idx, np.asarray(w, np.int64) - off)
        out.append({"pos": np.asarray(w, np.int64), "P": Pt[at], "C": Ct[at], "R": Rt[at]} if len(w) else {})
    return [*out, {"candidates": int(len(cand)), "rows": int(len(idx))}]


def shard_rows(d: dict[str, Any], positions: np.ndarray, space: str) -> dict[str, Any]:
    """Chosen and rejected vectors, sketches and lengths of some rows (calibration): ``space`` "deciding" (the
    rows' deciding vectors) or "transformer" (hybrid mode's second look)."""
    local = np.asarray(positions, np.int64) - d["offset"]
    if space == "transformer":
        idx, Ct, Rt = d["tvec"]
        at = np.searchsorted(idx, local)
        C, R = Ct[at], Rt[at]
    else:
        C, R = d["C"][local], d["R"][local]
    return {"pos": np.asarray(positions, np.int64), "C": C, "R": R, "sk": d["sk"][local], "ln": d["ln"][local]}


def shard_result(stage: NearDuplicateStage, d: dict[str, Any], best: list[dict[str, Any]], mode: str,
                 timings: dict[str, float], updates: list[dict[str, Any]] = ()  # type: ignore[assignment]
                 ) -> tuple[list[Any], dict[str, np.ndarray]]:
    """This shard's ``near_identical_pair`` findings and score columns (nearest neighbour: the best over the
    groups that searched its rows; the reason column from the nearest pair over those groups, ``updates``:
    the deciding rule's outcomes in hybrid mode)."""
    from pairaudit.stages.near_duplicates.near_identical import near_identical_findings
    from pairaudit.stages.near_duplicates.reasons import merge, updated

    n, off = d["n"], d["offset"]
    nearest = np.full(n, -np.inf, np.float32)
    for part in best:
        if len(part.get("pos", ())):
            np.maximum.at(nearest, np.asarray(part["pos"], np.int64) - off, np.asarray(part["best"], np.float32))
    nearest = np.where(np.isfinite(nearest), nearest, np.nan).astype(np.float64)
    findings = near_identical_findings(stage.ctx, d["rows"], d["pair_raw"], mode,
                                       lambda idx: stage._transformer_vectors(d["texts"], idx, timings, (1, 2)),
                                       d["texts"]) if n else []
    near = updated(merge(best, n, off), updates, off) if "near_duplicate_pair" in stage.enabled else None
    return findings, stage.score_columns(d["pair_raw"], nearest, near)


def shard_report(stage: NearDuplicateStage, mode: str) -> dict[str, Any]:
    """What this actor's stage adds to report.json, once a shard's result is taken: the models it used (into
    ``stage.ctx.models``, as the local stage records them) and the texts its transformer compared since the
    last report (``NearDuplicateStage.take_transformer_counts``), for ``driver_report``."""
    stage._record_models(mode)
    return stage.take_transformer_counts()


def driver_report(stage: NearDuplicateStage, stats: dict[str, Any], parts: list[dict[str, Any]]) -> None:
    """The shards' transformer counts (``shard_report``) summed into ``stats.near_duplicates.transformer``, and
    the local engine's log line when some texts were longer than the transformer reads."""
    from pairaudit.stages.near_duplicates.stage import transformer_report

    texts = sum(int(p["texts"]) for p in parts)
    if texts:
        cap = next(p["max_tokens"] for p in parts if p["texts"])
        transformer_report(stats, texts, sum(int(p["texts_cut"]) for p in parts), cap, stage.ctx.log)


# -- driver ------------------------------------------------------------------------------------------------------
def edges_findings(parts: list[dict[str, Any]], want_dups: bool, want_con: bool, stats: dict[str, Any],
                   counts: dict[str, float] | None = None) -> list[Any]:
    """Union-find over every group's verified edges, each pair once, in the local engine's pair order;
    ``counts``: edges, and edges whose rows' own cells lie in different groups (found across workers)."""
    from pairaudit.stages.near_duplicates.verify import edge_findings

    merged = {}
    rows_all = []
    for name in ("s", "x"):
        es = [p["edges"][name] for p in parts if len(p["edges"][name]["a"])]
        if not es:
            merged[name] = {k: v[:0] for k, v in no_edges()[name].items()}
            continue
        cat = {k: np.concatenate([e[k] for e in es]) for k in es[0]}
        _, first = np.unique(np.stack([cat["a"], cat["b"]], axis=1), axis=0, return_index=True)
        merged[name] = {k: v[first] for k, v in cat.items()}  # sorted by (a, b): the local pair order
        for end in ("a", "b"):  # each edge row: position, row number, prompt digest, same_keys
            m = merged[name]
            rows_all.append(np.stack([m[end], m[f"r{end}"], m[f"k{end}"], m[f"s{end}"]], axis=1))
    if rows_all:
        pr = np.unique(np.concatenate(rows_all), axis=0)
        pos, rows, keys = pr[:, 0], pr[:, 1], (pr[:, 2], pr[:, 3])
    else:
        pos = rows = np.zeros(0, np.int64)
        keys = (pos, pos)
    for e in merged.values():
        e["a"], e["b"] = np.searchsorted(pos, e["a"]), np.searchsorted(pos, e["b"])
        if counts is not None:
            counts["edges"] = counts.get("edges", 0.0) + len(e["a"])
            counts["edges_across_groups"] = counts.get("edges_across_groups", 0.0) + float(e["across"].sum())
            counts["edges_across_cells"] = counts.get("edges_across_cells", 0.0) + float(e["across_cells"].sum())
    es, ex = ({k: merged[n][k] for k in EDGE_FIELDS} for n in ("s", "x"))
    return edge_findings(rows, es, ex, want_dups, want_con, stats, keys)

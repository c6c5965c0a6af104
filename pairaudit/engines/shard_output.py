"""Outputs written where the data is (Ray engine): each worker writes its shard's part of findings,
scores and (for JSONL sources) the cleaned and dropped records into ``GEN/.shards/``; ``commit_parts``
then concatenates the parts in shard order, which is row order, into the output generation ``GEN``
(a folder every node must see: ``--out`` on a shared filesystem). The same functions as the local
engine decide (``outputs.tally``, ``outputs.scores.scores_frame``, ``outputs.records.write_jsonl_batches``).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from pairaudit.datatypes import Finding
from pairaudit.decisions import Decision, resolve
from pairaudit.io.formats import IMPLICIT_FORMATS
from pairaudit.output_files import FINDINGS, SCORES

PARTS = ".shards"
TAIL_COLUMNS = ("kept", "split", "split_row")  # written last, as the local engine does


def _part(tmp: Path, kind: str, s: int, ext: str) -> Path:
    return tmp / PARTS / f"{kind}-{s:06d}.{ext}"


def write_shard(s: int, spec: dict[str, Any], tmp: Path, findings: list[Finding], metrics: list[pl.DataFrame],
                stage_scores: list, plan: dict[str, Any], fmt: str | None, columns: Mapping[str, str],
                flip_checks: Iterable[str]) -> dict[str, Any]:
    """One shard's findings / scores / clean / dropped parts; returns counts and the shard's tally."""
    from pairaudit.io.readers import JsonlSource
    from pairaudit.outputs.folder import findings_table, write_parquet
    from pairaudit.outputs.records import write_jsonl_batches
    from pairaudit.outputs.scores import scores_frame
    from pairaudit.outputs.tally import Tally, dedupe, drops_and_flips

    (tmp / PARTS).mkdir(exist_ok=True)
    findings = dedupe(findings)
    drops, flips = drops_and_flips(findings, flip_checks)
    decisions = {int(r): Decision(**d) for r, d in plan["decisions"].items()}
    hashes: dict[int, str] = {}
    if decisions and metrics and "pair_hash" in metrics[0].columns:
        df = pl.concat([m.select("row", "pair_hash") for m in metrics if "pair_hash" in m.columns])
        df = df.filter(pl.col("row").is_in(sorted(decisions))).drop_nulls()
        hashes = dict(zip(df["row"].to_list(), df["pair_hash"].to_list()))
    resolution = resolve(decisions, drops, flips, hashes)
    write_parquet(findings_table(findings), _part(tmp, "findings", s, "parquet"))
    lf = scores_frame([m.lazy() for m in metrics], stage_scores, sorted(drops), plan["splits"])
    lf.sink_parquet(_part(tmp, "scores", s, "parquet"), compression="zstd")
    out: dict[str, Any] = {"tally": Tally.of(findings, drops).to_json(), "flips": sorted(flips),
                           "applied": resolution.applied, "ignored": resolution.ignored}
    if plan["write"] == "jsonl":
        with open(_part(tmp, "clean", s, "jsonl"), "wb") as fc, open(_part(tmp, "dropped", s, "jsonl"), "wb") as fd:
            batches = JsonlSource(Path(spec["path"])).raw_batches(5000, spec["start"], spec["end"], spec["line"])
            ep = bool(plan.get("explicit_prompt")) and fmt in IMPLICIT_FORMATS
            out["counts"] = write_jsonl_batches(batches, fc, fd, drops, flips, fmt or "standard", columns, ep)
    else:  # the driver writes clean/dropped from the rows to drop (only their numbers travel)
        out["drops"] = {str(r): v for r, v in drops.items()}
    return out


def commit_parts(tmp: Path, n_shards: int, data_names: list[str] | None) -> None:
    """Concatenate the parts in shard order into ``tmp``; ``data_names``: the clean/dropped JSONL files
    (None: the driver wrote them)."""
    import pyarrow.parquet as pq

    from pairaudit.outputs.folder import FINDINGS_SCHEMA

    with pq.ParquetWriter(tmp / FINDINGS, FINDINGS_SCHEMA, compression="zstd") as writer:
        for s in range(n_shards):
            writer.write_table(pq.read_table(_part(tmp, "findings", s, "parquet"), schema=FINDINGS_SCHEMA))
    scores = [pl.scan_parquet(_part(tmp, "scores", s, "parquet"), glob=False) for s in range(n_shards)]
    names: list[str] = []
    for lf in scores:
        names += [c for c in lf.collect_schema().names() if c not in names]
    names = [c for c in names if c not in TAIL_COLUMNS] + [c for c in TAIL_COLUMNS if c in names]
    pl.concat(scores, how="diagonal_relaxed").select(names).sink_parquet(tmp / SCORES,
                                                                         compression="zstd")
    for name in data_names or ():
        kind = name.split(".", 1)[0]
        with open(tmp / name, "wb") as dst:
            for s in range(n_shards):
                with open(_part(tmp, kind, s, "jsonl"), "rb") as src:
                    shutil.copyfileobj(src, dst, 1 << 20)
    shutil.rmtree(tmp / PARTS)

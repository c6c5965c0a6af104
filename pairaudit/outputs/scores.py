"""``scores.parquet``: one row per input record, every per-row metric, ``<check>_score`` columns.

During the scan each batch's metrics go to a part file (``write_part``); at the end ``write_scores``
joins the parts (each sorted by row, batches in row order) with the stages' score columns and streams
the result to ``scores.parquet`` without holding it all in memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl


def write_part(metrics: dict[str, list[Any]], folder: Path, parts: list[Path]) -> None:
    """One batch's metrics (column -> values) as the next part file in ``folder``."""
    part = folder / f".metrics-{len(parts):06d}.parquet"
    pl.DataFrame(metrics, infer_schema_length=None).sort("row").write_parquet(part)
    parts.append(part)


def write_scores(path: Path, parts: list[Path], stage_scores: list, drops: dict[int, list[str]],
                 splits: list[tuple[str, int, int]] | None) -> None:
    """Join the per-batch metric ``parts`` with the stages' ``(rows, columns)`` scores into ``path``,
    then remove the parts.

    Added columns: ``kept`` (bool: the row is in the cleaned output, review decisions included),
    and for several splits ``split`` / ``split_row``. Every float column holds null, never NaN,
    where no value was computed (a check off, a row a stage did not score, e.g. beyond
    ``--reference-max-rows``, or a model result that is NaN); +-inf are kept (overflows are data)."""
    lf = scores_frame([pl.scan_parquet(p, glob=False) for p in parts], stage_scores, sorted(drops), splits)
    lf.sink_parquet(path, compression="zstd")
    for p in parts:
        p.unlink()


def scores_frame(parts: list[pl.LazyFrame], stage_scores: list, dropped: list[int],
                 splits: list[tuple[str, int, int]] | None) -> pl.LazyFrame:
    """The scores table from per-batch metric frames (each sorted by row, in row order) and the stages'
    ``(rows, columns)`` scores: for the whole dataset (local engine) or one shard's rows (Ray engine)."""
    if parts:
        lf = pl.concat(parts, how="diagonal_relaxed")
    else:
        lf = pl.LazyFrame({"row": []}, schema={"row": pl.Int64})
    lf = lf.with_columns(pl.col("row").cast(pl.Int64))
    columns = set(lf.collect_schema().names())
    for rows, cols in stage_scores:
        extra = pl.DataFrame({"row": pl.Series("row", rows, dtype=pl.Int64),
                              **{k: _series(k, v) for k, v in cols.items() if k not in columns}})
        columns |= set(extra.columns)
        lf = lf.join(extra.lazy(), on="row", how="left", maintain_order="left")
    lf = lf.with_columns(_float_nan_to_null(lf))
    dropped_s = pl.Series("dropped", dropped, dtype=pl.Int64)
    lf = lf.with_columns((~pl.col("row").is_in(dropped_s.implode())).alias("kept"))
    if splits:
        lf = lf.with_columns(*_split_columns(splits))
    return lf


def _series(name: str, values: Any) -> pl.Series:
    """A stage's score column: numbers as they are; an object array of UTF-8 bytes (texts travel between
    workers as such) as strings, null where ``b""``."""
    v = np.asarray(values)
    if v.dtype.hasobject:
        return pl.Series(name, [x.decode("utf-8") if x else None for x in v.tolist()], dtype=pl.String)
    return pl.Series(name, v)


def part_hashes(parts: list[Path], rows: set[int]) -> dict[int, str]:
    """pair_hash of the given rows, from the metric parts (only the rows that have a review decision)."""
    if not parts:
        return {}
    df = pl.concat([pl.scan_parquet(p, glob=False) for p in parts], how="diagonal_relaxed")
    if "pair_hash" not in df.collect_schema():
        return {}
    df = df.select("row", "pair_hash").filter(pl.col("row").is_in(sorted(rows))).drop_nulls().collect()
    return dict(zip(df["row"].to_list(), df["pair_hash"].to_list()))


def _float_nan_to_null(lf: pl.LazyFrame) -> list[pl.Expr]:
    schema = lf.collect_schema()
    return [pl.col(c).fill_nan(None) for c, t in schema.items() if t in (pl.Float32, pl.Float64)]


def _split_columns(splits: list[tuple[str, int, int]]) -> list[pl.Expr]:
    """``split`` (name) and ``split_row`` (index within the split) from the global row number."""
    name: Any = pl.lit(None, dtype=pl.Utf8)
    first: Any = pl.lit(None, dtype=pl.Int64)
    for split, start, n in reversed(splits):
        inside = (pl.col("row") >= start) & (pl.col("row") < start + n)
        name = pl.when(inside).then(pl.lit(split)).otherwise(name)
        first = pl.when(inside).then(pl.lit(start, dtype=pl.Int64)).otherwise(first)
    return [name.alias("split"), (pl.col("row") - first).alias("split_row")]

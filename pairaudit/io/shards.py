"""Split a source into independent shards that a worker can reopen and read on its own.

Row numbers stay those of the output contract (docs/contract.md): a JSONL shard starts at a line boundary and knows
the physical line number it starts at (line-aligned byte ranges of about equal size); a Parquet shard is a run of
whole row groups of one file (about equal uncompressed bytes; a file of one row group is one shard); other sources
shard by index ranges. Specs are plain dicts
(picklable, no open handles).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pairaudit.errors import ConfigError
from pairaudit.io.base import arrow_records, plain_schema
from pairaudit.io.hf import MultiSplitSource
from pairaudit.io.readers import (
    HFSource,
    JsonArraySource,
    JsonlSource,
    ParquetSource,
    Record,
    Source,
    _parquet_file,
    batched,
    conform,
    json_item_record,
)

SHARD_BYTES = 40 * 2**20  # a default shard's source bytes at most (JSONL file bytes, Parquet uncompressed bytes)
SHARD_ROWS = 25_000  # a default shard's rows at most where the source's bytes are not known (datasets, arrays)


def default_shard_count(source: Source, at_least: int) -> int:
    """How many shards a scan cuts ``source`` into by default: ``at_least`` (e.g. two per worker), more where the
    source is large, so that no shard holds more than ``SHARD_BYTES`` of it (``SHARD_ROWS`` rows where its bytes
    are not known). A worker's memory for one shard's operation is then bounded whatever the dataset's size
    (docs/scale.md), and the shards handed to whichever worker is free even out the work.

    Args:
        source: an opened source (``io.readers.open_source``).
        at_least: the smallest number of shards.

    Returns:
        The number of shards (``plan_shards`` may make fewer: a compressed JSONL file is one shard, a Parquet
        row group is never split).

    Example:
        >>> from pairaudit.io.readers import JsonlSource
        >>> default_shard_count(JsonlSource("examples/hh-rlhf-helpful-base-500.jsonl"), 4)
        4
    """
    import math

    if isinstance(source, ParquetSource):
        size: int | None = sum(int(s.sum()) for _, _, s in _row_group_bytes(source))
    else:
        amount, unit = source.progress_total()  # JSONL: its file's bytes (None when compressed); else rows
        if unit != "bytes":
            return max(at_least, math.ceil((amount or 0) / SHARD_ROWS))
        size = amount
    return max(at_least, math.ceil(size / SHARD_BYTES)) if size is not None else at_least


def _row_group_bytes(source: ParquetSource) -> list[tuple[str, Any, Any]]:
    """Per file of a Parquet source: (path, metadata, each row group's uncompressed bytes as an int64 array)."""
    import numpy as np
    import pyarrow.parquet as pq

    metas = [(str(f), pq.ParquetFile(f).metadata) for f in source.files]
    return [(f, m, np.array([m.row_group(i).total_byte_size for i in range(m.num_row_groups)], np.int64))
            for f, m in metas]


def plan_shards(source: Source, n: int) -> list[dict[str, Any]]:
    if not getattr(source, "shardable", True):
        what = source.describe().get("type") or source.kind
        raise ConfigError(f"a {what} source cannot be split into shards for another process"
                          + (" (several splits)" if getattr(source, "splits", None) else ""),
                          fix="use --engine local, or save the data to a file or a save_to_disk folder and scan "
                              "one split of it")
    n = max(1, n)
    if isinstance(source, JsonlSource):
        return _jsonl_shards(source, n)
    if isinstance(source, MultiSplitSource):  # index ranges per split; rows run on over the splits
        total = max(1, source.total)
        specs = []
        for name, offset, ds in source.parts:
            k = max(1, round(n * len(ds) / total))
            bounds = [round(i * len(ds) / k) for i in range(k + 1)]
            specs += [{"kind": source.kind, "path": source.path, "split": name, "start": a, "stop": b,
                       "row_offset": offset} for a, b in zip(bounds, bounds[1:]) if b > a]
        return specs or [{"kind": source.kind, "path": source.path, "split": source.parts[0][0], "start": 0,
                          "stop": 0, "row_offset": 0}]
    if isinstance(source, ParquetSource):
        return _parquet_shards(source, n)
    total = source.total or 0
    bounds = [round(i * total / n) for i in range(n + 1)]
    base: dict[str, Any] = {"kind": source.kind, "path": source.path}
    if isinstance(source, HFSource):
        base["split"] = source.split
    return [{**base, "start": a, "stop": b} for a, b in zip(bounds, bounds[1:]) if b > a] or [{**base, "start": 0,
                                                                                              "stop": 0}]


def _jsonl_shards(source: JsonlSource, n: int) -> list[dict[str, Any]]:
    path = Path(source.path)
    if source.gz or source.encoding:  # compressed, or UTF-16/32: read from its start, in one shard
        return [{"kind": "jsonl", "path": str(path), "start": 0, "end": None, "line": 0, "gz": True}]
    size = path.stat().st_size
    cuts = [0]
    with open(path, "rb") as fh:
        for i in range(1, n):
            fh.seek(max(cuts[-1], i * size // n))
            if fh.tell() > 0:
                fh.seek(fh.tell() - 1)
                fh.readline()  # move to the start of the next line
            pos = fh.tell()
            if cuts[-1] < pos < size:
                cuts.append(pos)
    cuts.append(size)
    specs, line = [], 0
    with open(path, "rb") as fh:
        for a, b in zip(cuts, cuts[1:]):
            specs.append({"kind": "jsonl", "path": str(path), "start": a, "end": b, "line": line, "gz": False})
            fh.seek(a)
            remaining = b - a
            while remaining > 0:
                chunk = fh.read(min(1 << 24, remaining))
                line += chunk.count(b"\n")
                remaining -= len(chunk)
    return specs


def _parquet_shards(source: ParquetSource, n: int) -> list[dict[str, Any]]:
    """Runs of whole row groups of about 1/n of the source's bytes (uncompressed, from the files' metadata), never
    across files: a file of many row groups becomes several shards (as many as its share of the bytes, cut where
    its running byte count is nearest each equal fraction), a file of one row group stays one (a row group is the
    smallest piece a reader can seek to)."""
    import numpy as np

    files = _row_group_bytes(source)
    target = max(1.0, sum(int(size.sum()) for _, _, size in files) / n)
    specs: list[dict[str, Any]] = []
    offset = 0
    for f, m, size in files:
        if m.num_row_groups == 0:
            specs.append({"kind": "parquet", "file": f, "row_offset": offset, "row_groups": None})
            continue
        rows = np.cumsum([m.row_group(i).num_rows for i in range(m.num_row_groups)])
        for a, b in _row_group_runs(size, max(1, round(int(size.sum()) / target))):
            specs.append({"kind": "parquet", "file": f, "row_offset": offset + (int(rows[a - 1]) if a else 0),
                          "row_groups": [a, b]})
        offset += int(rows[-1])
    return specs


def _row_group_runs(size: Any, k: int) -> list[tuple[int, int]]:
    """``k`` (at most one per row group) runs of row groups, cut where the running bytes are nearest j/k of them."""
    import numpy as np

    ends = np.cumsum(size)
    cuts = [0]
    for j in range(1, min(k, len(size))):
        i = int(np.argmin(np.abs(ends - j * ends[-1] / k))) + 1  # cut after row group i - 1
        if cuts[-1] < i < len(size):
            cuts.append(i)
    cuts.append(len(size))
    return list(zip(cuts, cuts[1:]))


def read_shard(spec: dict[str, Any], batch_size: int) -> Iterator[list[Record]]:
    kind = spec["kind"]
    if kind == "jsonl":
        yield from JsonlSource(Path(spec["path"])).batches(batch_size, spec["start"], spec["end"], spec["line"])
    elif kind == "parquet":  # the local reader's way (``ParquetSource``): its file opening and records
        row, groups = spec["row_offset"], spec.get("row_groups")
        run = range(*groups) if groups else None  # None: the whole file
        f = _parquet_file(Path(spec["file"]))
        schema = plain_schema(f.schema_arrow)  # dictionary / view columns read as plain strings
        for rb in f.iter_batches(batch_size=batch_size, row_groups=run):
            yield arrow_records(list(range(row, row + rb.num_rows)), conform(rb, schema))
            row += rb.num_rows
    elif kind == "json":
        src = JsonArraySource(Path(spec["path"]))
        items = src.items[spec["start"]:spec["stop"]]
        yield from batched((json_item_record(spec["start"] + i, it) for i, it in enumerate(items)), batch_size)
    else:  # hf_disk / hf_hub
        from pairaudit.io.readers import open_source

        src = open_source(spec["path"], split=spec.get("split"))
        assert isinstance(src, HFSource)
        offset = spec.get("row_offset", 0)
        for recs in src.batches(batch_size, spec["start"], spec["stop"]):
            yield [Record(offset + r.row, r.data, r.error, r.field) for r in recs] if offset else recs


def first_row(spec: dict[str, Any]) -> int:
    """The row number of a shard's first record (shards are planned in row order)."""
    if spec["kind"] == "jsonl":
        return int(spec["line"])
    if spec["kind"] == "parquet":
        return int(spec["row_offset"])
    return int(spec.get("row_offset", 0)) + int(spec["start"])

"""Sources for Python objects handed to ``pairaudit.scan``: a ``datasets.Dataset`` / ``DatasetDict`` /
``IterableDataset``, a polars or pandas DataFrame (or a pyarrow Table), or an iterable of dicts.

Row numbers are positions (0-based) in the object, as for every non-JSONL source. Clean and dropped
outputs are written in a format that matches the object:

==========================  =====================================================================
input                       ``clean`` / ``dropped`` in the output folder
==========================  =====================================================================
``datasets.Dataset``        ``clean/`` and ``dropped/`` ``save_to_disk`` folders
``DatasetDict`` (splits)    ``clean/`` a ``DatasetDict`` folder with the scanned splits (see ``io.hf``)
``IterableDataset``         ``clean.parquet`` / ``dropped.parquet`` written while streaming
polars / pandas / pyarrow   ``clean.parquet`` / ``dropped.parquet`` (pandas: the index is not kept)
pandas, mixed column types  ``clean.jsonl`` / ``dropped.jsonl``: read record by record (``pandas_source``)
iterable of dicts           ``clean.jsonl`` / ``dropped.jsonl``
==========================  =====================================================================

An ``IterableDataset`` is streamed twice (checks, then writing), one batch in memory at a time. A
one-shot iterator of dicts (a generator) is spooled to a temporary JSONL file while it is read, so it
can be read a second time; a list or tuple is indexed directly. Python sources cannot be sharded for
``--engine ray`` (they live in this process) and cannot be re-read by ``pairaudit apply`` / ``show``
from the folder alone: reviews read the texts back from the clean/dropped outputs, and
``apply_decisions(out, source=obj)`` takes the object again.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import sys
import tempfile
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pairaudit.errors import InputError
from pairaudit.io.base import Record, Source, arrow_records, batched, plain_schema
from pairaudit.io.hf import DatasetSource, IterableSource, select_splits

ACCEPTED = ("a path (.jsonl/.json/.parquet file or folder, save_to_disk folder, hub id), a datasets.Dataset / "
            "DatasetDict / IterableDataset, a polars or pandas DataFrame, a pyarrow Table, or an iterable of "
            "dicts")


def type_name(obj: Any) -> str:
    mod = type(obj).__module__.split(".")[0]
    return f"{mod}.{type(obj).__name__}" if mod != "builtins" else type(obj).__name__


def _isinstance(obj: Any, module: str, names: tuple[str, ...]) -> bool:
    """``isinstance`` against classes of ``module`` without importing it (if the module was never
    imported, ``obj`` cannot be one of its objects)."""
    mod = sys.modules.get(module)
    if mod is None:
        return False
    classes = tuple(c for c in (getattr(mod, n, None) for n in names) if isinstance(c, type))
    return bool(classes) and isinstance(obj, classes)


def open_python_source(obj: Any, *, split: Any = None) -> Source:
    """The :class:`Source` for an in-memory object (see the module docstring)."""
    if _isinstance(obj, "datasets", ("DatasetDict", "IterableDatasetDict")):
        return select_splits(obj, split, where=f"the {type_name(obj)}", path=None, kind="dataset")
    if _isinstance(obj, "datasets", ("Dataset",)):
        return DatasetSource(obj)
    if _isinstance(obj, "datasets", ("IterableDataset",)):
        return IterableSource(obj)
    if _isinstance(obj, "polars", ("LazyFrame",)):
        raise InputError("a polars LazyFrame cannot be scanned as it is",
                         fix="collect it first (lf.collect()), or write it to Parquet and scan the file")
    if _isinstance(obj, "polars", ("DataFrame",)):
        return ArrowSource(obj.to_arrow(), "polars.DataFrame")
    if _isinstance(obj, "pandas", ("DataFrame",)):
        return pandas_source(obj)
    if _isinstance(obj, "pyarrow", ("Table",)):
        return ArrowSource(obj, "pyarrow.Table")
    if isinstance(obj, Mapping):
        raise InputError(f"a single {type_name(obj)} was passed, not a dataset",
                         expected="an iterable of records (dicts), e.g. a list",
                         fix="wrap one record in a list: pairaudit.scan([record])")
    if isinstance(obj, (bytes, bytearray)):
        raise InputError("bytes were passed as the source", expected=ACCEPTED)
    if isinstance(obj, Iterable):
        return DictsSource(obj)
    raise InputError(f"cannot scan a {type_name(obj)}", expected=ACCEPTED)


def duplicate_columns(names: list[str], what: str, fix: str) -> None:
    """An InputError when a column name occurs twice (Arrow and Parquet need one column per name)."""
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(f"the {what} has {len(names)} columns and {', '.join(map(repr, dupes))} occurs more than once "
                         f"({names[:20]})", expected="one column per name",
                         fix=f"rename the columns so each name occurs once, or keep the first of each: {fix}")


def mixed_columns(df: Any) -> dict[str, list[str]]:
    """The pandas object columns whose cells mix Python types, e.g. text and a number or bytes (Arrow,
    hence Parquet, holds one type per column): column -> the type names found."""
    out = {}
    for name in df.columns[df.dtypes == object]:  # noqa: E721 - pandas' object dtype
        kinds = {type(v).__name__ for v in df[name] if not _missing(v)}
        if len(kinds) > 1:
            out[str(name)] = sorted(kinds)
    return out


def _missing(v: Any) -> bool:
    """pandas' missing values: None, NaN, pd.NA, NaT."""
    return v is None or (isinstance(v, float) and v != v) or type(v).__name__ in ("NAType", "NaTType")


def pandas_source(df: Any) -> Source:
    """A pandas DataFrame: an Arrow table (Parquet outputs), or, when a column mixes types (a number or bytes in
    a text column), its records one by one, each cell as it is, so that a mistyped cell is one malformed row
    as on a JSONL line (JSONL outputs, which hold any type)."""
    import pyarrow as pa

    duplicate_columns([str(c) for c in df.columns], "pandas DataFrame", "df = df.loc[:, ~df.columns.duplicated()]")
    mixed = mixed_columns(df)
    if not mixed:
        try:
            return ArrowSource(pa.Table.from_pandas(df, preserve_index=False), "pandas.DataFrame")
        except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as exc:
            mixed = {"?": [str(exc)[:200]]}
    src = DictsSource(df.to_dict("records"))
    src.what = "pandas.DataFrame"
    src.note = ("columns that mix types (" + "; ".join(f"{c}: {', '.join(k)}" for c, k in mixed.items())
                + "): read record by record, a mistyped cell is a malformed row; outputs are JSONL, which holds "
                "any type (Parquet holds one type per column)")
    return src


class ArrowSource(Source):
    """A polars / pandas DataFrame or pyarrow Table (converted to Arrow once); Parquet outputs."""

    kind = "dataframe"
    ext = "parquet"
    writes_as = "parquet"
    shardable = False

    def __init__(self, table: Any, what: str) -> None:
        duplicate_columns(table.column_names, what, "table = table.select([i for i, n in "
                          "enumerate(table.column_names) if n not in table.column_names[:i]])")
        plain = plain_schema(table.schema)  # dictionary / view columns read as plain (io.base.plain_schema)
        self.table = table if plain is table.schema else table.cast(plain)
        self.schema = plain
        self.what = what
        self.path = None  # type: ignore[assignment]

    @property
    def total(self) -> int:
        return int(self.table.num_rows)

    def raw_batches(self, batch_size: int) -> Iterator[tuple[list[int], Any]]:
        row = 0
        for rb in self.table.to_batches(max_chunksize=batch_size):
            if rb.num_rows:
                yield list(range(row, row + rb.num_rows)), rb
                row += rb.num_rows

    def batches(self, batch_size: int) -> Iterator[list[Record]]:
        for rows, rb in self.raw_batches(batch_size):
            yield arrow_records(rows, rb)

    def describe(self) -> dict[str, Any]:
        out = {"path": None, "kind": self.kind, "type": self.what, "rows": self.total}
        if self.source_notes():
            out["notes"] = self.source_notes()
        return out


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return value.tolist()
    if isinstance(value, (_dt.date, _dt.datetime, _dt.time)):
        return value.isoformat()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, (bytes, bytearray)):  # text as text; other bytes kept, losslessly
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            import base64

            return {"bytes_base64": base64.b64encode(bytes(value)).decode("ascii")}
    return str(value)


def to_json_line(item: Any) -> bytes:
    """One JSONL line for a Python record (numpy values as lists/numbers, dates as ISO text, bytes as text
    when they are UTF-8 and as ``{"bytes_base64": ...}`` otherwise, other non-JSON values as their ``str``)."""
    return json.dumps(item, ensure_ascii=False, default=_json_default).encode("utf-8", "surrogatepass")


class DictsSource(Source):
    """An iterable of dicts (rows = positions). Non-dict items become ``malformed_record`` rows.

    A list or tuple is indexed directly; any other iterable is read once and spooled to a temporary
    JSONL file (deleted with the source) so that the writer can read it again."""

    kind = "records"
    ext = "jsonl"
    writes_as = "jsonl"
    shardable = False

    def __init__(self, items: Iterable[Any]) -> None:
        self.what = type_name(items)
        self.path = None  # type: ignore[assignment]
        self.items: Sequence[Any] | None = items if isinstance(items, Sequence) else None
        self._iter: Iterator[Any] | None = None if self.items is not None else iter(items)
        self._spool: Path | None = None
        self._spooled = False

    @property
    def total(self) -> int | None:
        return len(self.items) if self.items is not None else None

    def _items(self) -> Iterator[tuple[Any, bytes | None]]:
        """(item, its JSON line when already known)."""
        if self.items is not None:
            for item in self.items:
                yield item, None
            return
        if self._spooled:
            assert self._spool is not None
            with open(self._spool, "rb") as fh:
                for line in fh:
                    yield None, line.rstrip(b"\n")
            return
        if self._iter is None:
            raise InputError("the iterator of records was already consumed by an earlier, unfinished read",
                             fix="pass a list, or a fresh iterator")
        fd, name = tempfile.mkstemp(prefix="pairaudit-records-", suffix=".jsonl")
        self._spool = Path(name)
        weakref.finalize(self, _unlink, name)
        it, self._iter = self._iter, None
        with os.fdopen(fd, "wb") as fh:
            for item in it:
                line = to_json_line(item)
                fh.write(line + b"\n")
                yield item, line
        self._spooled = True

    def batches(self, batch_size: int) -> Iterator[list[Record]]:
        def records() -> Iterator[Record]:
            for i, (item, line) in enumerate(self._items()):
                if item is None and line is not None:
                    item = json.loads(line)
                if isinstance(item, Mapping):
                    yield Record(i, item if isinstance(item, dict) else dict(item))
                else:
                    yield Record(i, None, f"item {i} is a {type_name(item)}, expected a dict with chosen/rejected "
                                          "fields; fix: pass records as dicts")
        return batched(records(), batch_size)

    def raw_batches(self, batch_size: int) -> Iterator[tuple[list[int], list[bytes]]]:
        """JSON lines of the records (the JSONL writer writes kept ones as they are)."""
        def lines() -> Iterator[tuple[int, bytes]]:
            for i, (item, line) in enumerate(self._items()):
                yield i, line if line is not None else to_json_line(item)
        for chunk in batched(lines(), batch_size):
            rows, raws = zip(*chunk)
            yield list(rows), list(raws)

    def describe(self) -> dict[str, Any]:
        out = {"path": None, "kind": self.kind, "type": self.what, "rows": self.total}
        notes = [self.note] if getattr(self, "note", None) else []
        if notes or self.source_notes():
            out["notes"] = [*notes, *self.source_notes()]
        return out


def _unlink(name: str) -> None:
    try:
        os.unlink(name)
    except OSError:
        pass

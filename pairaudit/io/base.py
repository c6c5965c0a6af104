"""What every source yields: ``Record`` batches with the contract row numbers (docs/contract.md), and the ``Source``
interface the pipeline and the writers use. The concrete sources live in ``io.readers`` (files),
``io.hf`` (datasets objects and splits) and ``io.python_sources`` (DataFrames, dicts)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(slots=True)
class Record:
    row: int
    data: dict[str, Any] | None
    error: str | None = None
    field: str | None = None


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of ``size`` items (the last one shorter)."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class Source:
    """A readable preference source. ``kind`` is jsonl | json | parquet | hf_disk | hf_hub, or for
    Python objects dataset | iterable_dataset | dataframe | records.

    ``writes_as`` (default: ``kind``) picks the writer for clean/dropped outputs; ``shardable`` is
    False for sources that cannot be reopened elsewhere (``--engine ray``); ``splits`` lists
    (split, first row, rows) when several splits are scanned as one source.
    """

    kind: str
    path: str
    ext: str  # output extension for clean/dropped
    shardable: bool = True
    splits: list[tuple[str, int, int]] | None = None

    def batches(self, batch_size: int) -> Iterator[list[Record]]:
        raise NotImplementedError

    def raw_batches(self, batch_size: int) -> Iterator[tuple[list[int], Any]]:
        """Original records for the writer: (rows, raw batch) in source order."""
        raise NotImplementedError

    def records_at(self, rows: Iterable[int], batch_size: int = 1000) -> Iterator[Record]:
        """The records of ``rows`` that the source holds, in row order, read no further than the last of them
        (the report's and the review's examples). A source may skip parsing the other rows (JSON lines does).

        Args:
            rows: row numbers (docs/contract.md).
            batch_size: records read at a time.

        Returns:
            An iterator of the records.
        """
        wanted = set(rows)
        last = max(wanted, default=-1)
        for batch in self.batches(batch_size):
            yield from (rec for rec in batch if rec.row in wanted)
            if not batch or batch[-1].row >= last:
                return

    @property
    def total(self) -> int | None:
        return None

    def progress_total(self) -> tuple[int | None, str]:
        return self.total, "rows"

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "kind": self.kind}
        if self.source_notes():
            out["notes"] = self.source_notes()
        return out

    def source_notes(self) -> list[str]:
        """What the scan should say about how this source was read (``report.json`` ``source.notes``, printed
        as warnings): e.g. a ``--split`` given for a source that has no splits."""
        notes = []
        split = getattr(self, "ignored_split", None)
        if split is not None:
            notes.append(f"--split {split} was ignored: a {self.kind} source is one table without splits (every "
                         "record was scanned); splits belong to a DatasetDict (its save_to_disk folder, a hub id)")
        subset = getattr(self, "ignored_subset", None)
        if subset is not None:
            notes.append(f"--subset {subset} was ignored: a subset names a hub dataset's configuration, and a "
                         f"{self.kind} source is read as it is (every record was scanned); to scan one "
                         "configuration, pass the hub id, or the file or save_to_disk folder of that configuration")
        return notes


def arrow_records(rows: list[int], table: Any) -> list[Record]:
    """The records of an Arrow table or record batch (rows ``rows``), the one way every container of Arrow
    data (Parquet, ``save_to_disk``, hub datasets, DataFrames, Arrow tables, streams) turns its rows into
    Python: a row whose string cell is not valid UTF-8 becomes one malformed record, like the same bytes
    on a JSONL line, and the rows around it are read as usual."""
    try:
        return [Record(r, d) for r, d in zip(rows, table.to_pylist())]
    except UnicodeDecodeError:
        return [_arrow_row(r, table.slice(i, 1)) for i, r in enumerate(rows)]


def _arrow_row(row: int, one: Any) -> Record:
    """The record of a one-row Arrow table, or a malformed record naming the column it cannot decode."""
    try:
        return Record(row, one.to_pylist()[0])
    except UnicodeDecodeError:
        for name, column in zip(one.schema.names, one.columns):
            try:
                column.to_pylist()
            except UnicodeDecodeError as exc:
                byte = exc.object[exc.start] if exc.start < len(exc.object) else 0
                return Record(row, None, f"invalid UTF-8 in column {name!r} at byte {exc.start} (0x{byte:02x}); "
                                         "fix: re-encode that column's text as UTF-8 (e.g. "
                                         "bytes.decode('latin-1') in the script that wrote it)", name)
        raise


def lossy_pylist(table: Any) -> list[dict[str, Any]]:
    """``table.to_pylist()`` with every string that is not valid UTF-8 decoded with U+FFFD for its bad bytes
    (string columns, nested ones included, are read as bytes first): for reading back a dropped record
    whose bytes were kept as read."""
    try:
        return table.to_pylist()
    except UnicodeDecodeError:
        return undecodable_cells(table)[0]


def plain_schema(schema: Any) -> Any:
    """``schema`` with its top-level dictionary-encoded and view columns as their plain types (a dictionary of
    strings -> string, ``string_view`` -> string, ``binary_view`` -> binary): what every reader path takes,
    one path for string columns whatever the container (a Parquet writer may dictionary-encode any column).

    Args:
        schema: an Arrow schema.

    Returns:
        The schema with plain types (the same object when nothing changes).

    Example:
        >>> import pyarrow as pa
        >>> plain_schema(pa.schema([("chosen", pa.dictionary(pa.int32(), pa.string()))])).types
        [DataType(string)]
    """
    import pyarrow as pa

    def plain(t: Any) -> Any:
        if pa.types.is_dictionary(t):
            return plain(t.value_type)
        if t == pa.string_view():
            return pa.string()
        if t == pa.binary_view():
            return pa.binary()
        return t

    fields = [f.with_type(plain(f.type)) for f in schema]
    if all(f.type == g.type for f, g in zip(fields, schema)):
        return schema
    return pa.schema(fields, metadata=schema.metadata)


def undecodable_cells(table: Any) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]] | None]]:
    """The records of an Arrow table whose string cells may not be valid UTF-8, made valid (U+FFFD for each
    bad byte, as :func:`lossy_pylist`), and per row the cells that were not, with their bytes as read:
    ``[{"column": "chosen", "bytes": b"bad \\xff"}]`` (a nested cell: ``"chosen[1].content"``), or None.
    What dropped.parquet / ``dropped/`` keep for such a row: readable by every reader, and lossless.

    Example:
        >>> import pyarrow as pa
        >>> t = pa.table({"chosen": pa.array([b"ok", b"bad \\xff"], pa.binary()).view(pa.string())})
        >>> undecodable_cells(t)
        ([{'chosen': 'ok'}, {'chosen': 'bad \\ufffd'}], [None, [{'column': 'chosen', 'bytes': b'bad \\xff'}]])
    """
    import pyarrow as pa

    schema = pa.schema([f.with_type(_as_binary(f.type)) for f in table.schema])
    raw = table.cast(schema).to_pylist()
    bad: list[list[dict[str, Any]] | None] = []
    for d in raw:
        cells: list[dict[str, Any]] = []
        _collect_bad(d, "", cells)
        bad.append(cells or None)
    return [_text(d) for d in raw], bad


def _collect_bad(v: Any, path: str, out: list[dict[str, Any]]) -> None:
    if isinstance(v, bytes):
        try:
            v.decode("utf-8")
        except UnicodeDecodeError:
            out.append({"column": path, "bytes": v})
    elif isinstance(v, dict):
        for k, x in v.items():
            _collect_bad(x, f"{path}.{k}" if path else str(k), out)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            _collect_bad(x, f"{path}[{i}]", out)


def _as_binary(t: Any) -> Any:
    import pyarrow as pa

    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pa.large_binary() if pa.types.is_large_string(t) else pa.binary()
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_as_binary(f.type)) for f in t])
    if pa.types.is_large_list(t):
        return pa.large_list(_as_binary(t.value_type))
    if pa.types.is_list(t):
        return pa.list_(_as_binary(t.value_type))
    return t


def _text(v: Any) -> Any:
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, dict):
        return {k: _text(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_text(x) for x in v]
    return v

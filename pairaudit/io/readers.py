"""Source readers. Each yields ``Record`` batches with the contract row numbers (docs/contract.md).

JSONL rows are 0-based physical line numbers (blank lines yield no record); everything else is the
index within the split. A line that cannot be decoded or parsed is still a record, with ``error``
set, so it becomes a ``malformed_record`` finding instead of stopping the run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pairaudit.errors import InputError
from pairaudit.io.base import Record, Source, arrow_records, batched, plain_schema
from pairaudit.io.hf import HFSource, choose_splits, select_splits, single_split_name
from pairaudit.io.jsontext import array_items, gzip_lines, parse_json_line

__all__ = ["HFSource", "Record", "Source", "batched", "open_source", "parse_json_line"]

BOM = b"\xef\xbb\xbf"
# byte-order marks of the wider Unicode encodings (UTF-32 first: its LE mark starts like UTF-16's)
WIDE_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe", "utf-16"),
             (b"\xfe\xff", "utf-16"))


def sniff_encoding(head: bytes) -> str | None:
    """``utf-16`` / ``utf-32`` for a file that starts with their byte-order mark, else None (UTF-8)."""
    return next((enc for bom, enc in WIDE_BOMS if head.startswith(bom)), None)


def _decoded_lines(path: str, encoding: str) -> Iterator[bytes]:
    """Lines of a UTF-16/32 file re-encoded as UTF-8 (with their ``\n``), split on ``\n`` only like the
    UTF-8 reader; an undecodable code unit becomes U+FFFD (an ``encoding_error`` finding)."""
    with open(path, encoding=encoding, errors="replace", newline="") as fh:
        pending = ""
        while chunk := fh.read(1 << 20):
            lines = (pending + chunk).split("\n")
            pending = lines.pop()
            for line in lines:
                yield line.encode("utf-8", "surrogatepass") + b"\n"
        if pending:
            yield pending.encode("utf-8", "surrogatepass")


class JsonlSource(Source):
    kind = "jsonl"
    ext = "jsonl"

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self.gz = path.name.endswith(".gz")
        self.bytes_read = 0
        self.damage: list[str] = []  # what went wrong reading a damaged .gz (rows before it are kept)
        self.notes: list[str] = []  # what was read as gzip -dc reads it (trailing bytes ignored)
        with open(path, "rb") as fh:
            self.encoding = None if self.gz else sniff_encoding(fh.read(4))
        if self.gz:
            with open(path, "rb") as fh:
                magic = fh.read(2)
            if magic and magic != b"\x1f\x8b":
                raise InputError(f"{path} is named .gz but is not gzip-compressed (it starts with {magic!r})",
                                 fix="rename it to .jsonl if it is plain JSON lines, or compress it with gzip")

    def _raw_lines(self, start: int) -> Iterator[bytes]:
        if self.gz:
            self.damage, self.notes = [], []
            yield from gzip_lines(self.path, self.damage, self.notes)
            return
        if self.encoding:  # UTF-16/32: read whole (one shard), as UTF-8 lines
            yield from _decoded_lines(self.path, self.encoding)
            return
        with open(self.path, "rb") as fh:
            if start:
                fh.seek(start)
            yield from fh

    def lines(self, start: int = 0, end: int | None = None, first_line: int = 0) -> Iterator[tuple[int, bytes]]:
        """(physical 0-based line number, raw bytes without line ending) for non-blank lines.

        ``start``/``end`` bound a byte range that begins at a line start, ``first_line`` being that
        line's number (a shard of the file, see ``io.shards``); by default the whole file.
        """
        self.bytes_read = 0
        pos = start
        for i, line in enumerate(self._raw_lines(start), first_line):
            if end is not None and pos >= end:
                break
            pos += len(line)
            self.bytes_read += len(line)
            if i == 0 and line.startswith(BOM):
                line = line[3:]
            line = line.rstrip(b"\r\n")
            if not line.strip():
                continue
            yield i, line

    def batches(self, batch_size: int, start: int = 0, end: int | None = None,
                first_line: int = 0) -> Iterator[list[Record]]:
        records = (Record(i, *parse_json_line(raw)) for i, raw in self.lines(start, end, first_line))
        return batched(records, batch_size)

    def records_at(self, rows: Iterable[int], batch_size: int = 1000) -> Iterator[Record]:
        """``Source.records_at``: only the wanted lines are parsed (a report's examples from a 1M-row file)."""
        wanted = set(rows)
        last = max(wanted, default=-1)
        for i, raw in self.lines():
            if i > last:
                return
            if i in wanted:
                yield Record(i, *parse_json_line(raw))

    def raw_batches(self, batch_size: int, start: int = 0, end: int | None = None,
                    first_line: int = 0) -> Iterator[tuple[list[int], list[bytes]]]:
        for chunk in batched(self.lines(start, end, first_line), batch_size):
            rows, raws = zip(*chunk)
            yield list(rows), list(raws)

    def progress_total(self) -> tuple[int | None, str]:
        return (None if self.gz else os.path.getsize(self.path)), "bytes"

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        if self.encoding:
            out["encoding"] = self.encoding  # read as such; clean.jsonl is written as UTF-8
        if self.damage:
            out["damage"] = self.damage[0]
        if self.notes:
            out["notes"] = [*out.get("notes", []), *self.notes]
        return out


class _RawItem(bytes):
    """An array item kept as raw bytes because the whole document could not be parsed at once."""


def json_item_record(row: int, item: Any) -> Record:
    """The record of one JSON-array item (parsed on its own when it is a raw item)."""
    if isinstance(item, _RawItem):
        return Record(row, *parse_json_line(bytes(item)))
    if isinstance(item, dict):
        return Record(row, item)
    return Record(row, None, f"item holds a JSON {type(item).__name__}, expected an object")


class JsonArraySource(Source):
    kind = "json"
    ext = "json"

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        with open(path, "rb") as fh:
            data = fh.read()
        encoding = sniff_encoding(data[:4])
        if encoding:  # UTF-16/32 with a byte-order mark: read as UTF-8 from here on
            data = data.decode(encoding, errors="replace").encode("utf-8", "surrogatepass")
        if data.startswith(BOM):
            data = data[3:]
        try:
            obj = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            # one bad item must not sink the others: cut the array into items and parse each alone
            raw_items = array_items(data)
            if raw_items is None:
                raise InputError(f"{path} is not a valid UTF-8 JSON array: {str(exc)[:200]}",
                                 expected="a JSON array of objects (or JSONL with one object per line)",
                                 fix="for one object per line, name the file .jsonl") from exc
            self.items = [_RawItem(b) for b in raw_items]
            return
        if isinstance(obj, dict) and len(obj) == 1 and isinstance(next(iter(obj.values())), list):
            obj = next(iter(obj.values()))  # {"data": [...]} / {"train": [...]}
        if not isinstance(obj, list):
            raise InputError(f"{path} holds a JSON {type(obj).__name__}", expected="a JSON array of objects")
        self.items: list[Any] = obj

    @property
    def total(self) -> int:
        return len(self.items)

    def batches(self, batch_size: int) -> Iterator[list[Record]]:
        for start in range(0, len(self.items), batch_size):
            out = []
            out.extend(json_item_record(i, item) for i, item in enumerate(self.items[start:start + batch_size], start))
            yield out

    def raw_batches(self, batch_size: int) -> Iterator[tuple[list[int], list[Any]]]:
        for start in range(0, len(self.items), batch_size):
            chunk = self.items[start:start + batch_size]
            yield list(range(start, start + len(chunk))), chunk


def unify_schemas(files: list[Path], schemas: list[Any]) -> Any:
    """One schema for every file of a Parquet folder: the union of their columns (a column missing from a
    file reads as null there), types promoted where Arrow can (int32 + int64, a null column + string).
    Columns that cannot be reconciled are an error before anything is read, never a lost column."""
    import pyarrow as pa

    try:
        return pa.unify_schemas(schemas, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        seen: dict[str, tuple[Any, Path]] = {}
        for f, sch in zip(files, schemas):
            for field in sch:
                if field.name in seen and seen[field.name][0] != field.type:
                    t0, f0 = seen[field.name]
                    try:
                        pa.unify_schemas([pa.schema([(field.name, t0)]), pa.schema([field])],
                                         promote_options="permissive")
                    except (pa.ArrowInvalid, pa.ArrowTypeError):
                        raise InputError(
                            f"column {field.name!r} is {t0} in {f0} but {field.type} in {f}",
                            expected="the same column type in every file of a Parquet folder",
                            fix="cast the column to one type in every file, or scan the files one by one") from exc
                seen.setdefault(field.name, (field.type, f))
        raise InputError(f"the Parquet files' schemas cannot be unified: {exc}",
                         fix="make the files' schemas agree, or scan the files one by one") from exc


def conform(rb: Any, schema: Any) -> Any:
    """A record batch with exactly ``schema``'s columns (missing ones null, types promoted)."""
    import pyarrow as pa

    if rb.schema.equals(schema):
        return rb
    cols = [rb.column(f.name).cast(f.type) if f.name in rb.schema.names else pa.nulls(rb.num_rows, f.type)
            for f in schema]
    return pa.RecordBatch.from_arrays(cols, schema=schema)


def _parquet_file(path: Path) -> Any:
    """``pq.ParquetFile`` reading every dictionary-encoded column as Parquet stores it (int32 indices): a
    dictionary with other indices (pandas writes int8 for a Categorical) is otherwise cast while read, which
    validates its strings, so one invalid UTF-8 value failed the whole file instead of its rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = pq.ParquetFile(path)
    names = [x.name for x in f.schema_arrow if pa.types.is_dictionary(x.type)]
    return pq.ParquetFile(path, read_dictionary=names) if names else f


class ParquetSource(Source):
    kind = "parquet"
    ext = "parquet"

    def __init__(self, path: Path) -> None:
        import pyarrow.parquet as pq

        self.path = str(path)
        files = sorted(path.rglob("*.parquet")) if path.is_dir() else [path]
        if not files:
            raise InputError(f"folder {path} holds no .parquet files",
                             fix="point at a .parquet file, a folder of them, or a save_to_disk folder")
        self.files = files
        schemas, self._total = [], 0
        for f in files:
            try:
                meta = pq.ParquetFile(f)
                schemas.append(meta.schema_arrow)
                self._total += meta.metadata.num_rows
            except Exception as exc:
                raise InputError(f"cannot read Parquet {f}: {exc}", fix="check the file is complete") from exc
        self.schema = plain_schema(unify_schemas(files, schemas))  # dictionary / view columns read as plain

    @property
    def total(self) -> int:
        return self._total

    def _tables(self, batch_size: int):

        for f in self.files:
            for rb in _parquet_file(f).iter_batches(batch_size=batch_size):
                yield conform(rb, self.schema)

    def raw_batches(self, batch_size: int):
        row = 0
        for rb in self._tables(batch_size):
            yield list(range(row, row + rb.num_rows)), rb
            row += rb.num_rows

    def batches(self, batch_size: int) -> Iterator[list[Record]]:
        for rows, rb in self.raw_batches(batch_size):
            yield arrow_records(rows, rb)


def open_source(source: Any, *, split: Any = None, subset: str | None = None) -> Source:
    """Open a JSONL/JSON/Parquet file or folder, a ``save_to_disk`` folder, a hub dataset id, or an
    in-memory object (``io.python_sources``). ``split``: a name, ``all`` or a list (``io.hf``); given for a
    source without splits it is ignored with a note (``Source.source_notes``), never silently; so is a ``subset``
    (a hub dataset's configuration) given for anything but a hub id."""
    src = _open_source(source, split=split, subset=subset)
    if split is not None and src.splits is None and getattr(src, "split", None) is None:
        src.ignored_split = split  # type: ignore[attr-defined]
    if subset is not None and src.kind != "hf_hub":
        src.ignored_subset = subset  # type: ignore[attr-defined]
    return src


def _open_source(source: Any, *, split: Any = None, subset: str | None = None) -> Source:
    if not isinstance(source, (str, os.PathLike)):
        from pairaudit.io.python_sources import open_python_source

        return open_python_source(source, split=split)
    path = Path(os.fspath(source)).expanduser()
    name = path.name.lower()
    if path.is_file():
        if name.endswith((".jsonl", ".jsonl.gz", ".ndjson", ".json.gz")):
            return JsonlSource(path)
        if name.endswith(".json"):
            with open(path, "rb") as fh:
                head = fh.read(64)
            encoding = sniff_encoding(head)
            head = (head.decode(encoding, errors="ignore").encode() if encoding else head).lstrip(BOM).lstrip()
            return JsonArraySource(path) if head.startswith(b"[") else JsonlSource(path)
        if name.endswith(".parquet"):
            return ParquetSource(path)
        raise InputError(f"{path}: unknown file type", expected=".jsonl, .jsonl.gz, .json or .parquet",
                         fix="rename the file with the right extension")
    if path.is_dir():
        if (path / "dataset_info.json").exists() or (path / "dataset_dict.json").exists():
            from datasets import load_from_disk

            try:
                obj = load_from_disk(str(path))
            except Exception as exc:
                raise InputError(f"cannot load save_to_disk folder {path}: {exc}") from exc
            if (path / "dataset_dict.json").exists():
                return select_splits(obj, split, where=str(path), path=str(path), kind="hf_disk")
            return HFSource(obj, str(path), "hf_disk", None)
        return ParquetSource(path)
    text = os.fspath(source)
    if text.count("/") <= 1 and not text.startswith((".", "/", "~")) and not Path(text).suffix:
        return _open_hub(text, split, subset)
    raise InputError(f"source {text} does not exist",
                     expected="a .jsonl/.json/.parquet file, a folder, or a hub dataset id (org/name)")


def _open_hub(name: str, split: Any, subset: str | None) -> Source:
    """A hub dataset: one named split is loaded alone; otherwise the split names are looked up first and
    only the chosen splits are loaded (``train`` by default, every split for ``all``)."""
    from datasets import DatasetDict, get_dataset_split_names, load_dataset

    def fail(exc: Exception) -> InputError:
        return InputError(
            f"could not load dataset {name!r} (subset={subset}, split={split}) from the Hugging Face hub: "
            f"{type(exc).__name__}: {str(exc)[:300]}",
            expected="a reachable hub (this machine may be offline: HF_HUB_OFFLINE / no network)",
            fix="download it where a hub is reachable, ds.save_to_disk(DIR), and run pairaudit scan DIR")

    one = single_split_name(split)
    try:
        if one is not None:
            return HFSource(load_dataset(name, subset, split=one), name, "hf_hub", one)
        names = get_dataset_split_names(name, subset)
    except Exception as exc:
        raise fail(exc) from exc
    wanted = choose_splits(names, split, name)  # then load only those
    try:
        loaded = DatasetDict({s: load_dataset(name, subset, split=s) for s in wanted})
    except Exception as exc:
        raise fail(exc) from exc
    return select_splits(loaded, wanted, where=name, path=name, kind="hf_hub", all_names=names)

"""Source readers. Each yields ``Record`` batches with the DESIGN row numbers.

JSONL rows are 0-based physical line numbers (blank lines yield no record); everything else is the
index within the split. A line that cannot be decoded or parsed is still a record, with ``error``
set, so it becomes a ``malformed_record`` finding instead of stopping the run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pairaudit.errors import InputError
from pairaudit.io.jsontext import array_items, gzip_lines, parse_json_line

BOM = b"\xef\xbb\xbf"
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
    """A readable preference source. ``kind`` is jsonl | json | parquet | hf_disk | hf_hub."""

    kind: str
    path: str
    ext: str  # output extension for clean/dropped

    def batches(self, batch_size: int) -> Iterator[list[Record]]:
        raise NotImplementedError

    def raw_batches(self, batch_size: int) -> Iterator[tuple[list[int], Any]]:
        """Original records for the writer: (rows, raw batch) in source order."""
        raise NotImplementedError

    @property
    def total(self) -> int | None:
        return None

    def progress_total(self) -> tuple[int | None, str]:
        return self.total, "rows"

    def describe(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind}


class JsonlSource(Source):
    kind = "jsonl"
    ext = "jsonl"

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self.gz = path.name.endswith(".gz")
        self.bytes_read = 0
        self.damage: list[str] = []  # what went wrong reading a damaged .gz (rows before it are kept)
        if self.gz:
            with open(path, "rb") as fh:
                magic = fh.read(2)
            if magic and magic != b"\x1f\x8b":
                raise InputError(f"{path} is named .gz but is not gzip-compressed (it starts with {magic!r})",
                                 fix="rename it to .jsonl if it is plain JSON lines, or compress it with gzip")

    def _raw_lines(self, start: int) -> Iterator[bytes]:
        if self.gz:
            self.damage = []
            yield from gzip_lines(self.path, self.damage)
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

    def raw_batches(self, batch_size: int) -> Iterator[tuple[list[int], list[bytes]]]:
        for chunk in batched(self.lines(), batch_size):
            rows, raws = zip(*chunk)
            yield list(rows), list(raws)

    def progress_total(self) -> tuple[int | None, str]:
        return (None if self.gz else os.path.getsize(self.path)), "bytes"

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        if self.damage:
            out["damage"] = self.damage[0]
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
            except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid & co
                raise InputError(f"cannot read Parquet {f}: {exc}", fix="check the file is complete") from exc
        self.schema = unify_schemas(files, schemas)

    @property
    def total(self) -> int:
        return self._total

    def _tables(self, batch_size: int):  # noqa: ANN202
        import pyarrow.parquet as pq

        for f in self.files:
            for rb in pq.ParquetFile(f).iter_batches(batch_size=batch_size):
                yield conform(rb, self.schema)

    def raw_batches(self, batch_size: int):  # noqa: ANN201
        row = 0
        for rb in self._tables(batch_size):
            yield list(range(row, row + rb.num_rows)), rb
            row += rb.num_rows

    def batches(self, batch_size: int) -> Iterator[list[Record]]:
        for rows, rb in self.raw_batches(batch_size):
            yield [Record(r, d) for r, d in zip(rows, rb.to_pylist())]


class HFSource(Source):
    ext = "hf"

    def __init__(self, dataset: Any, path: str, kind: str, split: str | None) -> None:
        self.ds = dataset
        self.path = path
        self.kind = kind
        self.split = split

    @property
    def total(self) -> int:
        return len(self.ds)

    def raw_batches(self, batch_size: int):  # noqa: ANN201
        for start in range(0, len(self.ds), batch_size):
            stop = min(start + batch_size, len(self.ds))
            yield list(range(start, stop)), (start, stop)

    def batches(self, batch_size: int, start: int = 0, stop: int | None = None) -> Iterator[list[Record]]:
        stop = len(self.ds) if stop is None else stop
        for lo in range(start, stop, batch_size):
            chunk = self.ds[lo:min(lo + batch_size, stop)]
            keys = list(chunk)
            n = len(chunk[keys[0]]) if keys else 0
            yield [Record(lo + i, {k: chunk[k][i] for k in keys}) for i in range(n)]

    def describe(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "split": self.split}


def _pick_split(obj: Any, split: str | None, where: str) -> tuple[Any, str | None]:
    from datasets import DatasetDict

    if isinstance(obj, DatasetDict):
        if split is None or split not in obj:
            if split is None and len(obj) == 1:
                only = next(iter(obj))
                return obj[only], only
            raise InputError(f"{where} has splits {sorted(obj)}; split {split!r} is not one of them",
                             fix=f"pass --split with one of {sorted(obj)}")
        return obj[split], split
    return obj, None


def open_source(source: str | os.PathLike[str], *, split: str | None = "train", subset: str | None = None) -> Source:
    """Open a JSONL/JSON/Parquet file or folder, a ``save_to_disk`` folder, or a hub dataset id."""
    path = Path(os.fspath(source)).expanduser()
    name = path.name.lower()
    if path.is_file():
        if name.endswith((".jsonl", ".jsonl.gz", ".ndjson", ".json.gz")):
            return JsonlSource(path)
        if name.endswith(".json"):
            with open(path, "rb") as fh:
                head = fh.read(64).lstrip(BOM).lstrip()
            return JsonArraySource(path) if head.startswith(b"[") else JsonlSource(path)
        if name.endswith(".parquet"):
            return ParquetSource(path)
        raise InputError(f"{path}: unknown file type", expected=".jsonl, .jsonl.gz, .json or .parquet",
                         fix="rename the file with the right extension")
    if path.is_dir():
        if (path / "dataset_info.json").exists() or (path / "dataset_dict.json").exists():
            from datasets import load_from_disk

            try:
                ds, sp = _pick_split(load_from_disk(str(path)), split, str(path))
            except InputError:
                raise
            except Exception as exc:  # noqa: BLE001
                raise InputError(f"cannot load save_to_disk folder {path}: {exc}") from exc
            return HFSource(ds, str(path), "hf_disk", sp)
        return ParquetSource(path)
    text = os.fspath(source)
    if text.count("/") <= 1 and not text.startswith((".", "/", "~")) and not Path(text).suffix:
        return _open_hub(text, split, subset)
    raise InputError(f"source {text} does not exist",
                     expected="a .jsonl/.json/.parquet file, a folder, or a hub dataset id (org/name)")


def _open_hub(name: str, split: str | None, subset: str | None) -> Source:
    from datasets import load_dataset

    try:
        ds = load_dataset(name, subset, split=split)
    except Exception as exc:  # noqa: BLE001 - offline errors come in many types
        raise InputError(
            f"could not load dataset {name!r} (subset={subset}, split={split}) from the Hugging Face hub: "
            f"{type(exc).__name__}: {str(exc)[:300]}",
            expected="a reachable hub (this machine may be offline: HF_HUB_OFFLINE / no network)",
            fix="download it where a hub is reachable, ds.save_to_disk(DIR), and run pairaudit scan DIR",
        ) from exc
    ds, sp = _pick_split(ds, split, name)
    return HFSource(ds, name, "hf_hub", sp)

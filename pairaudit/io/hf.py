"""Sources for ``datasets`` objects: a saved or hub ``Dataset`` (``HFSource``), an in-memory
``Dataset`` (``DatasetSource``), a streamed ``IterableDataset`` (``IterableSource``), and several splits
of a ``DatasetDict`` scanned as one source (``MultiSplitSource``).

Choosing splits: ``--split`` takes a split name, ``all``, or a list (``train,test``, ``train+test``; a
Python list in the API). Without ``--split``, ``train`` is scanned when the dataset has it (the other
splits are named in the log and in report.json ``source.other_splits``), else the only split; several
splits and no ``train`` is an error that lists them.

Several splits go into one output. Row numbers stay unambiguous: ``row`` is the position over the
scanned splits in the order given (``all``: the dataset's own order), so the first row of the second
split is ``len(first split)``; scores.parquet and dropped records also carry ``split`` and
``split_row`` (the index within the split). ``clean/`` is a ``DatasetDict`` folder holding the kept rows
of each scanned split; ``dropped/`` one ``Dataset`` of ``{"row", "split", "split_row", "reasons",
"record"}`` (written by ``outputs.records``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pairaudit.errors import ConfigError, InputError
from pairaudit.io.base import Record, Source, arrow_records

ALL = "all"


class HFSource(Source):
    """A ``Dataset`` loaded from a ``save_to_disk`` folder or the hub (reopened by path)."""

    ext = "hf"

    def __init__(self, dataset: Any, path: str, kind: str, split: str | None) -> None:
        self.ds = dataset
        self.path = path
        self.kind = kind
        self.split = split

    @property
    def total(self) -> int:
        return len(self.ds)

    def raw_batches(self, batch_size: int):
        for start in range(0, len(self.ds), batch_size):
            stop = min(start + batch_size, len(self.ds))
            yield list(range(start, stop)), (start, stop)

    def batches(self, batch_size: int, start: int = 0, stop: int | None = None) -> Iterator[list[Record]]:
        stop = len(self.ds) if stop is None else stop
        for lo in range(start, stop, batch_size):
            hi = min(lo + batch_size, stop)
            try:
                chunk = self.ds[lo:hi]
            except UnicodeDecodeError:  # a string cell that is not UTF-8: that row alone is malformed
                yield arrow_records(list(range(lo, hi)), self.ds.with_format("arrow")[lo:hi])
                continue
            keys = list(chunk)
            n = len(chunk[keys[0]]) if keys else 0
            yield [Record(lo + i, {k: chunk[k][i] for k in keys}) for i in range(n)]

    def describe(self) -> dict[str, Any]:
        out = {"path": self.path, "kind": self.kind, "split": self.split}
        if getattr(self, "other_splits", None):
            out["other_splits"] = self.other_splits
        if self.source_notes():
            out["notes"] = self.source_notes()
        return out


class DatasetSource(HFSource):
    """An in-memory (or memory-mapped) ``datasets.Dataset``; a torch/numpy format set on it is ignored.
    Outputs: ``clean/`` and ``dropped/`` ``save_to_disk`` folders."""

    shardable = False

    def __init__(self, ds: Any, split: str | None = None) -> None:
        super().__init__(ds.with_format(None), None, "dataset", split)  # type: ignore[arg-type]

    def describe(self) -> dict[str, Any]:
        out = {"path": None, "kind": self.kind, "type": "datasets.Dataset", "split": self.split, "rows": len(self.ds)}
        if getattr(self, "other_splits", None):
            out["other_splits"] = self.other_splits
        if self.source_notes():
            out["notes"] = self.source_notes()
        return out


class IterableSource(Source):
    """A ``datasets.IterableDataset``, streamed: one Arrow batch in memory at a time, read twice
    (checks, then the writer). Clean/dropped outputs are Parquet with the stream's Arrow schema."""

    kind = "iterable_dataset"
    ext = "parquet"
    writes_as = "parquet"
    shardable = False

    def __init__(self, ds: Any, split: str | None = None) -> None:
        self.ds = ds
        self.split = split
        self.path = None  # type: ignore[assignment]
        self._schema: Any = None

    def _tables(self, batch_size: int) -> Iterator[Any]:
        """The stream's Arrow tables; a stream that cannot be read on (its rows change type part way, its
        generator fails) is an InputError naming the row."""
        it, row = iter(self.ds.with_format("arrow").iter(batch_size=batch_size)), 0
        while True:
            try:
                table = next(it)
            except StopIteration:
                return
            except Exception as exc:
                raise stream_error(exc, row, batch_size) from exc
            yield table
            row += table.num_rows

    @property
    def schema(self) -> Any:
        """The Arrow schema of the stream's first batch (every batch is cast to it)."""
        if self._schema is None:
            import pyarrow as pa

            first = next(self._tables(1), None)
            self._schema = first.schema if first is not None else pa.schema([])
        return self._schema

    def raw_batches(self, batch_size: int) -> Iterator[tuple[list[int], Any]]:
        import pyarrow as pa

        schema, row = self.schema, 0
        for table in self._tables(batch_size):
            if table.num_rows == 0:
                continue
            if table.schema != schema:
                try:
                    table = table.cast(schema)
                except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as exc:
                    raise InputError(
                        f"rows {row}..{row + table.num_rows - 1} of the IterableDataset have another schema than "
                        f"its first batch ({exc})", expected="one schema for every batch",
                        fix="give the IterableDataset features (e.g. .cast(features)) so every batch has them") from exc
            rb = table.combine_chunks().to_batches()[0]
            yield list(range(row, row + rb.num_rows)), rb
            row += rb.num_rows

    def batches(self, batch_size: int) -> Iterator[list[Record]]:
        row = 0
        for table in self._tables(batch_size):
            yield arrow_records(list(range(row, row + table.num_rows)), table)
            row += table.num_rows

    def describe(self) -> dict[str, Any]:
        out = {"path": None, "kind": self.kind, "type": "datasets.IterableDataset", "split": self.split}
        if getattr(self, "other_splits", None):
            out["other_splits"] = self.other_splits
        return out


def stream_error(exc: Exception, row: int, batch_size: int) -> InputError:
    """What went wrong reading an IterableDataset at the batch starting at ``row``: for a row whose types
    differ from the rows before it (Arrow: "Schema at index N was different"), that row and column."""
    import re

    text = str(exc)
    m = re.search(r"at index (\d+) was different: ?\n(.*?)\nvs\n(.*)", text, re.S)
    if m:
        first, later = (dict(x.split(": ", 1) for x in part.splitlines() if ": " in x) for part in m.group(2, 3))
        cols = [c for c in sorted(set(first) | set(later)) if first.get(c) != later.get(c)]
        what = ", ".join(f"{c!r} is {first.get(c, 'missing')} before it and {later.get(c, 'missing')} there"
                         for c in cols[:3]) or text.splitlines()[0]
        return InputError(f"row {row + int(m.group(1))} of the IterableDataset changes the type of its columns: "
                          f"{what}", expected="every row with the same columns and types",
                          fix="give the stream features, so every row is cast to one type: ds = ds.cast(features) "
                              "(or features= in IterableDataset.from_generator); or fix the rows at that point")
    return InputError(f"reading the IterableDataset failed in rows {row}..{row + batch_size - 1} "
                      f"({type(exc).__name__}: {text.splitlines()[0][:300] if text else ''})",
                      fix="the error comes from the stream itself (its generator or files): fix it there, or "
                          "scan a Dataset of the rows that can be read")


# ------------------------------------------------------------------------------------------ splits
def parse_split(split: Any) -> str | list[str] | None:
    """None (default choice), ``"all"``, or a list of split names."""
    if split is None:
        return None
    if isinstance(split, (list, tuple)):
        names = [str(s).strip() for s in split if str(s).strip()]
    else:
        text = str(split).strip()
        if not text:
            return None
        if text.lower() == ALL:
            return ALL
        if "[" in text:  # the hub's slicing syntax (train[:10%]): one split, passed through
            return [text]
        names = [s.strip() for s in text.replace("+", ",").split(",") if s.strip()]
    if not names:
        return None
    if len(set(names)) != len(names):
        raise ConfigError(f"--split {split!r} names a split twice", fix="name each split once")
    return names


def single_split_name(split: Any) -> str | None:
    """The split name when ``split`` names exactly one split, else None."""
    spec = parse_split(split)
    return spec[0] if isinstance(spec, list) and len(spec) == 1 else None


def choose_splits(names: list[str], split: Any, where: str) -> list[str]:
    """The split names ``split`` asks for among ``names`` (see the module docstring), or an InputError."""
    spec = parse_split(split)
    if spec is None:
        if "train" in names:
            return ["train"]
        if len(names) == 1:
            return list(names)
        raise InputError(f"{where} has splits {names} and none is 'train'",
                         fix=f"pass --split with one of {names}, a list such as '{','.join(names[:2])}', or all")
    if spec == ALL:
        return list(names)
    unknown = [s for s in spec if s not in names]
    if unknown:
        raise InputError(f"{where} has splits {names}; split {', '.join(map(repr, unknown))} is not one of them",
                         fix=f"pass --split with one of {names}, a comma-separated list of them, or all")
    return list(spec)


def select_splits(obj: Mapping[str, Any], split: Any, *, where: str, path: str | None, kind: str,
                  all_names: list[str] | None = None) -> Source:
    """The source for the chosen split(s) of a DatasetDict / IterableDatasetDict (``all_names``: the
    dataset's splits when ``obj`` holds only the loaded ones)."""
    names = list(all_names or obj)
    chosen = choose_splits(names, split, where)
    iterable = any(type(obj[n]).__name__ == "IterableDataset" for n in chosen)
    if len(chosen) == 1:
        name = chosen[0]
        ds = obj[name]
        if iterable:
            src: Source = IterableSource(ds, name)
        elif path is None:
            src = DatasetSource(ds, name)
        else:
            src = HFSource(ds, path, kind, name)
        src.other_splits = [n for n in names if n != name]  # type: ignore[attr-defined]
        return src
    if iterable:
        raise ConfigError(f"several splits of a streaming {where} cannot be scanned into one output",
                          fix="scan one split at a time, or load the dataset without streaming")
    return MultiSplitSource([(n, obj[n]) for n in chosen], path, kind)


def joined_features(parts: list[tuple[str, int, Any]]) -> Any:
    """The features of one record of any of the splits (``dropped/`` holds the dropped records of every
    split in one ``record`` column): the splits' own when they agree, else Arrow's widening of them (int64
    and float64 -> float64, a column missing from a split -> null there). Columns whose types cannot be
    joined are an InputError before the scan, naming the column and the splits."""
    import pyarrow as pa
    from datasets import Features

    feats = [(name, ds.features) for name, _, ds in parts]
    if all(f == feats[0][1] for _, f in feats):
        return feats[0][1]
    columns: dict[str, list[tuple[str, Any]]] = {}
    for name, f in feats:
        for field in f.arrow_schema:
            columns.setdefault(field.name, []).append((name, field))
    for col, fields in columns.items():
        try:
            pa.unify_schemas([pa.schema([f]) for _, f in fields], promote_options="permissive")
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            types = ", ".join(f"{f.type} in {name!r}" for name, f in fields)
            raise InputError(
                f"column {col!r} has types that cannot be joined across the splits ({types}); the dropped rows of "
                "every split go into one dataset (dropped/), which needs one type per column",
                fix=f"cast it to one type in every split (ds.cast_column({col!r}, ...)) and save again, or scan the "
                    f"splits one at a time (--split {fields[0][0]})") from exc
    return Features.from_arrow_schema(pa.unify_schemas([f.arrow_schema for _, f in feats],
                                                       promote_options="permissive"))


class MultiSplitSource(Source):
    """Several splits of one DatasetDict as one source (see the module docstring for row numbers)."""

    ext = "hf"
    shardable = False

    def __init__(self, parts: list[tuple[str, Any]], path: str | None, kind: str) -> None:
        self.path = path  # type: ignore[assignment]
        self.kind = kind
        self.parts: list[tuple[str, int, Any]] = []
        offset = 0
        for name, ds in parts:
            ds = ds.with_format(None)
            self.parts.append((name, offset, ds))
            offset += len(ds)
        self._total = offset
        self.record_features = joined_features(self.parts)
        # each split of a folder (or hub dataset) can be reopened by a worker: shardable by index range
        self.shardable = path is not None  # type: ignore[misc]

    @property  # type: ignore[override]
    def splits(self) -> list[tuple[str, int, int]]:
        """(split name, first row, number of rows) in scan order."""
        return [(name, off, len(ds)) for name, off, ds in self.parts]

    @property
    def split(self) -> str:
        return ",".join(name for name, _, _ in self.parts)

    @property
    def total(self) -> int:
        return self._total

    def batches(self, batch_size: int) -> Iterator[list[Record]]:
        for name, off, ds in self.parts:
            src = HFSource(ds, self.path or "", self.kind, name)
            for recs in src.batches(batch_size):
                yield [Record(off + r.row, r.data, r.error, r.field) for r in recs]

    def raw_batches(self, batch_size: int) -> Iterator[tuple[list[int], Any]]:
        raise NotImplementedError("several splits are written by outputs.records.write_outputs")

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "kind": self.kind, "split": self.split,
                               "splits": {name: len(ds) for name, _, ds in self.parts}}
        if self.path is None:
            out["type"] = "datasets.DatasetDict"
        return out

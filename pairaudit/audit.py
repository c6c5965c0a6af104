"""``Audit``: the result of a scan, the output folder plus its contents as Python objects.

``audit.clean`` is a ``datasets.Dataset`` (a ``DatasetDict`` when several splits were scanned) of the
kept records in input order, with one added column, :data:`ROW_COLUMN` (``__pairaudit_row__``): each
record's source row, so every cleaned record leads back to its input. ``audit.keep_mask`` is a
boolean array over the input rows (row order), the ``kept`` column of scores.parquet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from pairaudit.errors import ConfigError
from pairaudit.output_files import FINDINGS, SCORES

#: column added to ``audit.clean``: the source row of each kept record (dunder name, so that it does
#: not clash with a dataset column; ``audit.load_clean(row_column=...)`` picks another name)
ROW_COLUMN = "__pairaudit_row__"


@dataclass
class Audit:
    """Result of a scan: the output folder plus its contents as Python objects (``pairaudit.scan`` returns one,
    ``pairaudit.open(DIR)`` reads one back without rescanning).

    Args:
        out_dir: the output folder.
        report: report.json as a dict (``totals``: input = kept + dropped; ``checks``; ``status``).
        exit_code: as ``pairaudit scan``'s (0 ok, 4 a check failed, 5 nothing usable ...).
        messages: the problems report.json lists, one line each.

    Example:
        >>> import pairaudit
        >>> pairs = [{"prompt": "Hi", "chosen": "Hello!", "rejected": "Hello!"},
        ...          {"prompt": "Hi", "chosen": "Hello!", "rejected": "Go away."}]
        >>> audit = pairaudit.scan(pairs, out=None, only=["identical_pair"], quiet=True)
        >>> audit.keep_mask.tolist(), audit.findings["row"].to_list(), audit.exit_code
        ([False, True], [0], 0)
        >>> list(audit.clean["__pairaudit_row__"])
        [1]
    """

    out_dir: Path
    report: dict[str, Any]
    _findings: pl.DataFrame | None = None  # read from findings.parquet when first asked for (None: not yet)
    exit_code: int = 0
    messages: list[str] = field(default_factory=list)

    @property
    def findings(self) -> pl.DataFrame:
        """findings.parquet as a polars DataFrame (read on first use: a scan keeps no finding in memory)."""
        if self._findings is None:
            self._findings = pl.read_parquet(self.out_dir / FINDINGS, glob=False)
        return self._findings

    @property
    def totals(self) -> dict[str, int]:
        return self.report["totals"]

    @property
    def scores(self) -> pl.DataFrame:
        """scores.parquet: one row per input record, in row order."""
        return pl.read_parquet(self.out_dir / SCORES, glob=False)

    @property
    def keep_mask(self) -> np.ndarray:
        """Boolean array, one entry per input record in row order: True where the record is in the
        cleaned output. For sources whose rows are positions (everything but JSONL with blank lines),
        entry ``i`` is row ``i``: ``ds.select(np.flatnonzero(audit.keep_mask))``, ``df.filter(mask)``."""
        kept = pl.read_parquet(self.out_dir / SCORES, columns=["row", "kept"], glob=False).sort("row")
        return kept["kept"].to_numpy().astype(bool)

    @property
    def kept_rows(self) -> np.ndarray:
        """Row numbers of the kept records, ascending."""
        s = pl.read_parquet(self.out_dir / SCORES, columns=["row", "kept"], glob=False)
        return s.filter(pl.col("kept")).sort("row")["row"].to_numpy()

    @property
    def clean(self) -> Any:
        """The cleaned records as a ``datasets.Dataset`` (``DatasetDict`` for several splits) with the
        source row in :data:`ROW_COLUMN`."""
        return self.load_clean()

    def load_clean(self, row_column: str | None = ROW_COLUMN) -> Any:
        """The cleaned records; ``row_column`` names the added source-row column (None: no column)."""
        ds = load_records_dataset(self.out_dir, "clean")
        if row_column is None:
            return ds
        scores = pl.read_parquet(self.out_dir / SCORES, glob=False)
        kept = scores.filter(pl.col("kept")).sort("row")
        from datasets import DatasetDict

        if isinstance(ds, DatasetDict):
            return DatasetDict({name: _with_rows(part, kept.filter(pl.col("split") == name)["row"].to_list(),
                                                 row_column) for name, part in ds.items()})
        return _with_rows(ds, kept["row"].to_list(), row_column)

    @property
    def dropped(self) -> Any:
        """Dropped records ``{"row", "reasons", "record"}`` (plus ``split``, ``split_row``) as a Dataset."""
        return load_records_dataset(self.out_dir, "dropped")

    def __repr__(self) -> str:
        t = self.totals
        return f"Audit(out={str(self.out_dir)!r}, input={t['input']}, kept={t['kept']}, dropped={t['dropped']})"


def _with_rows(ds: Any, rows: list[int], column: str) -> Any:
    if column in ds.column_names:
        raise ConfigError(f"the cleaned data already has a column {column!r} (from an earlier audit.clean?)",
                          fix="audit.load_clean(row_column='another_name'), or remove that column before scanning")
    if len(rows) != len(ds):
        raise RuntimeError(f"internal error: {len(ds)} cleaned records but {len(rows)} kept rows in scores.parquet")
    return ds.add_column(column, rows)


def load_records_dataset(out_dir: Path, name: str) -> Any:
    """``clean`` / ``dropped`` of an output folder, whatever their format, as a datasets object."""
    import datasets

    from pairaudit.quiet import quiet_libraries

    with quiet_libraries():
        return _load(datasets, out_dir, name)


def _load(datasets: Any, out_dir: Path, name: str) -> Any:
    import glob

    if (out_dir / name).is_dir():
        return datasets.load_from_disk(str(out_dir / name))
    for ext, loader in (("jsonl", "json"), ("json", "json"), ("parquet", "parquet")):
        p = out_dir / f"{name}.{ext}"
        if p.exists():
            empty = _empty(datasets, p)
            if empty is not None:  # datasets cannot load a file without records ("corresponds to no data")
                return empty
            # data_files are glob patterns: a folder named "out[1]" is taken as written
            return datasets.load_dataset(loader, data_files=glob.escape(str(p)), split="train")
    raise FileNotFoundError(f"no {name} output in {out_dir}")


def _empty(datasets: Any, p: Path) -> Any:
    """An empty Dataset (with the file's columns where it has a schema) when ``p`` holds no record, else None."""
    if p.suffix == ".parquet":
        import pyarrow.parquet as pq

        meta = pq.read_metadata(p)
        if meta.num_rows:
            return None
        schema = meta.schema.to_arrow_schema()
        return datasets.Dataset.from_dict({n: [] for n in schema.names},
                                          features=datasets.Features.from_arrow_schema(schema))
    if p.stat().st_size > 64 or p.read_bytes().strip() not in (b"", b"[]", b"[\n]"):
        return None
    return datasets.Dataset.from_list([])

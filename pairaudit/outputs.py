"""Atomic output folder handling and the machine-readable outputs (findings, scores, report.json)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pairaudit.types import Finding

FINDINGS_SCHEMA = pa.schema([
    ("row", pa.int64()), ("check", pa.string()), ("action", pa.string()), ("field", pa.string()),
    ("score", pa.float64()), ("group", pa.int64()), ("detail", pa.string()),
])
OUTPUT_NAMES = ("findings.parquet", "scores.parquet", "report.json", "report.html", "timings.json")


class OutputDir:
    """Files are written into a hidden temp folder inside ``out`` and renamed into place on commit;
    an interrupted run removes the temp folder and leaves earlier outputs untouched."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix=".pairaudit-tmp-", dir=self.out))

    def commit(self) -> None:
        written = {p.name for p in self.tmp.iterdir()}
        for old in self.out.iterdir():  # stale clean/dropped of another format
            if old.name.split(".")[0] in ("clean", "dropped") and old.name not in written:
                shutil.rmtree(old) if old.is_dir() else old.unlink()
        # data files first, report.json last: a reader that sees the new report sees new data
        for name in sorted(written, key=lambda n: (n == "report.json", n)):
            src, dst = self.tmp / name, self.out / name
            if src.is_dir():
                if dst.exists():
                    shutil.rmtree(dst)
                os.replace(src, dst)
            else:
                os.replace(src, dst)
        self.abort()

    def abort(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def write_json(path: Path, data: Any) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=False, ensure_ascii=False, default=_jsonable)
        fh.write("\n")


def _jsonable(x: Any) -> Any:
    if hasattr(x, "tolist"):
        return x.tolist()
    if isinstance(x, Path):
        return str(x)
    if isinstance(x, (set, frozenset)):
        return sorted(x)
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def findings_table(findings: Iterable[Finding]) -> pa.Table:
    cols: dict[str, list[Any]] = {n: [] for n in FINDINGS_SCHEMA.names}
    for f in findings:
        cols["row"].append(f.row)
        cols["check"].append(f.check)
        cols["action"].append(f.action)
        cols["field"].append(f.field)
        cols["score"].append(None if f.score is None else float(f.score))
        cols["group"].append(f.group)
        cols["detail"].append(f.detail)
    return pa.table(cols, schema=FINDINGS_SCHEMA)


def write_parquet(table: pa.Table, path: Path) -> None:
    pq.write_table(table, path, compression="zstd")

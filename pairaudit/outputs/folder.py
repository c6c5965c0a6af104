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

from pairaudit.datatypes import Finding
from pairaudit.errors import ConfigError

FINDINGS_SCHEMA = pa.schema([
    ("row", pa.int64()), ("check", pa.string()), ("action", pa.string()), ("field", pa.string()),
    ("score", pa.float64()), ("group", pa.int64()), ("detail", pa.string()),
])
OUTPUT_NAMES = ("findings.parquet", "scores.parquet", "report.json", "report.html", "timings.json")
META = ".pairaudit"


class OutputDir:
    """An output folder whose outputs change together, and that never loses a file it did not write.

    Layout: each run writes into a new generation folder ``DIR/.pairaudit/gen-*``; ``DIR/.pairaudit/current``
    is a symlink to the committed generation, and every output ``DIR/<name>`` is a symlink to
    ``.pairaudit/current/<name>``. Committing switches ``current`` with one ``rename``: a reader sees
    either every old output or every new one, never a mix, and an interrupted run leaves the previous
    outputs untouched. ``DIR/.pairaudit/manifest.json`` lists the names pairaudit owns in ``DIR``; any
    other file (``clean.py``, your notes, ``decisions.jsonl``) is never replaced or deleted, and a
    file in the way of an output name that pairaudit did not write is an error before the scan starts.
    A lock file keeps two runs from writing the same folder at once; generation folders left behind by
    killed runs are removed by the next run.
    """

    def __init__(self, out: Path, names: Iterable[str] = ()) -> None:
        self.out = Path(out)
        if self.out.exists() and not self.out.is_dir():
            raise ConfigError(f"--out {self.out} is an existing file", expected="a folder (created if missing)",
                              fix="pass a folder path for --out")
        try:
            self.meta = self.out / META
            self.meta.mkdir(parents=True, exist_ok=True)
            self._lock = open(self.meta / "lock", "a")  # noqa: SIM115 - held until commit/abort
        except OSError as exc:
            raise ConfigError(f"cannot write to --out {self.out}: {exc.strerror or exc}",
                              fix="pass a folder you can write to") from exc
        try:
            import fcntl

            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # pragma: no cover - not POSIX
            pass
        except OSError as exc:
            self._lock.close()
            raise ConfigError(f"another pairaudit run is writing to {self.out}",
                              fix="wait for it to finish, or pass another --out") from exc
        self.owned = self._manifest()
        self.committed = False
        self.check_names(names)
        self._remove_strays()
        self.tmp = Path(tempfile.mkdtemp(prefix="gen-", dir=self.meta))

    # -- bookkeeping ---------------------------------------------------------------------------
    def _manifest(self) -> set[str]:
        try:
            return set(json.loads((self.meta / "manifest.json").read_text(encoding="utf-8"))["names"])
        except (OSError, ValueError, KeyError, TypeError):
            return set()

    def _write_manifest(self, names: set[str]) -> None:
        tmp = self.meta / "manifest.json.tmp"
        tmp.write_text(json.dumps({"names": sorted(names)}) + "\n", encoding="utf-8")
        os.replace(tmp, self.meta / "manifest.json")

    def _current(self) -> str | None:
        try:
            return os.readlink(self.meta / "current")
        except OSError:
            return None

    def _ours(self, name: str) -> bool:
        p = self.out / name
        return name in self.owned or (p.is_symlink() and os.readlink(p) == f"{META}/current/{name}")

    def check_names(self, names: Iterable[str]) -> None:
        """Refuse to start when a file pairaudit did not write is in the way of an output."""
        foreign = sorted(n for n in names if os.path.lexists(self.out / n) and not self._ours(n))
        if foreign:
            raise ConfigError(f"--out {self.out} already holds {', '.join(foreign)}, which pairaudit did not write",
                              fix="pairaudit never replaces files it did not write: move them, or pass another --out")

    def _remove_strays(self) -> None:
        current = self._current()
        for p in self.meta.iterdir():
            if p.name.startswith("gen-") and p.name != current:
                shutil.rmtree(p, ignore_errors=True)

    # -- commit ----------------------------------------------------------------------------------
    def commit(self) -> None:
        """Switch every output to this run's generation at once."""
        names = set(os.listdir(self.tmp))
        self.check_names(names)
        for name in sorted(names):
            link = self.out / name
            if link.is_symlink() and os.readlink(link) == f"{META}/current/{name}":
                continue
            tmp_link = self.meta / f"link-{name}.tmp"
            if os.path.lexists(tmp_link):
                os.unlink(tmp_link)
            os.symlink(f"{META}/current/{name}", tmp_link)
            if link.is_dir() and not link.is_symlink():  # an old real folder of ours (owned)
                shutil.rmtree(link)
            os.replace(tmp_link, link)
        self._write_manifest(self.owned | names)
        old = self._current()
        tmp_current = self.meta / "current.tmp"
        if os.path.lexists(tmp_current):
            os.unlink(tmp_current)
        os.symlink(self.tmp.name, tmp_current)
        os.replace(tmp_current, self.meta / "current")  # the one atomic switch
        self.committed = True
        for name in sorted(self.owned - names):  # outputs of the previous run this one did not write
            link = self.out / name
            if link.is_symlink():
                os.unlink(link)
        self._write_manifest(names)
        self.owned = names
        if old and old != self.tmp.name:
            shutil.rmtree(self.meta / old, ignore_errors=True)
        self._release()

    def abort(self) -> None:
        if not self.committed:
            shutil.rmtree(self.tmp, ignore_errors=True)
        self._release()

    def _release(self) -> None:
        if not self._lock.closed:
            self._lock.close()


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


def output_names(ext: str) -> tuple[str, ...]:
    """Every name a scan writes into ``--out`` for a source whose outputs have extension ``ext``."""
    data = ("clean", "dropped") if ext == "hf" else (f"clean.{ext}", f"dropped.{ext}")
    return (*data, *OUTPUT_NAMES)


def guard_source(out: Path, source_path: str | None) -> None:
    """Refuse an ``--out`` that is, contains or is inside the source (it would overwrite or re-read it)."""
    if not source_path or not os.path.exists(source_path):
        return  # a hub id or an in-memory source: nothing on disk to protect
    src, dst = Path(source_path).resolve(), Path(out).resolve()
    if dst == src or src.is_relative_to(dst) or dst.is_relative_to(src):
        rel = "is" if dst == src else "contains" if src.is_relative_to(dst) else "is inside"
        raise ConfigError(f"--out {out} {rel} the source {source_path}: its outputs would overwrite or be read as "
                          "the source", fix="pass an --out folder outside the source, e.g. --out pairaudit-out")

"""Atomic output folder handling and the machine-readable outputs (findings, scores, report.json)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pairaudit.datatypes import Finding
from pairaudit.errors import ConfigError, file_system_error
from pairaudit.output_files import FINDINGS_COLUMNS, OUTPUT_NAMES

FINDINGS_SCHEMA = pa.schema([(name, getattr(pa, kind)()) for name, kind in FINDINGS_COLUMNS])
META = ".pairaudit"


class OutputDir:
    """An output folder whose outputs change together, and that never loses a file it did not write.

    Layout: each run writes into a new generation folder ``DIR/.pairaudit/gen-*``; ``DIR/.pairaudit/current``
    is a symlink to the committed generation, and every output ``DIR/<name>`` is a symlink to
    ``.pairaudit/current/<name>``. Committing switches ``current`` with one ``rename``: a reader sees
    either every old output or every new one, never a mix, and an interrupted run leaves the previous
    outputs untouched. ``DIR/.pairaudit/manifest.json`` records the committed generation and the inode,
    size, mtime and sha256 of every file pairaudit wrote in it. Before a run starts, everything it would remove
    or replace is checked: an output name holding anything but pairaudit's own link (``clean.py``, a
    ``clean.jsonl`` you saved over the link, a real ``clean/`` folder), a committed file changed since it
    was written, or a ``current`` link that does not name a generation folder inside ``.pairaudit`` stops
    the run (exit 2, naming it) and nothing is touched. A lock file keeps two runs from writing the same
    folder at once; generation folders left behind by killed runs are removed by the next run.
    """

    def __init__(self, out: Path, names: Iterable[str] = ()) -> None:
        self.out = Path(out)
        self.meta = self.out / META
        self.committed = False
        self._lock: Any = None
        self._created: list[Path] = []  # removed again if this run commits nothing
        try:
            self._open(self._created)
            self.generation, self.recorded = self._verify(names)
            self._remove_strays()
            self.tmp = Path(tempfile.mkdtemp(prefix="gen-", dir=self.meta))
        except BaseException as exc:
            self.abort()
            if isinstance(exc, OSError):
                raise file_system_error(exc, self.out) from exc
            raise

    # -- opening and checking --------------------------------------------------------------------
    def _open(self, created: list[Path]) -> None:
        if self.out.exists() and not self.out.is_dir():
            raise ConfigError(f"--out {self.out} is an existing file", expected="a folder (created if missing)",
                              fix="pass a folder path for --out")
        if os.path.lexists(self.meta) and (self.meta.is_symlink() or not self.meta.is_dir()):
            raise _foreign(self.out, f"{META} (a link or file where pairaudit keeps its own folder)")
        try:
            for d in (self.out, self.meta):
                if not d.exists():
                    d.mkdir(parents=d is self.out)
                    created.append(d)
            lock = self.meta / "lock"
            if os.path.lexists(lock) and (lock.is_symlink() or not lock.is_file()):
                raise _foreign(self.out, f"{META}/lock")
            if not lock.exists():
                created.append(lock)
            self._lock = open(lock, "a")  # held until commit/abort
        except OSError as exc:
            raise ConfigError(f"cannot write to --out {self.out}: {exc.strerror or exc}",
                              fix="pass a folder you can write to") from exc
        try:
            import fcntl

            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # pragma: no cover - not POSIX
            pass
        except OSError as exc:
            if created and created[-1].name == "lock":
                created.pop()  # the other run's lock: never removed
            raise ConfigError(f"another pairaudit run is writing to {self.out}",
                              fix="wait for it to finish, or pass another --out") from exc

    def _manifest(self) -> dict[str, Any]:
        path = self.meta / "manifest.json"
        if not os.path.lexists(path):
            return {}
        try:
            if path.is_symlink():
                raise ValueError("a link")
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not an object")
            return data
        except (OSError, ValueError) as exc:
            raise _foreign(self.out, f"{META}/manifest.json (unreadable: {exc})") from exc

    def _current(self) -> str | None:
        """The committed generation's folder name, checked to be a real folder inside ``.pairaudit``."""
        link = self.meta / "current"
        if not os.path.lexists(link):
            return None
        target = os.readlink(link) if link.is_symlink() else None
        if target is not None and _GEN.fullmatch(target) and not os.path.lexists(self.meta / target):
            return None  # its generation was deleted by hand: nothing to keep, the link is replaced
        if target is None or not _GEN.fullmatch(target) or not _own_dir(self.meta / target, self.meta):
            raise _foreign(self.out, f"{META}/current (it should be a link to a generation folder inside {META}; "
                                     f"found {'a link to ' + repr(target) if target is not None else 'no link'})")
        return target

    def _verify(self, names: Iterable[str]) -> tuple[str | None, dict[str, list[int]]]:
        """Everything this run would remove or replace is pairaudit's own, unchanged since written."""
        manifest = self._manifest()
        current = self._current()
        self.check_names(names)
        recorded: dict[str, list[int]] = {}
        if current is not None:
            gens = {g.get("generation"): g.get("files") for g in (manifest, manifest.get("pending") or {})
                    if isinstance(g, dict)}
            files = gens.get(current)
            if isinstance(files, dict):  # written by a pairaudit that records its files (issue 23 on)
                changed = _changed(self.meta / current, files)
                if changed:
                    raise ConfigError(
                        f"--out {self.out}: {', '.join(changed[:5])} changed since pairaudit wrote "
                        f"{'them' if len(changed) > 1 else 'it'} (the next scan would replace "
                        f"{'them' if len(changed) > 1 else 'it'})",
                        fix=_keep_fix(self.out, self.meta / current, changed))
                recorded = files
        return current, recorded

    def _our_link(self, name: str) -> bool:
        p = self.out / name
        return p.is_symlink() and os.readlink(p) == f"{META}/current/{name}"

    def check_names(self, names: Iterable[str]) -> None:
        """Refuse a name that holds something pairaudit did not write."""
        foreign = sorted(n for n in names if os.path.lexists(self.out / n) and not self._our_link(n))
        if foreign:
            raise _foreign(self.out, ", ".join(foreign))

    def _remove_strays(self) -> None:
        for p in self.meta.iterdir():
            if _GEN.fullmatch(p.name) and p.name != self.generation and _own_dir(p, self.meta):
                shutil.rmtree(p, ignore_errors=True)

    # -- commit ----------------------------------------------------------------------------------
    def commit(self) -> None:
        """Switch every output to this run's generation at once. A file operation that fails before the
        switch (disk full) leaves the folder as it was: links this run added are removed again and the
        manifest is put back; after the switch, the manifest's ``pending`` entry already records the new
        generation, so nothing that fails there can lose track of it."""
        names = {n for n in os.listdir(self.tmp) if not n.startswith(".")}
        self.check_names(names)
        files = _record(self.tmp)
        listed = self._manifest().get("names")
        owned = {n for n in listed if isinstance(n, str) and "/" not in n} if isinstance(listed, list) else set()
        manifest = self.meta / "manifest.json"
        previous = manifest.read_bytes() if manifest.is_file() else None
        added: list[Path] = []
        try:
            self._write_manifest({"generation": self.generation, "files": self.recorded,
                                  "names": sorted(owned | names), "pending": {"generation": self.tmp.name,
                                                                              "files": files}})
            for name in sorted(names):
                if not self._our_link(name):
                    tmp_link = self.tmp / f".link-{name}"
                    os.symlink(f"{META}/current/{name}", tmp_link)
                    os.replace(tmp_link, self.out / name)
                    added.append(self.out / name)
            tmp_current = self.tmp / ".current"
            os.symlink(self.tmp.name, tmp_current)
            os.replace(tmp_current, self.meta / "current")  # the one atomic switch
        except OSError:
            self._undo(added, previous)
            raise
        self.committed = True
        with contextlib.suppress(OSError):  # the switch is done: what is left is tidying up
            for name in sorted(owned - names):  # outputs of the previous run this one did not write
                if self._our_link(name):
                    os.unlink(self.out / name)
            self._write_manifest({"generation": self.tmp.name, "files": files, "names": sorted(names)})
        old = self.generation
        if old and old != self.tmp.name and _own_dir(self.meta / old, self.meta):
            shutil.rmtree(self.meta / old, ignore_errors=True)
        self.generation, self.recorded = self.tmp.name, files
        self._release()

    def _undo(self, added: list[Path], manifest: bytes | None) -> None:
        """Before the switch: take back the links this run added and the manifest it rewrote."""
        for link in added:
            with contextlib.suppress(OSError):
                os.unlink(link)
        with contextlib.suppress(OSError):
            if manifest is None:
                (self.meta / "manifest.json").unlink(missing_ok=True)
            else:
                replace_file(self.meta / "manifest.json", manifest)

    def _write_manifest(self, data: dict[str, Any]) -> None:
        tmp = self.tmp / ".manifest.json"
        tmp.write_text(json.dumps(data, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.meta / "manifest.json")

    def abort(self) -> None:
        """Remove this run's generation; a run refused before it wrote anything leaves no lock and no
        folder it created behind (the lock file is removed while still held, so no other run can hold it)."""
        if not self.committed and hasattr(self, "tmp"):
            shutil.rmtree(self.tmp, ignore_errors=True)
        if not self.committed:
            for p in reversed(self._created):
                with contextlib.suppress(OSError):
                    p.rmdir() if p.is_dir() and not p.is_symlink() else p.unlink()
        self._release()

    def _release(self) -> None:
        if self._lock is not None and not self._lock.closed:
            self._lock.close()


_GEN = re.compile(r"gen-[A-Za-z0-9_]+")
#: what ``datasets`` writes next to a loaded dataset's files: ``Dataset.map`` / ``filter`` caches (also
#: ``cache-FP_00000_of_00004.arrow`` with num_proc) and the temporary files they are written through
DATASETS_CACHE = re.compile(r"cache-[0-9a-f]+(?:_\d{5}_of_\d{5})?\.arrow|tmp[a-z0-9_]{8}")


def owner_folder(path: str | os.PathLike[str]) -> Path:
    """The output folder a generation folder (``DIR/.pairaudit/gen-*``, where a run writes before it commits)
    belongs to; any other folder is its own. Files the user keeps beside the outputs (decisions.jsonl) are
    there, not in the generation.

    Example:
        >>> owner_folder("out/.pairaudit/gen-ab12").as_posix(), owner_folder("out").as_posix()
        ('out', 'out')
    """
    p = Path(path)
    return p.parent.parent if p.parent.name == ".pairaudit" and _GEN.fullmatch(p.name) else p


def _own_dir(p: Path, meta: Path) -> bool:
    """A real folder (not a link) directly inside ``meta``."""
    return p.is_dir() and not p.is_symlink() and p.resolve().parent == meta.resolve()


def _foreign(out: Path, what: str) -> ConfigError:
    return ConfigError(f"--out {out} already holds {what}, which pairaudit did not write",
                       fix="pairaudit never replaces files it did not write: move them, or pass another --out")


def _record(gen: Path) -> dict[str, list[int]]:
    """inode, size and mtime (ns) of every file under a generation folder, by relative path; the cache files
    ``datasets`` writes into a ``save_to_disk`` folder it loaded (``.map()`` on ``audit.clean``) are left out:
    derived from the generation's own data, recomputed on demand, removed with the generation."""
    out: dict[str, list[int]] = {}
    for root, dirs, files in os.walk(gen):
        dirs[:] = [d for d in dirs if not (Path(root) / d).is_symlink()]
        for name in (*files, *(d for d in os.listdir(root) if (Path(root) / d).is_symlink())):
            if root == str(gen) and name.startswith("."):
                continue
            if root != str(gen) and DATASETS_CACHE.fullmatch(name) and os.path.exists(os.path.join(root, "state.json")):
                continue
            p = Path(root) / name
            out[p.relative_to(gen).as_posix()] = file_entry(p)
    return out


def file_entry(p: Path) -> list[Any]:
    """What the manifest records of one file: inode, size, mtime (ns) and, for a regular file, the sha256 of
    its content (an edit that keeps the size and restores the mtime, ``touch -r``, still shows)."""
    st = p.lstat()
    entry: list[Any] = [st.st_ino, st.st_size, st.st_mtime_ns]
    if not p.is_symlink() and p.is_file():
        import hashlib

        h = hashlib.sha256()
        with open(p, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
        entry.append(h.hexdigest())
    return entry


def same_entry(now: list[Any] | None, recorded: Any) -> bool:
    """``now`` matches the manifest's record. With a content digest the size and the digest decide: a
    byte-identical copy of the folder (``cp -a``: new inodes) is the same output, an edit is not, whatever
    its mtime. A record written before digests were kept (inode, size and mtime only) is compared on those."""
    if now is None or not isinstance(recorded, list):
        return now == recorded
    if len(recorded) == 3:
        return now[:3] == recorded
    return len(now) == len(recorded) and now[1] == recorded[1] and now[3:] == recorded[3:]


def _keep_fix(out: Path, gen: Path, changed: list[str]) -> str:
    """The commands that keep the changed outputs and let the next scan write: copy each out of the folder
    (``cp -rL``: the file or folder, not the link), then remove the generation that holds them (pairaudit
    replaces a generation only when nothing in it changed; a deleted one has nothing to keep)."""
    import shlex

    base = str(out).rstrip("/")
    copies = [f"cp -rL {shlex.quote(str(out / name))} {shlex.quote(f'{base}-{name}.saved')}"
              for name in changed if os.path.exists(out / name)]  # a deleted output has nothing to copy
    return " && ".join([*copies, f"rm -r {shlex.quote(str(gen))}"]) + " (then scan again), or pass another --out"


def _changed(gen: Path, files: dict[str, Any]) -> list[str]:
    """Top-level output names under ``gen`` whose files differ from the record (changed, added, removed)."""
    now = _record(gen)
    keys = {k for k in set(now) | set(files) if not same_entry(now.get(k), files.get(k))}
    return sorted({k.split("/", 1)[0] for k in keys})


def replace_file(path: Path, data: bytes, tmp_dir: Path | None = None) -> None:
    """Replace ``path`` with ``data`` at once (a temporary file in ``tmp_dir``, default ``path``'s folder, then
    ``os.replace``). A write that fails (disk full) removes the temporary file: no zero-byte
    ``.manifest.*`` is left behind, and ``path`` is as it was."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", dir=tmp_dir or path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


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

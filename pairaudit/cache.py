"""Every write into the model cache (``PAIRAUDIT_CACHE``, default ``~/.cache/pairaudit``), in one place.

What pairaudit keeps there (a GGUF tokenizer parsed once, dequantized GGUF weights, the distilled static
embedder, embedding / log-prob / reward shards, a tokenizer object saved for a scan) is written by
:func:`cache_write`: into a hidden temporary name in the target's folder, then renamed into place; the
temporary file or folder is removed on any error (and on Ctrl-C), so a reader never sees half an entry and a
failed write leaves nothing behind.

The cache only saves time. When it cannot be written (disk full, quota, no permission, read-only, not a
folder) the first failure is logged once, every later cache write of the scan is skipped (the results are
the same, computed again) and report.json ``cache`` says what ran uncached and how to get the cache back.
Where a scan needs its file in the cache (``required=True``: a tokenizer object passed to the Python API is
recorded as the folder it is saved in), the failure is a :class:`~pairaudit.errors.FileSystemError` (exit 2)
whose fix points ``PAIRAUDIT_CACHE`` at a writable disk or frees space.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pairaudit.errors import FileSystemError, disk_full, os_error_of

CACHE_ENV = "PAIRAUDIT_CACHE"


@dataclass
class _State:
    """The cache's condition in this process since the last :func:`start_scan`."""

    log: Callable[[str], None] | None = None
    off: bool = False  # a worker process of a scan whose main process found the cache unwritable
    error: OSError | None = None  # the first write that failed: the cache is off from then on
    folder: str = ""  # the cache folder that failed
    uncached: list[str] = field(default_factory=list)  # what ran uncached, in order


_STATE = _State()


def start_scan(log: Callable[[str], None] | None = None, *, off: bool = False) -> None:
    """Forget earlier failures (space may have been freed) and send the one warning to ``log``; ``off``: a
    worker process whose main process found the cache unwritable (it said so; the worker skips every write)."""
    global _STATE
    _STATE = _State(log=log, off=off)


def cache_write(folder: Path, write: Callable[[Path], None], *, what: str,
                name: str | Callable[[Path], str], required: bool = False, otherwise: str = "") -> Path | None:
    """Write one cache entry (a file or a folder) atomically.

    Args:
        folder: the folder the entry goes into (created when missing).
        write: writes the entry at the path it is given (a temporary name in ``folder``).
        what: the entry in words, for the warning and report.json (e.g. "embedding vectors").
        name: the entry's name, or a function of the written temporary path that gives it (a content hash).
        required: the scan cannot run without the entry: a failure raises instead of degrading.
        otherwise: with ``required``, another way to run the scan, added to the error's fix.

    Returns:
        The entry's path (written now, or by another process first), or None when the cache cannot be
        written (the caller goes on without it).

    Raises:
        FileSystemError: ``required`` and the cache cannot be written (exit 2, with a fix that works).
    """
    if (_STATE.error is not None or _STATE.off) and not required:
        _skipped(what)
        return None
    tmp = Path(folder) / f".tmp-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        write(tmp)
        target = Path(folder) / (name if isinstance(name, str) else name(tmp))
        if _exists(target):  # the same entry, written by another scan meanwhile
            _remove(tmp)
            return target
        try:
            os.replace(tmp, target)
        except OSError:
            if not _exists(target):
                raise
            _remove(tmp)  # another process renamed its copy first: use theirs
        return target
    except BaseException as exc:
        _remove(tmp)
        err = _cache_os_error(exc, folder)
        if err is None:
            raise
        if required:
            raise _required_error(err, folder, what, otherwise) from exc
        _fail(err, folder, what)
        return None


def cache_report() -> dict[str, Any] | None:
    """report.json ``cache`` of this scan: None when every cache write worked, else the folder, the error,
    what ran uncached and the fix."""
    if _STATE.error is None:
        return None
    return {"folder": _STATE.folder, "written": False, "error": _describe(_STATE.error),
            "uncached": list(_STATE.uncached), "fix": cache_fix(_STATE.error, _STATE.folder)}


def cache_fix(err: OSError, folder: str | Path) -> str:
    """How to get a working cache back, for the error's kind."""
    name = errno.errorcode.get(err.errno or 0, "")
    elsewhere = f"or point {CACHE_ENV} at a folder on a disk with space (export {CACHE_ENV}=/path/to/cache)"
    if name in ("ENOSPC", "EDQUOT"):
        return f"free space on the disk of {folder} (a few hundred MB), {elsewhere}"
    return f"make {folder} a folder you can write to, {elsewhere}"


def _fail(err: OSError, folder: Path, what: str) -> None:
    _STATE.error, _STATE.folder = err, str(folder_root(folder))
    _skipped(what)
    message = (f"cache: could not write {what} into {_STATE.folder}: {_describe(err)}; the scan goes on without "
               f"the cache (same results, computed again; nothing more is written there). fix: "
               f"{cache_fix(err, _STATE.folder)}")
    (_STATE.log or logging.getLogger("pairaudit").warning)(message)


def _skipped(what: str) -> None:
    if what not in _STATE.uncached:
        _STATE.uncached.append(what)


def folder_root(folder: Path) -> Path:
    """The cache root that holds ``folder`` (``PAIRAUDIT_CACHE`` or the default), else ``folder`` itself."""
    from pairaudit.config import default_cache_dir

    root = default_cache_dir()
    try:
        Path(folder).relative_to(root)
        return root
    except ValueError:
        return Path(folder)


def _required_error(err: OSError, folder: Path, what: str, otherwise: str) -> FileSystemError:
    root = folder_root(folder)
    return FileSystemError(f"could not write {what} into the cache {root}: {_describe(err)}; the scan needs it "
                           "there, and nothing was written",
                           fix=cache_fix(err, root) + ", and run again" + (f"; {otherwise}" if otherwise else ""))


def _describe(err: OSError) -> str:
    name = errno.errorcode.get(err.errno or 0, "")
    return f"{err.strerror or err}{f' [{name}]' if name else ''}{f': {err.filename}' if err.filename else ''}"


def _cache_os_error(exc: BaseException, folder: Path) -> OSError | None:
    """The file-system failure behind ``exc`` (a library's save reports one as a plain exception such as
    tokenizers' "No space left on device (os error 28)"), or None: a bug, not the cache's fault."""
    if not isinstance(exc, Exception):
        return None  # Ctrl-C, SystemExit: the temporary entry is gone, the signal goes on
    err = os_error_of(exc, folder)
    if err is not None and err.errno is not None:
        return err
    m = re.search(r"\(os error (\d+)\)", str(exc))
    if m:
        return OSError(int(m.group(1)), os.strerror(int(m.group(1))))
    if disk_full(folder):  # e.g. numpy's short write: "23040 requested and 10176 written", no errno
        return OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} (seen as: {type(exc).__name__}: {str(exc)[:120]})")
    return err


def _exists(path: Path) -> bool:
    return os.path.lexists(path)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink()
        except OSError:
            pass

"""Errors that reach users. Each says what was found, what was expected and how to fix it."""

from __future__ import annotations

from pairaudit import exit_codes


class PairauditError(Exception):
    """Base class: an error the CLI prints without a traceback (exit code 2)."""

    exit_code = exit_codes.INPUT

    def __init__(self, what: str, *, expected: str | None = None, fix: str | None = None) -> None:
        parts = [what]
        if expected:
            parts.append(f"expected: {expected}")
        if fix:
            parts.append(f"fix: {fix}")
        super().__init__("\n  ".join(parts))
        self.what, self.expected, self.fix = what, expected, fix


class InputError(PairauditError):
    """The source cannot be read at all (missing file, unknown format, no hub access)."""


class ConfigError(PairauditError):
    """Bad options or config file."""


class MissingDependency(PairauditError):
    """An optional dependency is not installed."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        super().__init__(
            f"{purpose} needs the Python package '{package}', which is not installed",
            fix=f"pip install 'pairaudit[{extra}]'",
        )
        self.package, self.extra = package, extra


class ModelError(PairauditError):
    """A model (tokenizer, embedder, reference) could not be loaded or failed while running."""

    exit_code = exit_codes.CHECK_FAILED


def require(module: str, extra: str, purpose: str):  # returns a module
    """Import ``module`` lazily or raise a one-line MissingDependency naming the extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependency(module.split(".")[0], extra, purpose) from exc


def require_installed(module: str, extra: str, purpose: str) -> None:
    """Raise ``require``'s MissingDependency when ``module`` is not installed, without importing it: a check at
    construction for a module used later (a pool worker builds the stage but never runs that part)."""
    import importlib.util

    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken entry in sys.modules
        found = False
    if not found:
        raise MissingDependency(module.split(".")[0], extra, purpose)


class WorkerLost(PairauditError):
    """The Ray engine lost a worker (its process or node died) or rows of a shard: nothing was committed and
    the previous output generation is untouched (exit 4)."""

    exit_code = exit_codes.CHECK_FAILED


class FileSystemError(PairauditError):
    """A file operation failed (disk full, a file-size limit, no permission, an I/O error): nothing changed."""


_FIXES = {
    "ENOSPC": "free space on that disk, or pass --out on another one (caches: PAIRAUDIT_CACHE, PAIRAUDIT_SPILL_DIR)",
    "EDQUOT": "free space within your disk quota, or pass --out on another disk",
    "EFBIG": "a file grew past the file-size limit of this process (ulimit -f): raise the limit, or scan fewer rows",
    "EACCES": "pass an --out folder you can write to",
    "EPERM": "pass an --out folder you can write to",
    "EROFS": "the disk is read-only: pass an --out folder on a writable disk",
    "EMFILE": "too many open files: raise the limit (ulimit -n)",
}


def os_error_of(exc: BaseException, out: object = None) -> OSError | None:
    """The OSError behind ``exc``: itself, or the ``(os error N)`` with which polars reports a failed read
    or write (a ``ComputeError``, e.g. "underlying IO error: File too large (os error 27)"); or, for an error
    of polars / pyarrow reading back a file a full disk cut short ("parquet: File out of specification"), ENOSPC
    when the disk of ``out`` has (almost) no space left; else None. The one place that says which failures are
    the file system's (exit 2, :func:`file_system_error`)."""
    import errno
    import os
    import re

    if isinstance(exc, OSError):
        return exc
    module = type(exc).__module__
    m = re.search(r"\(os error (\d+)\)", str(exc)) if module.startswith("polars") else None
    if m:
        return OSError(int(m.group(1)), os.strerror(int(m.group(1))))
    if module.startswith(("polars", "pyarrow")) and out is not None and disk_full(out):
        return OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} (seen as: {type(exc).__name__}: {str(exc)[:120]})")
    return None


def disk_full(path: object, margin: int = 1 << 20) -> bool:
    """The disk that holds ``path`` (or its nearest existing parent) has less than ``margin`` bytes free."""
    import os
    from pathlib import Path

    p = Path(str(path))
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        st = os.statvfs(p)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < margin


def file_system_error(exc: OSError, out: object = None, doing: str = "", in_place: bool = False) -> FileSystemError:
    """What a failed file operation means for the user: the error and the file (and what was being done),
    that ``out`` (the output folder, when given) still holds its previous outputs, and the fix for the
    error's kind. ``in_place``: the command writes into its folder and has no --out (``apply``): the fix
    does not offer another --out."""
    import errno

    name = errno.errorcode.get(exc.errno or 0, "")
    if in_place and name in ("ENOSPC", "EDQUOT", "EACCES", "EPERM", "EROFS"):  # no --out to offer
        first = (f"free space on the disk of {out} (about the size of its outputs)" if name in ("ENOSPC", "EDQUOT")
                 else f"make {out} writable for you (its disk is read-only)" if name == "EROFS"
                 else f"make {out} and its files writable for you")
        return FileSystemError(f"stopped{' while ' + doing if doing else ''}: {exc.strerror or exc} [{name}]"
                               f"{f': {exc.filename}' if exc.filename else ''}; nothing in {out} changed",
                               fix=f"{first}, or copy the folder to another disk with its links (cp -a) and run "
                                   "the command there")
    where = f": {exc.filename}" if exc.filename else ""
    kept = f"; nothing in --out {out} changed (it still holds its previous outputs, if any)" if out is not None else ""
    return FileSystemError(f"stopped{' while ' + doing if doing else ''}: {exc.strerror or exc}{f' [{name}]' if name else ''}{where}{kept}",
                           fix=_FIXES.get(name, "see the error above: fix it (or pass another --out) and run again"))

"""Per-row columns of the whole-dataset stages that move to disk when they grow large.

A stage appends one array per batch to a column (a list of arrays, the form engines ship between
processes). :class:`Spill` moves a stage's lists to files once their total passes ``limit`` bytes (64 MB by
default) and hands the whole column back at the end: concatenated in memory when it never spilled,
else a read-only :class:`Mapped` view of the file, read where it is indexed (``pread``, or a window of at most
``WINDOW_BYTES`` mapped while a selection's rows are copied out: the pages read stay in the page cache, not in the
process's resident memory). Byte strings (compressed texts) spill to one data file plus an offsets array
(:class:`Blobs`). Files live in a private temp folder (``PAIRAUDIT_SPILL_DIR`` or the system temp
folder), removed when the stage is done or the process ends. ``PAIRAUDIT_SPILL_BYTES`` sets the limit (tests
force spilling with a small one).

A Ray shard actor (engines/ray_actor.py) spills every batch (limit 0) and hands each shard's files over to the
shard (:meth:`Spill.hand_over`): the shard's columns stay on disk until the shard is finished. Its spill files
live in a folder of its own named by its process id (:func:`actor_folder`), so a surviving process removes the
folders of killed ones on the same machine (:func:`sweep_dead`).
"""

from __future__ import annotations

import atexit
import contextlib
import mmap
import os
import re
import shutil
import tempfile
import threading
import weakref
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_LIMIT = 64 << 20
ACTOR_PREFIX = "pairaudit-actor-"  # an actor's spill folder: pairaudit-actor-<pid>-<random>
WINDOW_BYTES = 16 << 20  # a selection of rows is copied out of a mapped window of the file at most this long

_OPENING = threading.Lock()  # a Mapped opens its file once, whichever thread reads it first

class Mapped:
    """A read-only array in a file, read only where it is indexed: an integer or a slice of rows is read with
    ``os.pread`` (nothing mapped); a list, array or mask of rows is copied in sorted order out of windows of the
    file at most ``WINDOW_BYTES`` long, each mapped only while its rows are copied (:meth:`_gather`). A mapping
    counts the pages it touches in the process's RSS while it lives, and on a kernel that caches files in large
    folios one touched row maps its whole folio: 8,192 rows spread over a mapping of the whole file counted the
    whole file (+165 MB RSS for a Ray cell group's 173 MB sketch file at 1M rows); a window bounds that to its
    length. A long-lived ``np.memmap`` would keep every page it touched until closed. One element costs a few
    microseconds, so callers may index it row by row."""

    def __init__(self, path: Path, dtype: Any, shape: tuple[int, ...], offset: int = 0) -> None:
        self.path, self.dtype, self.shape, self.offset = path, np.dtype(dtype), shape, offset
        self.itemsize = self.dtype.itemsize
        self.ndim = len(shape)
        self._row = self.itemsize * int(np.prod(shape[1:], dtype=np.int64))  # bytes per row
        self._fd: int | None = None
        self._closer: Any = None

    def __len__(self) -> int:
        return self.shape[0]

    def _open(self) -> int:
        with _OPENING:  # the decision's threads read one column at once: one descriptor (threads.py)
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDONLY)
                self._closer = weakref.finalize(self, os.close, self._fd)
            return self._fd

    def _read(self, lo: int, hi: int) -> np.ndarray:
        """Rows ``lo:hi`` (0 <= lo <= hi <= len), read with pread."""
        want = (hi - lo) * self._row
        buf = os.pread(self._open(), want, self.offset + lo * self._row) if want else b""
        if len(buf) != want:
            raise OSError(f"spill file {self.path}: read {len(buf)} of {want} bytes")
        return np.frombuffer(bytearray(buf), dtype=self.dtype).reshape((hi - lo, *self.shape[1:]))

    def _window(self, rows: np.ndarray, rest: tuple[Any, ...]) -> np.ndarray:
        """``self[rows][:, *rest]`` for sorted ``rows`` that lie within ``WINDOW_BYTES`` of each other: one mapping
        of the bytes from the first row to the last, closed before returning."""
        lo, hi = self.offset + int(rows[0]) * self._row, self.offset + (int(rows[-1]) + 1) * self._row
        start = lo - lo % mmap.ALLOCATIONGRANULARITY
        with mmap.mmap(self._open(), hi - start, offset=start, access=mmap.ACCESS_READ) as mm:
            view = np.frombuffer(mm, dtype=self.dtype, count=(hi - lo) // self.itemsize, offset=lo - start)
            part = view.reshape((-1, *self.shape[1:]))[(rows - rows[0], *rest)]
            del view  # the mapping closes only without views of it
        return part

    def _gather(self, at: np.ndarray, rest: tuple[Any, ...] = ()) -> np.ndarray:
        """``self[at][:, *rest]`` for rows ``at`` (any order, repeats and negatives allowed), copied a window at a
        time in sorted order."""
        n = self.shape[0]
        at = np.asarray(at, np.int64).reshape(-1)
        bad = (at < -n) | (at >= n)
        if bad.any():
            raise IndexError(f"index {int(at[bad][0])} is out of bounds for axis 0 with size {n}")
        at = np.where(at < 0, at + n, at)
        if not len(at):
            return np.empty((0, *self.shape[1:]), self.dtype)[(slice(None), *rest)]
        order = np.argsort(at, kind="stable")
        srt = at[order]
        span = max(1, WINDOW_BYTES // max(1, self._row))
        out: np.ndarray | None = None
        s = 0
        while s < len(srt):
            stop = int(np.searchsorted(srt, int(srt[s]) + span))
            part = self._window(srt[s:stop], rest)
            if out is None:
                out = np.empty((len(at), *part.shape[1:]), part.dtype)
            out[order[s:stop]] = part
            s = stop
        assert out is not None
        return out

    def __getitem__(self, key: Any) -> Any:
        first, rest = (key[0], key[1:]) if isinstance(key, tuple) and key else (key, ())
        if isinstance(first, (int, np.integer)) and not isinstance(first, bool):
            i = int(first) + (self.shape[0] if first < 0 else 0)
            if not 0 <= i < self.shape[0]:
                raise IndexError(f"index {int(first)} is out of bounds for axis 0 with size {self.shape[0]}")
            v = self._read(i, i + 1)[0]
            return v[rest] if rest else v
        if isinstance(first, slice) and first.step in (None, 1):
            lo, hi, _ = first.indices(self.shape[0])
            v = self._read(lo, max(lo, hi))
            return v[(slice(None), *rest)] if rest else v
        if isinstance(first, (list, np.ndarray)):
            at = np.asarray(first)
            if at.dtype == bool:
                if at.shape != (self.shape[0],):
                    raise IndexError(f"boolean index of shape {at.shape} for axis 0 with size {self.shape[0]}")
                at = np.flatnonzero(at)
            if at.ndim == 1 and (at.dtype.kind in "iu" or len(at) == 0):
                return self._gather(at, tuple(rest))
        mm = np.memmap(self.path, dtype=self.dtype, mode="r", shape=self.shape, offset=self.offset)
        try:
            v = mm[key]
            return np.array(v) if isinstance(v, np.ndarray) else v  # a scalar is a copy already
        finally:
            mm._mmap.close()  # type: ignore[attr-defined]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self[:]
        return out if dtype is None else out.astype(dtype)


class Written:
    """A write-only array in a file, assigned a slice of rows at a time with ``os.pwrite`` (``out[lo:hi] = x``, as
    ``search.center`` and ``search.sum_vectors`` write): a ``np.memmap`` written in full keeps every page it
    wrote in the process's resident memory until it is closed (1 GB for the float32 sums of 1M rows)."""

    def __init__(self, path: Path, dtype: Any, shape: tuple[int, ...]) -> None:
        self.path, self.dtype, self.shape = path, np.dtype(dtype), shape
        self._row = self.dtype.itemsize * int(np.prod(shape[1:], dtype=np.int64))
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self._closer = weakref.finalize(self, os.close, self._fd)
        os.ftruncate(self._fd, self._row * shape[0])

    def __len__(self) -> int:
        return self.shape[0]

    def __setitem__(self, key: slice, value: Any) -> None:
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError("Written arrays are assigned a slice of rows at a time")
        lo, hi, _ = key.indices(self.shape[0])
        arr = np.ascontiguousarray(np.broadcast_to(np.asarray(value, dtype=self.dtype), (max(0, hi - lo),
                                                                                        *self.shape[1:])))
        view, pos = memoryview(arr.reshape(-1).view(np.uint8)), self._row * lo
        assert self._fd is not None, "written after close"
        while len(view):
            n = os.pwrite(self._fd, view, pos)
            view, pos = view[n:], pos + n

    def close(self) -> None:
        self._closer()
        self._fd = None


class Blobs:
    """Read-only sequence of byte strings: ``data`` (uint8) cut at ``ends`` (int64)."""

    def __init__(self, data: np.ndarray, ends: np.ndarray) -> None:
        self.data, self.ends = data, ends

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, i: int) -> bytes:
        lo = int(self.ends[i - 1]) if i else 0
        return bytes(self.data[lo:int(self.ends[i])])

    @property
    def nbytes(self) -> int:
        return int(self.ends[-1]) if len(self.ends) else 0


def _nbytes(part: Any) -> int:
    if isinstance(part, np.ndarray) and part.dtype == object:
        return sum(len(b) for b in part.tolist()) + 8 * len(part)
    return int(getattr(part, "nbytes", 0))


class Spill:
    def __init__(self, limit: int | None = None) -> None:
        self.limit = int(os.environ.get("PAIRAUDIT_SPILL_BYTES") or DEFAULT_LIMIT) if limit is None else limit
        self.folder: Path | None = None
        self._shapes: dict[str, tuple[np.dtype, tuple[int, ...], int]] = {}  # name -> (dtype, row shape, rows)
        self._blob_ends: dict[str, list[np.ndarray]] = {}
        self._blob_bytes: dict[str, int] = {}
        self._cleanup: Any = None

    def _file(self, name: str) -> Path:
        if self.folder is None:
            base = os.environ.get("PAIRAUDIT_SPILL_DIR") or None
            self.folder = Path(tempfile.mkdtemp(prefix="pairaudit-spill-", dir=base))
            self._cleanup = weakref.finalize(self, shutil.rmtree, str(self.folder), True)
        return self.folder / f"{name}.bin"

    @property
    def spilled_columns(self) -> set[str]:
        return set(self._shapes) | set(self._blob_ends)

    @property
    def spilled(self) -> bool:
        return bool(self._shapes or self._blob_ends)

    def hand_over(self, columns: dict[str, list[Any]]) -> Spill | None:
        """Give what this Spill wrote to a new Spill (returned; None when nothing spilled) and start afresh:
        every spilled list of ``columns`` becomes one part, the column on disk (:meth:`column`: a
        :class:`Mapped` or :class:`Blobs` view); the files go when the returned Spill is closed or collected."""
        if not self.spilled:
            return None
        out = Spill(self.limit)
        for name, parts in columns.items():
            if name in self._shapes or name in self._blob_ends:
                col = self.column(name, parts)
                parts.append(col)
        out.folder, self.folder = self.folder, None
        out._shapes, self._shapes = self._shapes, {}
        out._blob_ends, self._blob_ends = self._blob_ends, {}
        out._blob_bytes, self._blob_bytes = self._blob_bytes, {}
        if self._cleanup is not None:
            self._cleanup.detach()
            self._cleanup = None
        out._cleanup = weakref.finalize(out, shutil.rmtree, str(out.folder), True)
        return out

    def maybe(self, columns: dict[str, list[Any]]) -> None:
        """Move every list of ``columns`` to disk (and clear it) once their total size passes the limit,
        or always once the stage has spilled (a column is either all in memory or all on disk)."""
        if not self.spilled and sum(_nbytes(p) for parts in columns.values() for p in parts) < self.limit:
            return
        for name, parts in columns.items():
            self._write(name, parts)

    def _write(self, name: str, parts: list[Any]) -> None:
        if not parts:
            return
        with open(self._file(name), "ab") as fh:
            for part in parts:
                if isinstance(part, np.ndarray) and part.dtype == object:  # byte strings
                    lens = np.fromiter((len(b) for b in part.tolist()), np.int64, len(part))
                    fh.write(b"".join(part.tolist()))
                    base = self._blob_bytes.get(name, 0)
                    self._blob_ends.setdefault(name, []).append(base + np.cumsum(lens))
                    self._blob_bytes[name] = base + int(lens.sum())
                    continue
                arr = np.ascontiguousarray(part)
                dtype, shape, rows = self._shapes.get(name, (arr.dtype, arr.shape[1:], 0))
                if (arr.dtype, arr.shape[1:]) != (dtype, shape):
                    raise ValueError(f"spill column {name}: {arr.dtype}{arr.shape[1:]} after {dtype}{shape}")
                fh.write(arr.tobytes())
                self._shapes[name] = (dtype, shape, rows + len(arr))
        parts.clear()

    def column(self, name: str, parts: list[Any]) -> Any:
        """The whole column (what was spilled, then ``parts``), and ``parts`` cleared."""
        if name not in self._shapes and name not in self._blob_ends:
            if parts and isinstance(parts[0], np.ndarray) and parts[0].dtype == object:
                out: Any = np.concatenate(parts)
            else:
                out = np.concatenate(parts) if parts else np.empty(0)
            parts.clear()
            return out
        self._write(name, parts)
        if name in self._blob_ends:
            ends = np.concatenate(self._blob_ends[name])
            data: Any = Mapped(self._file(name), np.uint8, (int(ends[-1]),)) if len(ends) and ends[-1] \
                else np.empty(0, np.uint8)
            return Blobs(data, ends)
        dtype, shape, rows = self._shapes[name]
        if rows == 0:
            return np.empty((0, *shape), dtype)
        return Mapped(self._file(name), dtype, (rows, *shape))

    def scratch(self, name: str, shape: tuple[int, ...], dtype: Any) -> Any:
        """A writable array for a derived column, written a slice of rows at a time (``out[lo:hi] = x``): in
        memory when this stage never spilled, else a :class:`Written` file (nothing mapped, so the rows written
        never count in the process's resident memory); :meth:`reopen` hands it back as a :class:`Mapped`."""
        if not self.spilled:
            return np.empty(shape, dtype)
        return Written(self._file(name), dtype, shape)

    def reopen(self, arr: Any) -> Any:
        """A :class:`Mapped` for a written :meth:`scratch` file (an in-memory array as it is)."""
        if not isinstance(arr, Written):
            return arr
        arr.close()
        return Mapped(arr.path, arr.dtype, arr.shape)

    def restore(self, columns: dict[str, list[Any]]) -> None:
        """Put every spilled column back in front of its list (in memory) and forget the files: what an
        engine's ``export_state`` ships must be the whole column."""
        for name, parts in columns.items():
            if name in self._shapes or name in self._blob_ends:
                col = self.column(name, parts)
                if isinstance(col, Blobs):
                    parts.append(np.array([col[i] for i in range(len(col))] + [None], dtype=object)[:-1])
                else:
                    parts.append(col[:])
        self.close()

    def close(self) -> None:
        if self._cleanup is not None:
            self._cleanup()
        self.folder = None
        self._shapes.clear()
        self._blob_ends.clear()
        self._blob_bytes.clear()


def actor_folder() -> Path:
    """A spill folder of this process's own (``PAIRAUDIT_SPILL_DIR`` or the temp folder, named by its process
    id), made the base of every :class:`Spill` it starts; the folders of dead processes of the same machine are
    removed first (:func:`sweep_dead`). Removed when the process ends normally."""
    base = Path(os.environ.get("PAIRAUDIT_SPILL_DIR") or tempfile.gettempdir())
    sweep_dead(base)
    folder = Path(tempfile.mkdtemp(prefix=f"{ACTOR_PREFIX}{os.getpid()}-", dir=base))
    os.environ["PAIRAUDIT_SPILL_DIR"] = str(folder)
    atexit.register(shutil.rmtree, str(folder), True)
    return folder


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, killed and not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError, IndexError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return True


def sweep_dead(base: Path | None = None) -> list[str]:
    """Remove the actor spill folders under ``base`` (default: ``PAIRAUDIT_SPILL_DIR``'s parent when it is an actor
    folder, else it or the temp folder) whose process is gone (killed: nothing of it ran at exit); returns them."""
    if base is None:
        here = Path(os.environ.get("PAIRAUDIT_SPILL_DIR") or tempfile.gettempdir())
        base = here.parent if here.name.startswith(ACTOR_PREFIX) else here
    gone = []
    with contextlib.suppress(OSError):
        for p in base.iterdir():
            m = re.fullmatch(re.escape(ACTOR_PREFIX) + r"(\d+)-.*", p.name)
            if m and int(m.group(1)) != os.getpid() and not _alive(int(m.group(1))):
                shutil.rmtree(p, ignore_errors=True)
                gone.append(str(p))
    return gone

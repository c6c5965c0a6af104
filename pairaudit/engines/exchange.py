"""The hash shuffle's pieces kept by the worker that cut them and asked for by the worker that needs them.

A ``distribute = "hash"`` stage is finalized in hash partitions (docs/scale.md). Each shard's state is cut into
one piece per partition; each partition's result is cut into one part per shard. If every piece and part were
an object the driver handed on, the driver would own shards x partitions objects per stage, which grows with
the square of the rows (at 100M rows ~7M objects a stage). Here they never reach the driver:

* the actor that cuts a shard writes its pieces into one file (:class:`PieceFile`, one blob after the other);
* the actor that reduces partition ``p`` asks every actor for its pieces ``p`` (one message each:
  :func:`pack` of ``(shard, piece)`` pairs) and absorbs them in shard order, as before;
* it writes its results for every shard the same way, and each shard's writer asks every actor for its parts.

So the driver submits O(shards + partitions) tasks and owns none of the pieces. This module is plain data (no
Ray): the actor's side is ``ray_actor.ExchangeOps``.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

_LEN = struct.Struct("<qQ")  # a packed item's header: its key (shard or partition), its length in bytes


class PieceFile:
    """Blobs written one after the other to ``path`` (given at once, or added with :meth:`append` as they are
    cut); each read back by its index, and the file removed once every blob was read (:meth:`read`). Safe to
    read from two threads (the actor's own work and its serving).

    Args:
        path: the file to write (in the actor's spill folder).
        blobs: the pieces, in index order (partition or shard); more may follow with :meth:`append`.

    Example:
        >>> import tempfile
        >>> f = PieceFile(Path(tempfile.mkdtemp()) / "x.pieces", [b"ab", b""])
        >>> f.append(b"c")
        >>> f.read(2), f.read(0), f.read(1), f.path.exists()
        (b'c', b'ab', b'', False)
    """

    def __init__(self, path: Path, blobs: Iterable[bytes] = ()) -> None:
        self.path, self.ends, self.size, self.taken = path, [], 0, 0
        self.lock = threading.Lock()
        with open(path, "wb") as fh:
            for blob in blobs:
                self.size += fh.write(blob)
                self.ends.append(self.size)

    def append(self, blob: bytes | Iterable[bytes]) -> None:
        """One more blob (the next index), or one made of the pieces of an iterable, each written as it comes
        (only the piece being cut is in memory)."""
        with open(self.path, "ab") as fh:
            for piece in [blob] if isinstance(blob, bytes) else blob:
                self.size += fh.write(piece)
        self.ends.append(self.size)

    def read(self, i: int) -> bytes:
        """Blob ``i``; the file goes when the last unread blob is read (each is read once)."""
        lo, hi = (self.ends[i - 1] if i else 0), self.ends[i]
        with self.lock:
            with open(self.path, "rb") as fh:
                fh.seek(lo)
                blob = fh.read(hi - lo)
            self.taken += 1
            if self.taken == len(self.ends):
                self.path.unlink(missing_ok=True)
        return blob


class Pull(NamedTuple):
    """Where a shard's writer finds one of its parts of a stage's results: blob ``index`` parked under ``(tag,
    key)`` on the actor ``owner``. The driver hands the writer this address, not the part: a task result the
    driver holds a reference to lives in the driver's own memory when it is small (Ray's inline limit), so many
    small shards' results would sit in the driver until the write (docs/scale.md "Results parked with their
    writers").

    Example:
        >>> Pull("cells.NearDuplicateStage.result", 3, 1, 0).owner
        1
    """

    tag: str
    key: int
    owner: int
    index: int


def pack(items: list[tuple[int, bytes]]) -> bytes:
    """``(key, blob)`` pairs in one message (:func:`unpack` reads them back).

    Example:
        >>> unpack(pack([(3, b"xy"), (0, b"")]))
        [(3, b'xy'), (0, b'')]
    """
    return b"".join(_LEN.pack(key, len(blob)) + blob for key, blob in items)


def unpack(data: bytes) -> list[tuple[int, bytes]]:
    """The ``(key, blob)`` pairs of a :func:`pack` message, in the order packed."""
    out, pos, view = [], 0, memoryview(data)
    while pos < len(data):
        key, n = _LEN.unpack_from(data, pos)
        pos += _LEN.size
        out.append((key, bytes(view[pos:pos + n])))
        pos += n
    return out

"""The Ray actor's side of the exchange without the driver (:mod:`.exchange`).

An actor parks what it cut for other actors (``park``: under a tag and a key, one blob per receiver: a shard's
hash pieces, one per partition; a partition's results, one per shard; a shard's rows of each near-duplicate cell
group; a group's results, one per shard) in its spill folder and serves them to the actor that asks
(``serve_all`` / ``serve_one``, run in the actor's ``serve`` concurrency group, so an actor busy with its own
work still answers: serving asks nobody, so no cycle of waits can form). ``gather`` asks every actor for blob
``i`` of all it parked under a tag; ``fetch`` asks each key's owner in turn (one blob in memory at a time). The
driver waits for the parking tasks before it starts the pulling ones, so every blob is there when asked for.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pairaudit.engines.exchange import PieceFile, Pull, pack, unpack

SERVE = "serve"  # the actors' concurrency group that answers pulls (``ray_engine`` declares it)
CONCURRENCY_GROUPS = {SERVE: 1}


class ExchangeOps:
    """Mixed into ``ShardActor`` (``self.spill_folder``); ``set_peers`` before the first pull."""

    spill_folder: str

    def set_peers(self, peers: list[Any], me: int) -> None:
        """Every actor of the scan (this one is ``peers[me]``)."""
        self.peers, self.me = peers, me
        self.xlock = threading.Lock()
        self.parked: dict[tuple[str, int], PieceFile] = {}

    def park(self, tag: str, key: int, blobs: Iterable[bytes] | PieceFile) -> int:
        """``blobs`` (one per receiver, by index; or a :meth:`parking` file, filled) kept under ``(tag, key)``
        until pulled; returns their bytes."""
        f = blobs if isinstance(blobs, PieceFile) else PieceFile(self._path(tag, key), blobs)
        with self.xlock:
            self.parked[(tag, key)] = f
        return f.size

    def parking(self, tag: str, key: int) -> PieceFile:
        """An empty file for what ``(tag, key)`` will hold, filled blob by blob as it is cut (``append``), then
        handed to :meth:`park`."""
        return PieceFile(self._path(tag, key))

    def _path(self, tag: str, key: int) -> Path:
        return Path(self.spill_folder) / f"{tag}.{key}.parked"

    def serve_all(self, tag: str, i: int) -> bytes:
        """Blob ``i`` of everything parked here under ``tag``, as ``(key, blob)`` pairs."""
        with self.xlock:
            files = sorted((key, f) for (t, key), f in self.parked.items() if t == tag)
        return pack([(key, f.read(i)) for key, f in files])

    def serve_one(self, tag: str, key: int, i: int) -> bytes:
        """Blob ``i`` parked here under ``(tag, key)``."""
        with self.xlock:
            f = self.parked[(tag, key)]
        return f.read(i)

    def gather(self, tag: str, i: int) -> list[bytes]:
        """Blob ``i`` of every key parked under ``tag`` on any actor, in key order (hash pieces: shard order)."""
        import ray

        refs = [None if j == self.me else peer.serve_all.options(concurrency_group=SERVE).remote(tag, i)
                for j, peer in enumerate(self.peers)]
        items: list[tuple[int, bytes]] = []
        for ref in refs:  # a lost peer raises here (Ray's error names it): the scan stops (ray_engine._run)
            items += unpack(self.serve_all(tag, i) if ref is None else ray.get(ref))
        return [blob for _, blob in sorted(items, key=lambda item: item[0])]

    def pull(self, where: Pull) -> bytes:
        """The blob at ``where`` (parked here or on a peer)."""
        import ray

        if where.owner == self.me:
            return self.serve_one(where.tag, where.key, where.index)
        return ray.get(self.peers[where.owner].serve_one.options(concurrency_group=SERVE).remote(
            where.tag, where.key, where.index))

    def fetch(self, tag: str, keys: list[int], owners: list[int], i: int) -> Iterator[bytes]:
        """Blob ``i`` of ``(tag, key)`` for each key in turn, from the actor ``owners[key]`` (the next one asked
        for while this one is used: at most two in memory)."""
        import ray

        def ask(key: int) -> Any:
            owner = owners[key]
            return key if owner == self.me else self.peers[owner].serve_one.options(
                concurrency_group=SERVE).remote(tag, key, i)

        pending = ask(keys[0]) if keys else None
        for n in range(len(keys)):
            now, pending = pending, (ask(keys[n + 1]) if n + 1 < len(keys) else None)
            yield self.serve_one(tag, now, i) if isinstance(now, int) else ray.get(now)

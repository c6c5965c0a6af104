"""The Ray actor's side of the hash shuffle without the driver (:mod:`.exchange`).

An actor parks the pieces it cut (``park_pieces``: a shard's state, one piece per partition) and the parts it
reduced (``park_routed``: a partition's results, one part per shard) in its spill folder, and serves them to the
actor that asks (``serve_pieces`` / ``serve_routed``, run in the actor's ``serve`` concurrency group, so an actor
busy reducing still answers: serving asks nobody, so no cycle of waits can form). ``pull_pieces`` /
``pull_routed`` ask every actor (itself directly) and give the blobs in shard / partition order.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pairaudit.engines.exchange import PieceFile, pack, unpack

SERVE = "serve"  # the actors' concurrency group that answers pulls (``ray_engine`` declares it)
CONCURRENCY_GROUPS = {SERVE: 1}


class ExchangeOps:
    """Mixed into ``ShardActor`` (``self.spill_folder``); ``set_peers`` before the first pull."""

    spill_folder: str

    def set_peers(self, peers: list[Any], me: int) -> None:
        """Every actor of the scan (this one is ``peers[me]``)."""
        self.peers, self.me = peers, me
        self.xlock = threading.Lock()
        self.pieces: dict[tuple[int, int], PieceFile] = {}  # (stage, shard) -> one piece per partition
        self.routed: dict[tuple[int, int], PieceFile] = {}  # (stage, partition) -> one part per shard

    def park_pieces(self, k: int, s: int, blobs: Iterable[bytes]) -> int:
        """Shard ``s``'s pieces of stage ``k`` (one per partition) kept until pulled; returns their bytes."""
        f = PieceFile(Path(self.spill_folder) / f"shard{s}.stage{k}.pieces", blobs)
        with self.xlock:
            self.pieces[(k, s)] = f
        return f.size

    def park_routed(self, k: int, p: int, blobs: Iterable[bytes]) -> int:
        """Partition ``p``'s results of stage ``k`` (one part per shard) kept until pulled; returns their bytes."""
        f = PieceFile(Path(self.spill_folder) / f"part{p}.stage{k}.routed", blobs)
        with self.xlock:
            self.routed[(k, p)] = f
        return f.size

    def serve_pieces(self, k: int, p: int) -> bytes:
        """Piece ``p`` of every shard of stage ``k`` this actor cut, as ``(shard, piece)`` pairs."""
        with self.xlock:
            files = sorted((s, f) for (kk, s), f in self.pieces.items() if kk == k)
        return pack([(s, f.read(p)) for s, f in files])

    def serve_routed(self, k: int, s: int) -> bytes:
        """Shard ``s``'s part of every partition of stage ``k`` this actor reduced, as ``(partition, part)``."""
        with self.xlock:
            files = sorted((p, f) for (kk, p), f in self.routed.items() if kk == k)
        return pack([(p, f.read(s)) for p, f in files])

    def pull_pieces(self, k: int, p: int) -> list[bytes]:
        """Partition ``p`` of stage ``k``: every shard's piece, in shard order."""
        return self._pull("serve_pieces", k, p)

    def pull_routed(self, k: int, s: int) -> list[bytes]:
        """Shard ``s``'s results of stage ``k``: every partition's part, in partition order."""
        return self._pull("serve_routed", k, s)

    def _pull(self, method: str, k: int, key: int) -> list[bytes]:
        import ray

        refs = [None if i == self.me else getattr(peer, method).options(concurrency_group=SERVE).remote(k, key)
                for i, peer in enumerate(self.peers)]
        items: list[tuple[int, bytes]] = []
        for ref in refs:  # a lost peer raises here (Ray's error names it): the scan stops (ray_engine._run)
            items += unpack(getattr(self, method)(k, key) if ref is None else ray.get(ref))
        return [blob for _, blob in sorted(items, key=lambda item: item[0])]

"""Exact ``duplicate_pair`` and ``contradictory_pair`` by hashing.

Per row the stage keeps three 64-bit numbers (row, ordered-pair hash, unordered-pair hash) plus
an orientation bit: 25 bytes a row, 25 MB per million rows. 64-bit hashes collide with
probability ~n^2/2^65 (about 3e-8 at 1M rows).
"""

from __future__ import annotations

import numpy as np

from pairaudit.checks.base import CheckInfo
from pairaudit.datatypes import Pair, StageResult
from pairaudit.hashing import ordered_key, side_digests, unordered_key
from pairaudit.stages.base import Stage
from pairaudit.stages.state import Column
from pairaudit.trainer.tokenizer import EncodedPair

DUPLICATE_INFO = CheckInfo(
    "duplicate_pair",
    "exact duplicate of an earlier (prompt, chosen, rejected); the first occurrence is kept and is the group",
    "drop",
    summary="exact duplicate of another row",
    kind="global",
    why="duplicates over-weight one preference; one copy keeps the signal",
)
CONTRADICTION_INFO = CheckInfo(
    "contradictory_pair",
    "another row has the same (or, with the embed extra, near-same) prompt and the same two responses "
    "preferred the other way; every row of such a group gets the finding, group = smallest row",
    "drop",
    summary="same pair, preferred both ways",
    kind="global",
    why="the same comparison labelled both ways pushes the DPO logit in opposite directions: neither label "
        "can be trusted without review, so both are dropped by default",
)


class ExactStage(Stage):
    infos = (DUPLICATE_INFO, CONTRADICTION_INFO)

    state = {"_rows": Column(np.int64), "_ordered": Column(np.uint64), "_unordered": Column(np.uint64),
             "_flip": Column(np.bool_)}
    # equal ordered hashes imply equal unordered ones: one partition holds every group of both checks
    distribute, partition_key = "hash", "_unordered"

    def observe(self, pairs: list[Pair], encoded: list[EncodedPair] | None) -> None:
        n = len(pairs)
        rows, ordered = np.empty(n, np.int64), np.empty(n, np.uint64)
        unordered, flip = np.empty(n, np.uint64), np.empty(n, np.bool_)
        for i, pair in enumerate(pairs):
            digests = side_digests(pair)
            rows[i] = pair.row
            ordered[i] = ordered_key(digests)
            unordered[i], flip[i] = unordered_key(digests)
        self._rows.append(rows)
        self._ordered.append(ordered)
        self._unordered.append(unordered)
        self._flip.append(flip)

    def finalize(self) -> StageResult:
        res = StageResult()
        if not self._rows:
            return res
        rows = np.concatenate(self._rows)
        ordered = np.concatenate(self._ordered)
        unordered = np.concatenate(self._unordered)
        flip = np.concatenate(self._flip)
        if "duplicate_pair" in self.enabled:
            order = np.lexsort((rows, ordered))
            first_row = rows[order[0]]
            for k in range(1, len(order)):
                i, j = order[k - 1], order[k]
                if ordered[j] != ordered[i]:
                    first_row = rows[j]
                    continue
                res.findings.append(DUPLICATE_INFO.finding(int(rows[j]), None, 1.0, int(first_row),
                                            f"exact duplicate of row {first_row}"))
        if "contradictory_pair" in self.enabled:
            order = np.lexsort((rows, unordered))
            keys = unordered[order]
            bounds = np.flatnonzero(np.diff(keys)) + 1
            for grp in np.split(order, bounds):
                if len(grp) < 2 or flip[grp].all() or not flip[grp].any():
                    continue
                g = int(rows[grp].min())
                for i in grp:
                    others = sorted(int(rows[j]) for j in grp if flip[j] != flip[i])
                    res.findings.append(CONTRADICTION_INFO.finding(int(rows[i]), None, 1.0, g,
                                                f"same prompt and responses preferred the other way in row(s) "
                                                f"{', '.join(map(str, others[:5]))}"))
        res.findings.sort(key=lambda f: (f.row, f.check))
        return res

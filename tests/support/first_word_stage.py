"""A throwaway whole-dataset stage, written the way docs/layout.md ("Adding a stage") says, registered through
``PAIRAUDIT_STAGES`` (tests/test_stage_contract.py): it flags a chosen response that opens with a word no other
chosen response of the dataset opens with, and counts the rows it observed."""

from __future__ import annotations

import hashlib

import numpy as np

from pairaudit.checks.base import CheckInfo
from pairaudit.datatypes import Pair, StageResult
from pairaudit.stages.base import Stage
from pairaudit.stages.state import Column, Count

PATH = "support.first_word_stage:FirstWordStage"

LONE_OPENING_INFO = CheckInfo(
    "lone_opening",
    "the chosen response opens with a word no other chosen response opens with",
    "flag",
    summary="chosen opens with a word used once",
    kind="global",
    why="a test stage: a whole-dataset view a per-pair check cannot have",
)


def _word_key(text: str | None) -> int:
    words = (text or "").split()
    digest = hashlib.blake2b(words[0].lower().encode() if words else b"", digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1  # fits int64


class FirstWordStage(Stage):
    infos = (LONE_OPENING_INFO,)
    state = {"_rows": Column(np.int64), "_word": Column(np.int64), "rows_observed": Count()}

    def observe(self, pairs: list[Pair], encoded: object) -> None:
        self._rows.append(np.fromiter((p.row for p in pairs), np.int64, len(pairs)))
        self._word.append(np.fromiter((_word_key(p.chosen) for p in pairs), np.int64, len(pairs)))
        self.rows_observed += len(pairs)

    def finalize(self) -> StageResult:
        res = StageResult(stats={"lone_opening": {"rows_observed": int(self.rows_observed)}})
        if not self._rows:
            return res
        rows, words = np.concatenate(self._rows), np.concatenate(self._word)
        _, inverse, counts = np.unique(words, return_inverse=True, return_counts=True)
        uses = counts[inverse]
        res.rows = rows.tolist()
        res.scores = {LONE_OPENING_INFO.score_key: uses.astype(np.float64)}
        for i in np.flatnonzero(uses == 1):
            res.findings.append(LONE_OPENING_INFO.finding(int(rows[i]), "chosen", 1.0,
                                                          detail="no other chosen response opens with this word"))
        return res

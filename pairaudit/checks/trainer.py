"""``dropped_by_trainer``: rows the user's trainer silently removes before training.

Today's TRL (``DPOTrainer`` from 1.9, ``truncation_mode="keep_start"``) drops every row whose prompt
alone has ``>= max_length`` tokens. The rule lives in the trainer profile
(:meth:`pairaudit.trainer.profiles.TrainerSettings.drop_reason`), so other trainers' filters plug in there.
"""

from __future__ import annotations

from pairaudit.checks.base import CheckInfo, PairCheck
from pairaudit.checks.length import pair_ids
from pairaudit.datatypes import Finding, Pair
from pairaudit.trainer.tokenizer import EncodedPair


class DroppedByTrainer(PairCheck):
    info = CheckInfo(
        "dropped_by_trainer",
        "the trainer itself would drop this row before training (TRL >= 1.9 with keep_start: the prompt "
        "alone has >= max_length tokens)",
        "drop",
        summary="a row the trainer drops itself",
        why="the row is never trained on either way; dropping it here makes the cleaned data what the trainer "
            "trains on, so whole-dataset checks (e.g. which duplicate is kept) and counts stay true",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> dict[str, float] | None:
        tok = self.tok
        ids = pair_ids(pair, enc)
        if tok is None or ids is None:
            return None
        if tok.trainer.filter_text() is None:
            return None  # this trainer (or these settings) drops nothing
        n = len(ids[0])
        score = n / tok.max_length if tok.max_length else 0.0  # >= 1.0: dropped
        reason = tok.trainer.drop_reason(n)
        if reason is not None:
            out.append(self.finding(pair.row, "prompt", score, detail=reason))
        return {self.info.score_key: score}

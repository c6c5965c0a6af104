"""``prompt_mismatch``: implicit-prompt pairs whose histories differ before the last turn."""

from __future__ import annotations

from pairaudit.checks.base import CheckInfo, PairCheck
from pairaudit.datatypes import Finding, Pair
from pairaudit.trainer.tokenizer import EncodedPair


class PromptMismatch(PairCheck):
    info = CheckInfo(
        "prompt_mismatch",
        "implicit-prompt pair whose chosen and rejected dialogue histories differ before the last assistant "
        "turn, so the two responses answer different conversations",
        "drop",
        summary="dialogue histories differ",
        why="the comparison is not between two answers to one prompt; the trainer would see a wrong prompt",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> None:
        note = pair.notes.get("prompt_mismatch")
        if note:
            out.append(self.finding(pair.row, "prompt", 1.0, detail=note))

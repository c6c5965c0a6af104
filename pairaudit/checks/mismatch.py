"""``prompt_mismatch``: implicit-prompt pairs whose histories differ before the last turn.

The normaliser (:mod:`pairaudit.io.mismatch`) says which side adds turns: the finding's field is that side
(a reply that invents further dialogue turns; on the rejected side alone a useful negative, flagged by the
plan), or ``prompt`` when a turn of the history itself differs (the detail names the turn).
"""

from __future__ import annotations

from pairaudit.checks.base import CheckInfo, PairCheck
from pairaudit.datatypes import Finding, Pair
from pairaudit.trainer.tokenizer import EncodedPair


class PromptMismatch(PairCheck):
    info = CheckInfo(
        "prompt_mismatch",
        "implicit-prompt pair whose chosen and rejected dialogue histories differ before the last assistant "
        "turn: a turn of the history differs (field prompt), or one side's reply invents further turns "
        "(field chosen / rejected; the rejected side alone is flagged, a useful negative); a reply that writes a "
        "'Human:' / 'Assistant:' speaker label on a line of its own (same histories) is flagged",
        "drop",
        summary="dialogue histories differ",
        why="different histories: the two responses answer different conversations and the trainer would see a "
            "wrong prompt; a chosen reply that invents turns teaches the policy to write the user's lines",
        rejected_negative="a rejected reply that invents further dialogue turns is a useful negative",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> None:
        note = pair.notes.get("prompt_mismatch")
        if note:
            f = self.finding(pair.row, pair.notes.get("prompt_mismatch_side") or "prompt", 1.0, detail=note)
            f.mild = pair.notes.get("prompt_mismatch_mild", "")
            out.append(f)

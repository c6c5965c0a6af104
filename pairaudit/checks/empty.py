"""``empty_prompt`` and ``empty_response``: nothing to condition on / nothing to score."""

from __future__ import annotations

from pairaudit.checks.base import CheckInfo, PairCheck, is_blank
from pairaudit.datatypes import Finding, Pair
from pairaudit.trainer.tokenizer import EncodedPair


class EmptyPrompt(PairCheck):
    info = CheckInfo(
        "empty_prompt",
        "prompt empty, whitespace- or invisible-only (implicit prompt: no dialogue before the last assistant "
        "turn; pre-tokenized: prompt_input_ids present but empty)",
        "drop",
        summary="empty or blank prompt",
        why="a preference without a prompt teaches the policy nothing about when to prefer",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> None:
        if pair.pretokenized:
            ids = (pair.ids or {}).get("prompt_input_ids")
            empty = ids is not None and len(ids) == 0
        elif pair.conversational:
            empty = not pair.prompt_messages or all(is_blank(m["content"]) for m in pair.prompt_messages)
        else:
            empty = is_blank(pair.prompt)
        if empty:
            out.append(self.finding(pair.row, "prompt", 1.0, detail="prompt has no content"))


class EmptyResponse(PairCheck):
    info = CheckInfo(
        "empty_response",
        "chosen or rejected empty, whitespace- or invisible-only (pre-tokenized: empty id list)",
        "drop",
        summary="empty or blank chosen/rejected",
        why="an empty side gives a degenerate log-probability and a meaningless preference",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> None:
        for side in ("chosen", "rejected"):
            if pair.pretokenized:
                empty = len((pair.ids or {})[f"{side}_input_ids"]) == 0
            else:
                empty = is_blank(getattr(pair, side))
            if empty:
                out.append(self.finding(pair.row, side, 1.0, detail=f"{side} response is empty"))

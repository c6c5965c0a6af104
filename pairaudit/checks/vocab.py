"""``out_of_vocab``: ids outside ``[0, vocab_size)`` or too many unknown tokens."""

from __future__ import annotations

from pairaudit.checks.base import CheckInfo, PairCheck
from pairaudit.datatypes import Finding, Pair
from pairaudit.trainer.tokenizer import EncodedPair


class OutOfVocab(PairCheck):
    info = CheckInfo(
        "out_of_vocab",
        "token ids outside [0, vocab_size) (pre-tokenized data; vocab_size defaults to the tokenizer's "
        "length) or an unknown-token rate above max_unk_rate",
        "drop",
        summary="token ids past the vocabulary",
        thresholds={"max_unk_rate": 0.05, "vocab_size": None},
        why="an id past the embedding table crashes the run (CUDA device-side assert) or reads garbage",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> dict[str, float] | None:
        assert self.tok is not None
        vocab = self.params.get("vocab_size") or self.tok.vocab_size
        if pair.pretokenized:
            ids = pair.ids or {}
            for side in ("prompt", "chosen", "rejected"):
                seq = ids.get(f"{side}_input_ids") or []
                bad = [i for i in seq if i < 0 or i >= vocab]
                if bad:
                    out.append(self.finding(pair.row, side, len(bad) / len(seq),
                                       detail=f"{len(bad)} {side} ids outside [0, {vocab}), e.g. {bad[:3]}"))
            return None
        unk = self.tok.unk_id
        if unk is None or enc is None:
            return None
        worst = 0.0
        for side, seq in (("prompt", enc.prompt_ids), ("chosen", enc.chosen_ids), ("rejected", enc.rejected_ids)):
            if not seq:
                continue
            rate = seq.count(unk) / len(seq)
            worst = max(worst, rate)
            if rate > self.params["max_unk_rate"]:
                out.append(self.finding(pair.row, side, rate,
                                   detail=f"{rate:.1%} of {side} tokens are the unknown token"))
        return {self.info.score_key: worst}

"""``too_long`` and ``truncation_identical``: what the trainer's truncation will do to a pair."""

from __future__ import annotations

from pairaudit.checks.base import CheckInfo, PairCheck
from pairaudit.datatypes import Finding, Pair
from pairaudit.trainer.tokenizer import EncodedPair


def pair_ids(pair: Pair, enc: EncodedPair | None) -> tuple[list[int], list[int], list[int]] | None:
    """(prompt, chosen, rejected) ids as the trainer gets them, for text or pre-tokenized pairs."""
    if enc is not None:
        return enc.prompt_ids, enc.chosen_ids, enc.rejected_ids
    if pair.ids is not None:
        return (pair.ids.get("prompt_input_ids") or [], pair.ids["chosen_input_ids"], pair.ids["rejected_input_ids"])
    return None


class TooLong(PairCheck):
    info = CheckInfo(
        "too_long",
        "prompt + response longer than the trainer's max_length (and, for TRL < 0.29, a prompt over "
        "max_prompt_length or a response over max_completion_length): the trainer will truncate it",
        "flag",
        summary="truncated by max_length",
        why="truncation is legal but silently changes what is compared; look at the rate",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> dict[str, float] | None:
        tok = self.tok
        ids = pair_ids(pair, enc)
        if tok is None or ids is None:
            return None
        p, c, r = (len(x) for x in ids)
        limit, mode = tok.max_length, tok.truncation_mode
        worst = 0.0
        for side, n in (("chosen", c), ("rejected", r)):
            reasons = []
            if limit and p + n > limit:
                over = p + n - limit
                if mode == "keep_start":
                    cut = (f"keep_start cuts its last {over} tokens" if p < limit else
                           "keep_start keeps no completion token")
                else:
                    cut = f"keep_end cuts its first {over} tokens (prompt first)"
                reasons.append(f"prompt+{side} = {p}+{n} = {p + n} tokens > max_length {limit}: {cut}")
            if tok.max_completion_length and n > tok.max_completion_length:
                reasons.append(f"{side} {n} tokens > max_completion_length {tok.max_completion_length}")
            score = (p + n) / limit if limit else 0.0
            worst = max(worst, score)
            if reasons:
                out.append(self.finding(pair.row, side, score, detail="; ".join(reasons)))
        if tok.max_prompt_length and p > tok.max_prompt_length:
            out.append(self.finding(pair.row, "prompt", p / tok.max_prompt_length,
                               detail=f"prompt {p} tokens > max_prompt_length {tok.max_prompt_length}: "
                                      f"its first {p - tok.max_prompt_length} tokens are cut"))
        return {self.info.score_key: worst}


class TruncationIdentical(PairCheck):
    info = CheckInfo(
        "truncation_identical",
        "chosen and rejected differ, but the token sequences the trainer keeps after truncation to "
        "max_length are identical (or keep no completion token at all): a zero-gradient pair",
        "drop",
        summary="sides equal after truncation",
        why="after truncation the pair carries no preference signal, only noise in the loss average",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> None:
        tok = self.tok
        ids = pair_ids(pair, enc)
        if tok is None or ids is None:
            return
        prompt, chosen, rejected = ids
        if chosen == rejected:
            return  # identical_pair's business
        if not tok.trainer.keeps(len(prompt)):
            return  # the trainer drops the row anyway: dropped_by_trainer's business
        sc, sr = tok.kept_ids(prompt, chosen), tok.kept_ids(prompt, rejected)
        if sc == sr:
            what = "no completion token survives" if not sc[1] else f"both keep the same {len(sc[1])} completion tokens"
            out.append(self.finding(pair.row, "rejected", 1.0,
                               detail=f"after truncation ({tok.truncation_mode}, max_length {tok.max_length}) {what}"))

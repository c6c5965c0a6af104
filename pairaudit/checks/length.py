"""``too_long`` and ``truncation_identical``: what TRL's truncation will do to a pair."""

from __future__ import annotations

from pairaudit.checks.base import CheckInfo, PairCheck
from pairaudit.tokenize import EncodedPair, kept_sequence
from pairaudit.types import Finding, Pair


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
        "prompt + response longer than --max-length, prompt longer than --max-prompt-length or response longer "
        "than --max-completion-length: the trainer will truncate it (TRL DPOConfig semantics)",
        "flag",
        why="truncation is legal but silently changes what is compared; look at the rate",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> dict[str, float] | None:
        tok = self.tok
        ids = pair_ids(pair, enc)
        if tok is None or ids is None:
            return None
        p, c, r = (len(x) for x in ids)
        worst = 0.0
        for side, n in (("chosen", c), ("rejected", r)):
            reasons = []
            if tok.max_length and p + n > tok.max_length:
                reasons.append(f"prompt+{side} = {p}+{n} = {p + n} tokens > max_length {tok.max_length}")
            if tok.max_completion_length and n > tok.max_completion_length:
                reasons.append(f"{side} {n} tokens > max_completion_length {tok.max_completion_length}")
            score = (p + n) / tok.max_length if tok.max_length else 0.0
            worst = max(worst, score)
            if reasons:
                out.append(Finding(pair.row, "too_long", side, score, detail="; ".join(reasons)))
        if tok.max_prompt_length and p > tok.max_prompt_length:
            out.append(Finding(pair.row, "too_long", "prompt", p / tok.max_prompt_length,
                               detail=f"prompt {p} tokens > max_prompt_length {tok.max_prompt_length}"))
        return {"too_long_score": worst}


class TruncationIdentical(PairCheck):
    info = CheckInfo(
        "truncation_identical",
        "chosen and rejected differ, but the token sequences the trainer keeps after truncation to "
        "--max-length are identical (or keep no completion token at all): a zero-gradient pair",
        "drop",
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
        if tok.max_completion_length:
            chosen, rejected = chosen[: tok.max_completion_length], rejected[: tok.max_completion_length]
        kc = tok.kept(len(prompt), len(chosen))
        kr = tok.kept(len(prompt), len(rejected))
        sc = kept_sequence(prompt, chosen, kc, tok.truncation_mode)
        sr = kept_sequence(prompt, rejected, kr, tok.truncation_mode)
        if sc == sr:
            what = "no completion token survives" if not sc[1] else f"both keep the same {len(sc[1])} completion tokens"
            out.append(Finding(pair.row, "truncation_identical", "rejected", 1.0,
                               detail=f"after truncation ({tok.truncation_mode}, max_length {tok.max_length}) {what}"))

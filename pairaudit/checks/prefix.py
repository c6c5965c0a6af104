"""``prefix_pair`` and ``split_word``: implicit-prompt pairs whose prompt, as the trainer extracts it,
takes text from the responses (see :mod:`pairaudit.trainer.split`).

TRL's ``extract_prompt`` makes the longest common prefix of chosen and rejected the prompt. When the two
responses open alike the trainer's completions are shorter than the responses read: "You're welcome!"
vs "You're welcome! It was my pleasure!" trains on "!" vs "! It was my pleasure!". Token counts come
from the run's tokenizer: the trainer's encoding of the row against the encoding of the same row with
its text split as an explicit prompt.
"""

from __future__ import annotations

import dataclasses

from pairaudit.checks.base import CheckInfo, PairCheck
from pairaudit.datatypes import Finding, Pair
from pairaudit.trainer.profiles import common_prefix_length
from pairaudit.trainer.split import ImplicitSplit, implicit_split
from pairaudit.trainer.tokenizer import EncodedPair

EXPLICIT = {"implicit_hh": "standard", "implicit_conversational": "conversational"}


def _tokens(n: int) -> str:
    return f"{n} token{'' if n == 1 else 's'}"


def _clip(text: str, n: int = 40) -> str:
    text = text.replace("\n", "\\n")
    return "'" + (text if len(text) <= n else text[:n] + "…") + "'"


def severity(kind: str, shared: int, shorter: int) -> str:
    """How much the trainer's split changes what it compares: ``high`` when one response is a prefix of
    the other (the trainer compares "stop here" with "go on") or the shared opening is at least half of the
    shorter response; ``low`` for 1-3 shared tokens (they cancel in the sigmoid DPO log-ratio and shift
    per-completion lengths by a few tokens); ``medium`` between."""
    if kind in ("prefix", "identical") or (shorter and shared * 2 >= shorter):
        return "high"
    return "low" if shared <= 3 else "medium"


class _TrainerSplitCheck(PairCheck):
    """Shared: the trainer's split, and the token counts of both readings of the row."""

    def split(self, pair: Pair, enc: EncodedPair | None) -> ImplicitSplit | None:
        """The trainer's split when its prompt took response text, else None."""
        tok = self.tok
        if tok is None or enc is None or tok.profile.pairaudit_legacy:
            return None
        sp = implicit_split(pair)
        return sp if sp is not None and sp.absorbs else None

    def as_text(self, pair: Pair, enc: EncodedPair) -> EncodedPair:
        """The row encoded with its text's own split as an explicit prompt (what the responses read as).

        TRL >= 1.14.2 (joint tokenization, completion from the common prefix) on text rows: both readings tokenize the same prompt+completion
        strings, which the trainer's encoding already holds (its prompt ids + completion ids), so only the
        text's prompt is tokenized to find where it cuts them; otherwise the row is encoded again."""
        tok = self.tok
        if not (tok.profile.joint and tok.profile.common_prefix) or pair.conversational:
            return tok.encode_pairs([dataclasses.replace(pair, format=EXPLICIT[pair.format])])[0]
        full_c, full_r = enc.prompt_ids + enc.chosen_ids, enc.prompt_ids + enc.rejected_ids
        text_prompt = tok.text_ids(pair.prompt or "", True)  # a prompt shared by several pairs: tokenized once
        cut = min(common_prefix_length(text_prompt, full_c), common_prefix_length(text_prompt, full_r))
        return EncodedPair(full_c[:cut], full_c[cut:], full_r[cut:], (0, 0), (0, 0), enc.eos_added)

    def decode(self, ids: list[int]) -> str:
        return self.tok.tok.decode(ids, skip_special_tokens=False) if self.tok is not None else ""

    def side(self, name: str, ids: list[int], eos: bool) -> str:
        """``chosen 2 tokens ('!' + EOS)``: the count is the trainer's, EOS included, as the pair view counts."""
        text = _clip(self.decode(ids[:-1] if eos and ids else ids))
        return f"{name} {_tokens(len(ids))} ({text}{' + EOS' if eos and ids else ''})"


class PrefixPair(_TrainerSplitCheck):
    info = CheckInfo(
        "prefix_pair",
        "implicit-prompt pair whose responses open with the same text (or one is a prefix of the other): "
        "TRL's extract_prompt makes that shared text part of the prompt, so the trainer's completions are "
        "shorter than the responses read; fires when the prompt takes >= min_shared_tokens response tokens, "
        "and always when one response is a prefix of the other (1-2 shared tokens cancel in the log-ratio and "
        "shift lengths by a token or two: the score counts them, no finding)",
        "flag",
        summary="TRL's prompt takes reply text",
        thresholds={"min_shared_tokens": 3},
        why="TRL trains on these rows as split. In the DPO log-ratio the shared tokens would cancel anyway, so "
            "the pair still teaches the difference of the remainders (for a prefix pair: stop here vs go on); "
            "what changes is every per-completion quantity: lengths (length_outlier, IPO / sigmoid_norm "
            "normalisation), the chosen-only NLL term (rpo_alpha, loss_type sft) and the max_length budget. "
            "Review them; write an explicit prompt (--explicit-prompt) to train on the turn boundary instead",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> dict[str, float] | None:
        sp = self.split(pair, enc)
        if sp is None or enc is None:
            return {self.info.score_key: 0.0} if enc is not None and pair.format in EXPLICIT else None
        trainer, as_text = enc, self.as_text(pair, enc)
        shared = max(0, len(trainer.prompt_ids) - len(as_text.prompt_ids))
        if sp.kind in ("prefix", "identical") or shared >= self.params["min_shared_tokens"]:
            out.append(self.finding(pair.row, "prompt", float(shared),
                               detail=self.detail(sp, trainer, as_text, shared)))
        return {self.info.score_key: float(shared)}

    def detail(self, sp: ImplicitSplit, trainer: EncodedPair, as_text: EncodedPair, shared: int) -> str:
        what = {"prefix": "one response is a prefix of the other", "identical": "chosen and rejected are identical",
                "opening": "both responses open with the same text"}[sp.kind]
        if isinstance(sp.shared, list):
            took = f"{len(sp.shared)} message(s)"
        else:  # in the trainer's tokens: the cut can sit a token before the text's cut (merged tokens)
            text = self.decode(trainer.prompt_ids[len(as_text.prompt_ids):]) if shared else sp.shared
            took = _clip(text.strip() or text)
        c = self.side("chosen", trainer.chosen_ids, trainer.eos_added[0])
        r = self.side("rejected", trainer.rejected_ids, trainer.eos_added[1])
        level = severity(sp.kind, shared, min(len(as_text.chosen_ids), len(as_text.rejected_ids)))
        return (f"severity {level}: {what}: TRL's extract_prompt (the common prefix of chosen and rejected) puts {took} "
                f"({_tokens(shared)}) into the prompt, so the trainer compares {c} with {r}; the responses as "
                f"written are {len(as_text.chosen_ids)} vs {len(as_text.rejected_ids)} tokens")


class SplitWord(_TrainerSplitCheck):
    info = CheckInfo(
        "split_word",
        "implicit-prompt pair whose prompt, as TRL's extract_prompt takes it (the common prefix of chosen and "
        "rejected), ends inside a word (' welcom' | 'e.'), so tokens merge across the prompt/completion boundary",
        "flag",
        summary="TRL's prompt ends mid-word",
        why="TRL trains on the row (from 1.14.2 its completion starts where the tokenized prompt and "
            "prompt+completion diverge, with the warning 'tokens merge across the boundary'); the model is "
            "trained on a context that differs from the one it sees at inference. Write an explicit prompt "
            "(--explicit-prompt) to split on the turn boundary",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> dict[str, float] | None:
        sp = self.split(pair, enc) if pair.format == "implicit_hh" else None
        if sp is None or enc is None or self.tok is None:
            return {self.info.score_key: 0.0} if enc is not None and pair.format == "implicit_hh" else None
        if not sp.mid_word:
            return {self.info.score_key: 0.0}
        moved = enc.prompt_left_out  # the prompt's own tokens the trainer's completion cut leaves out
        if not self.tok.profile.joint:  # counted by the encoding for joint trainers only
            rendered = self.tok.render(pair)
            moved = len(self.tok.text_ids(rendered[0], bool(rendered.special))) - len(enc.prompt_ids)
        left = (f"; {_tokens(moved)} of the prompt's own tokenization merge into the completion (TRL warns "
                "'tokens merge across the boundary')" if moved > 0 else "")
        out.append(self.finding(pair.row, "prompt", 1.0,
                           detail=f"the trainer's prompt ends inside a word: {sp.marked(30)}{left}"))
        return {self.info.score_key: 1.0}

"""``boundary_merge``: rows for which TRL (>= 1.14.2) warns "The tokenized prompt is not a prefix of the
tokenized prompt+completion".

TRL >= 1.14.2 tokenizes the prompt and prompt + completion as whole texts and starts the completion where
their ids diverge. When tokens merge across the boundary (UltraFeedback's ``"...in the oven"`` +
``"To cook..."``, an implicit prompt cut inside a word) or a chat template renders the prompt alone
differently, the end of the prompt's own tokenization is left out of the training sequence and TRL warns
(once per run, naming one row). :attr:`EncodedPair.prompt_left_out` counts those tokens, computed exactly
as TRL's ``tokenize_fn`` does; this check names every such row, explicit and implicit, text and chat,
except an implicit prompt cut inside a word while ``split_word`` runs: that check names the same row with
its cause (and TRL's warning), and one finding per cause is what a person reads (issue 34: the reviewer
labelled the second finding on HH's 21 such rows not worth reading).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pairaudit.checks.base import CheckInfo, PairCheck
from pairaudit.datatypes import Finding, Pair
from pairaudit.trainer.split import implicit_split
from pairaudit.trainer.tokenizer import EncodedPair


def _clip(text: str, n: int = 30) -> str:
    text = text.replace("\n", "\\n")
    return repr(text if len(text) <= n else "…" + text[-n:])


def _head(decode: Callable[[list[int]], str], ids: Sequence[int], n: int = 3, most: int = 8) -> str:
    """The text of the first ``n`` tokens of ``ids``, taking up to ``most`` tokens so that a character split
    over several byte-level tokens (a Hangul or CJK character, an emoji) is not shown cut in half."""
    text = decode(list(ids[:n]))
    while text.endswith("\ufffd") and n < min(most, len(ids)):
        n += 1
        text = decode(list(ids[:n]))
    return text


class BoundaryMerge(PairCheck):
    info = CheckInfo(
        "boundary_merge",
        "the tokenized prompt is not a prefix of the tokenized prompt + completion (TRL >= 1.14.2 warns): "
        "tokens merge across the prompt/completion boundary, or the chat template renders the prompt alone "
        "differently; the trainer's completion starts where the two diverge, so the end of the prompt is "
        "trained on in a context that differs from inference",
        "flag",
        summary="TRL warns: prompt tokens merge",
        why="TRL trains on the row (it warns once per run and names one row); the tokens at the boundary "
            "differ from what the model sees at inference. End the prompt on a token boundary (a space or "
            "newline between prompt and response) or fix the chat template. An implicit prompt cut inside a "
            "word is split_word's finding when that check runs (the same row, named once)",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> dict[str, float] | None:
        tok = self.tok
        if tok is None or enc is None or pair.pretokenized or not tok.profile.common_prefix:
            return None
        n = enc.prompt_left_out
        if n > 0 and not self.split_words_names(pair):
            out.append(self.finding(pair.row, "prompt", float(n), detail=self.detail(pair, enc, n)))
        return {self.info.score_key: float(n)}

    def split_words_names(self, pair: Pair) -> bool:
        """True when ``split_word`` runs and names this row (an implicit prompt the trainer cuts mid-word)."""
        if "split_word" not in self.enabled or pair.format != "implicit_hh":
            return False
        sp = implicit_split(pair)
        return sp is not None and sp.absorbs and sp.mid_word

    def detail(self, pair: Pair, enc: EncodedPair, n: int) -> str:
        """Which prompt tokens TRL leaves out, and what the trainer's completions start with."""
        tok = self.tok
        rendered = tok.render(pair)
        full = tok.text_ids(rendered[0], bool(rendered.special))  # split_word tokenizes the same prompt
        left = tok.tok.decode(list(full[len(full) - n:]), skip_special_tokens=False)
        merged = rendered[1].startswith(rendered[0]) and rendered[2].startswith(rendered[0])
        why = ("tokens merge across the prompt/completion boundary" if merged
               else "the chat template renders the prompt alone differently from prompt + completion")
        def decode(ids: list[int]) -> str:
            return tok.tok.decode(ids, skip_special_tokens=False)

        head_c, head_r = _head(decode, enc.chosen_ids), _head(decode, enc.rejected_ids)
        s = "" if n == 1 else "s"
        are = "is" if n == 1 else "are"
        return (f"{why}: the prompt's last {n} token{s} ({_clip(left)}) {are} not in the training sequence; the "
                f"trainer's completions start {_clip(head_c)} / {_clip(head_r)} (TRL warns 'The tokenized prompt "
                "is not a prefix of the tokenized prompt+completion')")

"""``identical_pair`` and ``near_identical_pair``: chosen and rejected (almost) the same."""

from __future__ import annotations

import re

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from pairaudit.checks.base import CheckInfo, PairCheck
from pairaudit.datatypes import Finding, Pair
from pairaudit.trainer.tokenizer import EncodedPair

_WORD = re.compile(r"\w+")


def squash(text: str) -> str:
    return " ".join(text.split())


def same_pair(pair: Pair) -> bool:
    if pair.pretokenized:
        ids = pair.ids or {}
        return ids["chosen_input_ids"] == ids["rejected_input_ids"]
    if pair.conversational:
        norm = [[(m["role"], squash(m["content"])) for m in ms] for ms in (pair.chosen_messages, pair.rejected_messages)]
        return norm[0] == norm[1]
    return squash(pair.chosen or "") == squash(pair.rejected or "")


class IdenticalPair(PairCheck):
    info = CheckInfo(
        "identical_pair",
        "chosen equals rejected after whitespace normalisation (pre-tokenized: identical ids)",
        "drop",
        summary="chosen equals rejected",
        why="identical sides give a zero logit difference: no signal, and a label that is neither right nor wrong",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> None:
        if same_pair(pair):
            out.append(self.finding(pair.row, "rejected", 1.0, detail="chosen == rejected"))


class NearIdenticalPair(PairCheck):
    """Two rules, either one flags: the character ratio of the whole sides (long answers with a trivial
    difference), and the absolute number of token edits with the training tokenizer (a one-word change in
    a 9-word answer has a character ratio of ~0.86 but differs in one token: the pair whose DPO logit is
    driven by a single token). ``min_words`` (whitespace words of the shorter side) keeps one- and
    two-word answers such as "Yes" vs "No" or "Hello!" vs "Go away." out: they are ordinary labels, not
    near-identical sides (with a chat template both sides also share the template's tokens)."""

    info = CheckInfo(
        "near_identical_pair",
        "chosen and rejected differ only trivially: character similarity (rapidfuzz ratio) >= min_char_ratio, "
        "or at most max_token_edits token edits (Levenshtein on the training tokenizer's ids, any length) that "
        "change at most one word per 10 (at least one) when both sides have >= min_words words; with the embed extra also chosen-vs-rejected embedding cosine "
        ">= min_cosine",
        "flag",
        summary="sides differ only trivially",
        thresholds={"min_char_ratio": 0.97, "max_token_edits": 3, "min_words": 3, "min_cosine": 0.98},
        why="a trivial difference is a weak, noisy preference (and a common DPO divergence trigger); review them",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> dict[str, float] | None:
        if pair.pretokenized:
            ids = pair.ids or {}
            a, b = ids["chosen_input_ids"], ids["rejected_input_ids"]
            ratio = 1.0 - Levenshtein.normalized_distance(a, b)
            ta, tb = a, b
        else:
            a, b = squash(pair.chosen or ""), squash(pair.rejected or "")
            ratio = fuzz.ratio(a, b) / 100.0
            ta, tb = (enc.chosen_ids, enc.rejected_ids) if enc is not None else (None, None)
        if a == b:
            return {self.info.score_key: 1.0}
        detail = ""
        edits = None
        max_edits = int(self.params["max_token_edits"])
        if pair.pretokenized:
            wa, wb = a, b
        else:
            wa, wb = (_WORD.findall(x.casefold()) for x in (a, b))
        n_words = min(len(wa), len(wb))
        # the token edits must also be few words: one changed word per 10 (at least one), so that two short
        # answers that merely share words in another order ("Fine answer here." / "Another fine answer.") pass
        if ta is not None and n_words >= self.params["min_words"] and \
                Levenshtein.distance(wa, wb, score_cutoff=max(1, n_words // 10) + 1) <= max(1, n_words // 10):
            edits = Levenshtein.distance(ta, tb, score_cutoff=max_edits + 1)
        if ratio >= self.params["min_char_ratio"]:
            detail = f"character similarity {ratio:.3f} >= {self.params['min_char_ratio']}"
        if edits is not None and edits <= max_edits:
            rule = f"only {edits} token edit(s) between chosen and rejected ({len(ta)} / {len(tb)} tokens)"
            detail = f"{detail}; {rule}" if detail else rule
        if detail:
            out.append(self.finding(pair.row, "rejected", ratio, detail=detail))
        return {self.info.score_key: ratio}

"""``identical_pair`` and ``near_identical_pair``: chosen and rejected (almost) the same."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from itertools import zip_longest
from typing import Any

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from pairaudit.checks import long_text
from pairaudit.checks.base import CheckInfo, PairCheck
from pairaudit.checks.prompt_kind import pair_short_answer_cue
from pairaudit.datatypes import Finding, Pair
from pairaudit.trainer.long_text import LONG_CHARS
from pairaudit.trainer.memo import TextMemo
from pairaudit.trainer.tokenizer import DPOTokenizer, EncodedPair

_WORD = re.compile(r"\w+")


def squash(text: str) -> str:
    return " ".join(text.split()) if len(text) < LONG_CHARS else long_text.squash(text)


def same_text(a: str, b: str) -> bool:
    """``squash(a) == squash(b)`` (long texts word by word, without copies)."""
    if len(a) < LONG_CHARS and len(b) < LONG_CHARS:
        return squash(a) == squash(b)
    return long_text.same_words(a, b)


def same_pair(pair: Pair) -> bool:
    if pair.pretokenized:
        ids = pair.ids or {}
        return ids["chosen_input_ids"] == ids["rejected_input_ids"]
    if pair.conversational:
        ca, ra = pair.chosen_messages or [], pair.rejected_messages or []
        return len(ca) == len(ra) and all(x["role"] == y["role"] and same_text(x["content"], y["content"])
                                          for x, y in zip(ca, ra))
    return same_text(pair.chosen or "", pair.rejected or "")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def word_count(text: str) -> int:
    """The number of casefolded words (``\\w+`` runs) of a text, long ones counted without a list."""
    return len(_words(text)) if len(text) < LONG_CHARS else long_text.count(_WORD, text.casefold())


def _few_word_edits(pair: Pair, a: Any, b: Any, min_words: int, count: Any = word_count) -> bool:
    """Both sides have >= ``min_words`` words and at most one in 10 (at least one) differs (Levenshtein on
    the casefolded words; pre-tokenized: on the ids). Counted first (the word counts alone often rule it out;
    ``count``: ``word_count``, or a memo of it), then compared as words, long texts as interned word ids (equal
    words, equal ids): the same answer."""
    na, nb = (len(a), len(b)) if pair.pretokenized else (count(a), count(b))
    n_words = min(na, nb)
    limit = max(1, n_words // 10)
    if n_words < min_words or abs(na - nb) > limit:  # Levenshtein >= the difference in length
        return False
    if pair.pretokenized:
        wa, wb = a, b
    elif len(a) < LONG_CHARS and len(b) < LONG_CHARS:
        wa, wb = _words(a), _words(b)
    else:
        (wa, wb), _, _ = long_text.word_ids(_WORD, [a, b])
    return Levenshtein.distance(wa, wb, score_cutoff=limit + 1) <= limit


def _distinct(words: Iterator[str]) -> tuple[set[str], int]:
    """The distinct words and the number of words, in one pass."""
    seen: set[str] = set()
    n = 0
    for w in words:
        seen.add(w)
        n += 1
    return seen, n


def word_difference(a: str, b: str, cue: str) -> str | None:
    """What differs between two near-identical sides, in words; None when the differing words are the answer
    itself: a number, or any word when the prompt asks for a short answer (a label, a choice).

    Args:
        a: the chosen text (whitespace squashed).
        b: the rejected text (whitespace squashed).
        cue: the prompt's short-answer cue (:mod:`pairaudit.checks.prompt_kind`), or "".

    Returns:
        The detail naming the differing words, or None when they are the answer.

    Example:
        >>> word_difference("The answer is 41.", "The answer is 42.", "") is None
        True
        >>> word_difference("Paris is nice.", "Paris is lovely.", "")[:30]
        "the words differ in 'lovely', '"
    """
    fa, fb = a.casefold(), b.casefold()  # words streamed, not listed: a long text costs its distinct words

    def words(text: str) -> Iterator[str]:
        return (m.group() for m in _WORD.finditer(text))

    if all(x == y for x, y in zip_longest(words(fa), words(fb))):
        return "the words are the same: only punctuation, case or spacing differ (a trivial difference)"
    (sa, na), (sb, nb) = _distinct(words(fa)), _distinct(words(fb))
    diff = sorted(sa ^ sb) or sorted(sa)
    if cue or any(ch.isdigit() for w in diff for ch in w):
        return None
    n = max(na, nb)
    shown = ", ".join(repr(w) for w in diff[:5])
    return (f"the words differ in {shown} ({len(diff)} of {n}): read it, a changed word can "
            f"be the whole preference")


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
    near-identical sides (with a chat template both sides also share the template's tokens).

What differs is then read in words: the same words (punctuation, case, spacing) is a trivial difference;
differing words are no finding when they are the answer itself (a number, or any word when the prompt asks
for a short answer: :mod:`pairaudit.checks.prompt_kind`), "The answer is 41." vs "The answer is 42." being a
real preference; otherwise the detail names the differing words."""

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

    def __init__(self, params: Mapping[str, Any] | None = None, tok: DPOTokenizer | None = None) -> None:
        super().__init__(params, tok)
        # a response repeated across pairs is squashed and its words counted once
        self._squashed: TextMemo[str] = TextMemo()
        self._counts: TextMemo[int] = TextMemo()

    def _count(self, text: str) -> int:
        return self._counts.get(text, word_count, LONG_CHARS)

    def _squash(self, text: str) -> str:  # a long text is squashed again, not held
        return self._squashed.get(text, squash, LONG_CHARS)

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> dict[str, float] | None:
        if pair.pretokenized:
            ids = pair.ids or {}
            a, b = ids["chosen_input_ids"], ids["rejected_input_ids"]
            ratio = 1.0 - Levenshtein.normalized_distance(a, b)
            ta, tb = a, b
        else:
            a, b = self._squash(pair.chosen or ""), self._squash(pair.rejected or "")
            ratio = (fuzz.ratio(a, b) if len(a) < LONG_CHARS and len(b) < LONG_CHARS else long_text.ratio(a, b)) / 100.0
            ta, tb = (enc.chosen_ids, enc.rejected_ids) if enc is not None else (None, None)
        if a == b:
            return {self.info.score_key: 1.0}
        detail = ""
        edits = None
        max_edits = int(self.params["max_token_edits"])
        # the token edits must also be few words: one changed word per 10 (at least one), so that two short
        # answers that merely share words in another order ("Fine answer here." / "Another fine answer.") pass
        if ta is not None and _few_word_edits(pair, a, b, self.params["min_words"], self._count):
            edits = Levenshtein.distance(ta, tb, score_cutoff=max_edits + 1)
        if ratio >= self.params["min_char_ratio"]:
            detail = f"character similarity {ratio:.3f} >= {self.params['min_char_ratio']}"
        if edits is not None and edits <= max_edits:
            rule = f"only {edits} token edit(s) between chosen and rejected ({len(ta)} / {len(tb)} tokens)"
            detail = f"{detail}; {rule}" if detail else rule
        if detail and not pair.pretokenized:
            what = word_difference(a, b, pair_short_answer_cue(pair))
            if what is None:
                return {self.info.score_key: ratio}  # the differing word is the answer: a real preference
            detail = f"{detail}; {what}"
        if detail:
            out.append(self.finding(pair.row, "rejected", ratio, detail=detail))
        return {self.info.score_key: ratio}

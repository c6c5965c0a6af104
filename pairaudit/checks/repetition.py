"""``degenerate_repetition``: a response that loops on one short unit ("I'm sorry. I'm sorry. ...",
"ha ha ha ...") or repeats whole lines / long passages.

Metrics per response (chosen and rejected; the prompt is not the training target), following the
repetition rules of Gopher (Rae et al. 2021, arXiv:2112.11446, table A1) as implemented by datatrove's
``GopherRepetitionFilter`` (src/datatrove/pipeline/filters/gopher_repetition_filter.py: top n-gram
character fraction, duplicated n-gram character fraction with non-overlapping counting, duplicated line
fraction) and in the spirit of Data-Juicer's ``word_repetition_filter`` / ``character_repetition_filter``
(n-gram repetition ratios), plus a compression ratio (zlib, as degenerate-text filters use):

* ``top_ngram``: characters covered by the most frequent word 2-, 3-, 4-gram (its length times its
  count) over the characters of the response; Gopher's limits 0.20 / 0.18 / 0.16;
* ``dup_ngram``: characters inside word 5- to 10-grams that already occurred (scanning left to right,
  skipping a repeated n-gram whole) over the characters; Gopher's limits 0.15 down to 0.10;
* ``dup_lines``: repeated non-empty lines over lines (Gopher 0.30), for responses of >= 4 lines; a line's
  leading list marker ("3. ", "- ") is not part of it, so a numbered list that repeats its items loops;
* ``compression``: UTF-8 bytes / zlib-compressed bytes. A loop compresses far better than prose;
* ``char_run``: the longest stretch without whitespace that repeats one unit of 1-8 characters at least
  4 times ("aaaaaaaa", "hahahaha", "!!!!!!!!", "abcabcabcabc"), in characters: the character-level
  breakdown of a broken generation, which word n-grams cannot see (it is one "word"). Units made only of
  rule / table characters (``-=_*#~|+`` and backslash: markdown rules, table separators, escaped blanks) are not
  counted: real answers use them at any length. Scored at every response length (``min_words`` does not
  apply); ``scripts/eval_repetition.py`` prints its recall on planted runs and its false-positive rate on
  the real rows.

Web-document limits are far too strict for chat answers: a 60-word answer that says "you can" four
times, a numbered list, a recipe repeating "1 cup" all pass Gopher's 0.20 top-2-gram limit on HH. The
limits here were therefore raised until the real HH helpful-base test split (4,708 responses) and the
UltraFeedback sample (2,000) give only responses that really loop (see docs/near_duplicates.md for the
counts), while every planted response that repeats one short unit 25-60 times is far above them. Each
metric is divided by its limit; the response's score is the largest of these ratios and the row's
``degenerate_repetition_score`` the larger of its two responses; a score >= 1 is a finding (field =
the side, detail = the rule that fired). Responses under ``min_words`` words are not scored (too
short for a frequency to mean anything).

Default action ``drop`` for a looping *chosen* response: it teaches the policy to loop. A loop on the
*rejected* side alone is flagged (``rejected_negative``: the plan sets the action from the finding's side):
it is what the policy should learn not to do, and on real data such rows are mostly right pairs (UltraFeedback
row 558: a SCAN task whose rejected answer repeats the task's own command words). Its extreme sequence
log-probability can still saturate the pair's DPO logit; ``--drop degenerate_repetition`` drops both sides.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Mapping
from typing import Any

from pairaudit.checks import long_text
from pairaudit.checks.base import CheckInfo, PairCheck
from pairaudit.checks.long_text import line_key
from pairaudit.datatypes import Finding, Pair
from pairaudit.trainer.long_text import LONG_CHARS
from pairaudit.trainer.memo import TextMemo
from pairaudit.trainer.tokenizer import DPOTokenizer, EncodedPair

_WORD = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)

DEFAULTS = {
    "min_words": 16,
    "top_2gram": 0.50, "top_3gram": 0.50, "top_4gram": 0.50,
    "dup_5gram": 0.60, "dup_10gram": 0.50,
    "dup_lines": 0.60, "min_compression": 5.5, "compression_min_bytes": 120,
    "char_run": 20,
}
CHAR_MAX_UNIT, CHAR_MIN_REPEATS = 8, 4
_CHAR_CYCLE = re.compile(rf"(\S{{1,{CHAR_MAX_UNIT}}}?)\1{{{CHAR_MIN_REPEATS - 1},}}")
_RULE_CHARS = frozenset("-=_*#~|\\+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def _grams(ws: list[str], n: int) -> list[tuple[str, ...]]:
    return list(zip(*(ws[i:] for i in range(n))))


def top_ngram_fraction(ws: list[str], n: int, n_chars: int) -> float:
    """Characters covered by the most frequent n-gram (length x count) over ``n_chars``."""
    if len(ws) < n or n_chars == 0:
        return 0.0
    gram, count = Counter(_grams(ws, n)).most_common(1)[0]  # first seen wins a tie, as with joined strings
    return min(1.0, (sum(map(len, gram)) + n - 1) * count / n_chars) if count > 1 else 0.0


def dup_ngram_fraction(ws: list[str], n: int, n_chars: int) -> float:
    """Characters in n-grams seen before (a repeat is skipped whole, as datatrove counts) over ``n_chars``."""
    if len(ws) < n or n_chars == 0:
        return 0.0
    grams = _grams(ws, n)
    if len(set(grams)) == len(grams):  # no n-gram occurs twice (most answers): nothing to scan
        return 0.0
    seen: set[tuple[str, ...]] = set()
    dup, i = 0, 0
    while i <= len(ws) - n:
        gram = grams[i]
        if gram in seen:
            dup += sum(map(len, gram)) + n - 1  # the n-gram's length with single spaces
            i += n
        else:
            seen.add(gram)
            i += 1
    return min(1.0, dup / n_chars)


def dup_line_fraction(text: str) -> float:
    lines = [line_key(ln) for ln in text.splitlines() if ln.strip()]
    if len(lines) < 4:
        return 0.0
    return (len(lines) - len(set(lines))) / len(lines)


def compression_ratio(text: str) -> float:
    raw = text.encode("utf-8", "surrogatepass")
    return len(raw) / max(1, len(zlib.compress(raw, 9)))


def char_run(text: str) -> tuple[int, str]:
    """(length in characters, unit) of the longest whitespace-free run of one unit of 1-8 characters
    repeated >= 4 times, leaving out units made only of rule / table characters; (0, "") when none."""
    best, unit = 0, ""
    for m in _CHAR_CYCLE.finditer(text):
        n = m.end() - m.start()
        if n > best and not _RULE_CHARS.issuperset(m.group(1)):
            best, unit = n, m.group(1)
    return best, unit


def repetition_metrics(text: str) -> dict[str, float]:
    if len(text) >= LONG_CHARS:  # the same numbers without an object per word (checks.long_text)
        return long_text.repetition_metrics(text, _WORD)
    ws = words(text)
    n_chars = sum(map(len, ws)) + max(0, len(ws) - 1)  # the words joined by single spaces
    return {
        "n_words": float(len(ws)),
        "top_2gram": top_ngram_fraction(ws, 2, n_chars),
        "top_3gram": top_ngram_fraction(ws, 3, n_chars),
        "top_4gram": top_ngram_fraction(ws, 4, n_chars),
        "dup_5gram": dup_ngram_fraction(ws, 5, n_chars),
        "dup_10gram": dup_ngram_fraction(ws, 10, n_chars),
        "dup_lines": dup_line_fraction(text),
        "compression": compression_ratio(text),
        "n_bytes": float(len(text.encode("utf-8", "surrogatepass"))),
    }


def repetition_score(text: str, params: dict) -> tuple[float, str]:
    """(score, the rule with the largest metric/limit ratio); score >= 1 means degenerate."""
    run, unit = char_run(text)
    ratios = {"char_run": run / params["char_run"]}
    m = repetition_metrics(text)
    if m["n_words"] >= params["min_words"]:
        ratios.update({k: m[k] / params[k] for k in ("top_2gram", "top_3gram", "top_4gram", "dup_5gram",
                                                     "dup_10gram", "dup_lines")})
        if m["n_bytes"] >= params["compression_min_bytes"]:
            ratios["compression"] = m["compression"] / params["min_compression"]
    rule = max(ratios, key=lambda k: ratios[k])
    if ratios[rule] == 0.0:
        return 0.0, ""
    if rule == "char_run":
        return ratios[rule], (f"char_run {run} characters (limit {params['char_run']}): {unit!r} repeated "
                              f"{run // len(unit)} times with no space")
    limit = params["min_compression"] if rule == "compression" else params[rule]
    return ratios[rule], f"{rule} {m[rule]:.2f} (limit {limit})"


def top_gram_from_prompt(text: str, rule: str, prompt: str) -> bool:
    """Whether the n-gram behind a ``top_Ngram`` rule is the prompt's own wording (a list of courses "in Bitcoin
    and Cryptocurrency Technologies" names the topic it was asked about in each item): the task's language,
    not a loop."""
    if not rule.startswith("top_") or not prompt:
        return False
    n = int(rule[4])
    grams = Counter(_grams(words(text), n))
    if not grams:
        return False
    top = grams.most_common(1)[0][0]
    return top in set(_grams(words(prompt), n))


def without_prompt_grams(text: str, params: dict) -> tuple[float, str]:
    """The score with the top-n-gram rules left out (used when their n-gram is the prompt's own wording)."""
    return repetition_score(text, {**params, **{f"top_{n}gram": float("inf") for n in (2, 3, 4)}})


class DegenerateRepetition(PairCheck):
    info = CheckInfo(
        "degenerate_repetition",
        "a response repeats itself: the most frequent word 2/3/4-gram covers >= top_Ngram of its characters, "
        "repeated 5-/10-grams cover >= dup_Ngram, repeated lines >= dup_lines, or it compresses >= "
        "min_compression times (zlib; responses of >= compression_min_bytes bytes); responses under "
        "min_words words are not scored by these (Gopher repetition rules, limits raised for chat answers); "
        "at any length: a run of >= char_run characters with no space that repeats one unit of 1-8 characters "
        "('aaaa…', 'hahaha…', '!!!!…'; markdown rule characters not counted)",
        "drop",
        summary="a response loops (words/chars)",
        thresholds=dict(DEFAULTS),
        why="a looping chosen response teaches the policy to loop: dropped; a loop on the rejected side alone is "
            "flagged (a negative DPO learns from: do not loop), though its extreme log-probability can saturate "
            "the pair's logit (--drop degenerate_repetition drops those too)",
        rejected_negative="a looping rejected reply is a useful negative",
    )

    def __init__(self, params: Mapping[str, Any] | None = None, tok: DPOTokenizer | None = None) -> None:
        super().__init__(params, tok)
        self.memo: TextMemo[tuple[float, str]] = TextMemo()  # a response repeated across pairs is scored once

    def _score(self, text: str) -> tuple[float, str]:
        return repetition_score(text, self.params)

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> dict[str, float] | None:
        if pair.pretokenized:
            return None
        best = 0.0
        for field, text in (("chosen", pair.chosen), ("rejected", pair.rejected)):
            if not text:
                continue
            score, rule = self.memo.get(text, self._score)
            if score >= 1.0 and top_gram_from_prompt(text, rule, pair.prompt or ""):
                score, rule = without_prompt_grams(text, self.params)
            best = max(best, score)
            if score >= 1.0:
                out.append(self.finding(pair.row, field, round(score, 6),
                                   detail=f"{field} repeats itself: {rule}"))
        return {self.info.score_key: round(best, 6)}

"""degenerate_repetition and the token rule of near_identical_pair, on real HH / UltraFeedback rows with
planted faults (repeated units, one-word changes) and the real bundled SmolLM2 tokenizer."""

from __future__ import annotations

import random
import re

import pytest
from support.planting import UNITS, hh_rows, one_word_change, repeat_unit, uf_rows

from pairaudit.checks.identical import NearIdenticalPair
from pairaudit.checks.repetition import (
    DEFAULTS,
    DegenerateRepetition,
    char_run,
    compression_ratio,
    dup_ngram_fraction,
    repetition_score,
    top_ngram_fraction,
    words,
)
from pairaudit.datatypes import Finding, Pair
from pairaudit.models.tokenizer import load_tokenizer
from pairaudit.trainer.tokenizer import DPOTokenizer


@pytest.fixture(scope="module")
def tok() -> DPOTokenizer:
    t, spec = load_tokenizer(None)
    return DPOTokenizer(t, spec)


def run(check: object, pairs: list[Pair], tok: DPOTokenizer | None = None) -> tuple[list[Finding], list[dict]]:
    enc = tok.encode_pairs(pairs) if tok is not None else [None] * len(pairs)
    out: list[Finding] = []
    scores = [check.check(p, e, out) for p, e in zip(pairs, enc)]  # type: ignore[attr-defined]
    return out, scores


def test_gopher_metrics_by_hand() -> None:
    ws = words("Ha ha ha, HA!")
    assert ws == ["ha", "ha", "ha", "ha"]
    # "ha ha" occurs 3 times, 5 chars each, over the 11 characters of "ha ha ha ha"
    assert top_ngram_fraction(ws, 2, 11) == pytest.approx(min(1.0, 15 / 11))
    ws = "a b c d e a b c d e x".split()
    # the second "a b c d e" repeats the first: 9 characters of 21
    assert dup_ngram_fraction(ws, 5, 21) == pytest.approx(9 / 21)
    assert compression_ratio("I'm sorry. " * 40) > 10 > compression_ratio("The quick brown fox jumps over the lazy dog.")


def test_every_planted_repetition_is_found_on_real_rows() -> None:
    rng = random.Random(3)
    rows = hh_rows(200) + uf_rows(100)
    pairs, planted = [], {}
    for i, (p, c, r) in enumerate(rows):
        pairs.append(Pair(row=i, format="standard", prompt=p, chosen=c, rejected=r))
    for k, unit in enumerate(UNITS * 2):  # every unit, on either side
        p, c, r = rows[rng.randrange(len(rows))]
        side = ("chosen", "rejected")[k % 2]
        loop = repeat_unit(rng, unit)
        pairs.append(Pair(row=len(pairs), format="standard", prompt=p, chosen=loop if side == "chosen" else c,
                          rejected=loop if side == "rejected" else r))
        planted[len(pairs) - 1] = side
    check = DegenerateRepetition(dict(DEFAULTS))
    out, scores = run(check, pairs)
    got = {(f.row, f.field) for f in out}
    assert {(r, s) for r, s in planted.items()} <= got
    # untouched rows: none of these real responses loops
    assert not [f for f in out if f.row < len(rows)]
    assert all(scores[r]["degenerate_repetition_score"] >= 2.0 for r in planted)
    f = next(f for f in out if f.row in planted)
    assert f.check == "degenerate_repetition" and "repeats itself" in f.detail and "limit" in f.detail


@pytest.mark.parametrize("text", [
    "Row, row, row your boat\nGently down the stream\nMerrily, merrily, merrily, merrily\nLife is but a dream",
    "You can do this, you can do that, and you can also ask a friend what you can do next time.",
    "1. Preheat the oven.\n2. Mix 1 cup of flour with 1 cup of sugar.\n3. Add 1 cup of milk.\n4. Bake.",
    "ok",  # too short to score
])
def test_ordinary_repetitive_answers_pass(text: str) -> None:
    assert repetition_score(text, DEFAULTS)[0] < 1.0


def test_one_word_changes_in_short_responses_are_near_identical(tok: DPOTokenizer) -> None:
    rng = random.Random(5)
    rows = hh_rows()
    short = [(p, c) for p, c, _ in rows if 3 <= len(c.split()) <= 25
             and any(re.fullmatch(r"[A-Za-z]{3,}[.,!?]?", w) for w in c.split(" "))]
    chosen = rng.sample(short, 40)
    pairs = [Pair(row=i, format="standard", prompt=p, chosen=c, rejected=one_word_change(c, rng))
             for i, (p, c) in enumerate(chosen)]
    check = NearIdenticalPair({"min_char_ratio": 0.97, "max_token_edits": 3, "min_words": 3})
    out, _ = run(check, pairs, tok)
    assert {f.row for f in out} == set(range(len(pairs)))
    assert all("token edit" in f.detail for f in out)
    # the ratio rule alone would have missed most of them (short answers: one word is a large share)
    assert sum(f.score < 0.97 for f in out) >= 30


def test_token_rule_on_untouched_rows_only_flags_pairs_that_differ_in_few_tokens(tok: DPOTokenizer) -> None:
    """On real rows the token rule fires only where chosen and rejected really differ in <= 3 tokens."""
    from rapidfuzz.distance import Levenshtein

    rows = hh_rows(600)
    pairs = [Pair(row=i, format="standard", prompt=p, chosen=c, rejected=r) for i, (p, c, r) in enumerate(rows)]
    check = NearIdenticalPair({"min_char_ratio": 0.97, "max_token_edits": 3, "min_words": 3})
    out, _ = run(check, pairs, tok)
    enc = tok.encode_pairs(pairs)
    for f in out:
        if "token edit" in f.detail:
            e = enc[f.row]
            assert Levenshtein.distance(e.chosen_ids, e.rejected_ids) <= 3
    assert len(out) <= 10  # a handful of real near-identical pairs ("You're welcome." / "You're welcome!")


def test_one_word_answers_are_not_near_identical(tok: DPOTokenizer) -> None:
    pairs = [Pair(row=0, format="standard", prompt="Is it raining?", chosen="Yes", rejected="No"),
             Pair(row=1, format="standard", prompt="Capital?", chosen=" Canada.", rejected=" India."),
             Pair(row=2, format="standard", prompt="Capital?", chosen=" It is Canada.", rejected=" It is India.")]
    check = NearIdenticalPair({"min_char_ratio": 0.97, "max_token_edits": 3, "min_words": 3})
    out, _ = run(check, pairs, tok)
    assert [f.row for f in out] == [2]  # 3 words each: a one-token change in a sentence


@pytest.mark.parametrize("unit", ["a", "!", "ha", "abc", "1234", "的", "xo!?"])
@pytest.mark.parametrize("length", [20, 64, 300])
def test_character_level_degeneration_in_real_rows(unit: str, length: int) -> None:
    """A real response that breaks down into one unit repeated with no space is found at any response
    length (the word rules need >= min_words words and see one 'word' here); shorter runs are not."""
    rng = random.Random(length)
    p, c, _ = hh_rows()[rng.randrange(200)]
    cut = c[:rng.randrange(len(c) + 1)].rstrip()
    broken = cut + unit * -(-length // len(unit))
    score, rule = repetition_score(broken, DEFAULTS)
    assert score >= 1.0 and rule.startswith("char_run") and repr(unit) in rule, (broken[-80:], rule)
    short = cut + " " + unit * max(1, 12 // len(unit))
    assert repetition_score(short, DEFAULTS)[0] < 1.0 or not repetition_score(short, DEFAULTS)[1].startswith("char")


@pytest.mark.parametrize("text", [
    "| Name | Score |\n|------|-------|\n| A | 1 |",  # a markdown table separator
    "Title\n" + "=" * 80 + "\n\nBody text here.",  # a markdown rule
    "Fill in: \\_\\_\\_\\_\\_\\_\\_\\_\\_\\_\\_\\_\\_\\_ (your name)",  # escaped blanks
    "EMI = 1,000,000 * 3.155555555e+28",
])
def test_formatting_runs_are_not_character_degeneration(text: str) -> None:
    assert char_run(text)[0] < DEFAULTS["char_run"]

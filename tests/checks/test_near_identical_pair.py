"""near_identical_pair: the character-ratio rule, the token-edit rule and their thresholds on inline pairs;
one-word changes planted in real HH rows (the real bundled SmolLM2 tokenizer)."""

from __future__ import annotations

import random
import re

import pytest
from support.checks import check_pairs, found, run
from support.planting import hh_rows, one_word_change

from pairaudit.checks.identical import NearIdenticalPair
from pairaudit.datatypes import Pair
from pairaudit.trainer.tokenizer import DPOTokenizer

PARIS = "The capital of France is Paris, a city of about two million people on the Seine river."


@pytest.mark.parametrize(("chosen", "rejected", "rule"), [
    (PARIS, PARIS[:-1] + "!", "character similarity"),        # long answers, one character apart
    ("It is raining in London today.", "It is snowing in London today.", "token edit"),  # one word of six
])
def test_trivially_different_sides_are_flagged(chosen: str, rejected: str, rule: str, tok: DPOTokenizer) -> None:
    [(field, detail)] = found(NearIdenticalPair, {"prompt": "Tell me.", "chosen": chosen, "rejected": rejected}, tok)
    assert field == "rejected" and rule in detail


@pytest.mark.parametrize(("chosen", "rejected"), [
    ("Yes", "No"),                                             # one-word answers are ordinary labels
    ("Fine answer here.", "Another fine answer."),            # shared words, other order
    ("Paris is the capital of France.", "I think it might be Lyon, but check a map."),
    (PARIS, "  " + PARIS.replace(" ", "  ")),                 # equal after whitespace: identical_pair's
])
def test_different_or_equal_sides_are_not_flagged(chosen: str, rejected: str, tok: DPOTokenizer) -> None:
    assert found(NearIdenticalPair, {"prompt": "Tell me.", "chosen": chosen, "rejected": rejected}, tok) == []


@pytest.mark.parametrize(("params", "hit"), [
    ({}, True),
    ({"min_char_ratio": 0.999}, True),                        # the token rule still sees one edit
    ({"min_char_ratio": 0.999, "max_token_edits": 0}, False),
    ({"max_token_edits": 0}, True),                           # the ratio rule alone
])
def test_both_thresholds(params: dict, hit: bool, tok: DPOTokenizer) -> None:
    rec = {"prompt": "Where?", "chosen": PARIS, "rejected": PARIS[:-1] + "!"}
    assert bool(found(NearIdenticalPair, rec, tok, **params)) is hit


def test_score_is_the_character_ratio_and_pretokenized_ids_compare_as_ids(tok: DPOTokenizer) -> None:
    recs = [{"prompt": "Q", "chosen": "abc def", "rejected": "abc def"},
            {"prompt": "Q", "chosen": "It is raining.", "rejected": "Totally different words here."},
            {"chosen_input_ids": list(range(10, 50)), "rejected_input_ids": [*range(10, 49), 7]}]
    out, metrics = run(NearIdenticalPair, recs, tok)
    assert metrics[0]["near_identical_pair_score"] == 1.0 and metrics[1]["near_identical_pair_score"] < 0.6
    assert metrics[2]["near_identical_pair_score"] == pytest.approx(39 / 40)
    assert [(f.row, f.field) for f in out] == [(2, "rejected")]


def test_one_word_changes_in_short_responses_are_near_identical(keyword_tok: DPOTokenizer) -> None:
    rng = random.Random(5)
    rows = hh_rows()
    short = [(p, c) for p, c, _ in rows if 3 <= len(c.split()) <= 25
             and any(re.fullmatch(r"[A-Za-z]{3,}[.,!?]?", w) for w in c.split(" "))]
    chosen = rng.sample(short, 40)
    pairs = [Pair(row=i, format="standard", prompt=p, chosen=c, rejected=one_word_change(c, rng))
             for i, (p, c) in enumerate(chosen)]
    check = NearIdenticalPair({"min_char_ratio": 0.97, "max_token_edits": 3, "min_words": 3}, keyword_tok)
    out, _ = check_pairs(check, pairs)
    assert {f.row for f in out} == set(range(len(pairs)))
    assert all("token edit" in f.detail for f in out)
    # the ratio rule alone would have missed most of them (short answers: one word is a large share)
    assert sum(f.score < 0.97 for f in out) >= 30


def test_token_rule_on_untouched_rows_only_flags_pairs_that_differ_in_few_tokens(keyword_tok: DPOTokenizer) -> None:
    """On real rows the token rule fires only where chosen and rejected really differ in <= 3 tokens."""
    from rapidfuzz.distance import Levenshtein

    rows = hh_rows(600)
    pairs = [Pair(row=i, format="standard", prompt=p, chosen=c, rejected=r) for i, (p, c, r) in enumerate(rows)]
    check = NearIdenticalPair({"min_char_ratio": 0.97, "max_token_edits": 3, "min_words": 3}, keyword_tok)
    out, _ = check_pairs(check, pairs)
    enc = keyword_tok.encode_pairs(pairs)
    for f in out:
        if "token edit" in f.detail:
            e = enc[f.row]
            assert Levenshtein.distance(e.chosen_ids, e.rejected_ids) <= 3
    assert len(out) <= 10  # a handful of real near-identical pairs ("You're welcome." / "You're welcome!")


def test_one_word_answers_are_not_near_identical(keyword_tok: DPOTokenizer) -> None:
    pairs = [Pair(row=0, format="standard", prompt="Is it raining?", chosen="Yes", rejected="No"),
             Pair(row=1, format="standard", prompt="Capital?", chosen=" Canada.", rejected=" India."),
             Pair(row=2, format="standard", prompt="Capital?", chosen=" It is Canada.", rejected=" It is India.")]
    check = NearIdenticalPair({"min_char_ratio": 0.97, "max_token_edits": 3, "min_words": 3}, keyword_tok)
    out, _ = check_pairs(check, pairs)
    assert [f.row for f in out] == [2]  # 3 words each: a one-token change in a sentence

"""degenerate_repetition: inline loops and ordinary answers, the thresholds, and real HH / UltraFeedback
rows with planted repeated units."""

from __future__ import annotations

import random

import pytest
from support.checks import check_pairs, found, run, to_pair
from support.planting import UNITS, hh_rows, repeat_unit, uf_rows

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
from pairaudit.datatypes import Pair
from pairaudit.trainer.memo import TextMemo

ANSWER = "You can roast the vegetables at 200 degrees for about forty minutes, turning them once halfway through."


@pytest.mark.parametrize(("side", "text", "rule"), [
    ("chosen", "I'm sorry. " * 30, "compression"),
    ("rejected", "Sure! " + "ha " * 40, "top_2gram"),
    ("rejected", "The answer is " + "a" * 40, "char_run"),
    ("chosen", "Great question" + "!" * 25, "char_run"),
    ("chosen", "\n".join(["Step one: mix the flour and water together."] * 8), "dup_10gram"),
])
def test_a_looping_response_is_found_on_its_side(side: str, text: str, rule: str) -> None:
    rec = {"prompt": "How do I roast vegetables?", "chosen": ANSWER, "rejected": ANSWER.replace("forty", "thirty")}
    rec[side] = text
    [(field, detail)] = found(DegenerateRepetition, rec)
    assert field == side and detail.startswith(f"{side} repeats itself: {rule}") and "limit" in detail


@pytest.mark.parametrize("text", [
    ANSWER,
    "Yes.",
    "1. Preheat the oven.\n2. Mix 1 cup of flour with 1 cup of sugar.\n3. Add 1 cup of milk.\n4. Bake.",
    "| a | b |\n|---|---|\n| 1 | 2 |",
])
def test_ordinary_answers_are_not_found(text: str) -> None:
    out, [metrics] = run(DegenerateRepetition, [{"prompt": "Q?", "chosen": text, "rejected": ANSWER}])
    assert out == [] and 0.0 <= metrics["degenerate_repetition_score"] < 1.0


@pytest.mark.parametrize(("params", "hit"), [({}, True), ({"char_run": 60}, False), ({"char_run": 30}, True)])
def test_the_char_run_threshold(params: dict, hit: bool) -> None:
    rec = {"prompt": "Laugh.", "chosen": "ha" * 20, "rejected": "No."}  # a 40-character run
    assert bool(found(DegenerateRepetition, rec, **params)) is hit


def test_the_score_is_the_worse_response_and_pretokenized_rows_are_not_scored() -> None:
    _, metrics = run(DegenerateRepetition, [{"prompt": "Q?", "chosen": "ok " * 40, "rejected": ANSWER},
                                            {"chosen_input_ids": [5, 5, 5, 5], "rejected_input_ids": [6]}])
    assert metrics[0]["degenerate_repetition_score"] >= 2.0 and metrics[1] is None


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
    out, scores = check_pairs(check, pairs)
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


# PandaLM test set (data/precision/multipair.jsonl row 34): each course names the topic the prompt gave
COURSES = {"prompt": "Please list the courses that someone interested in the first course might like.\n\n"
                     "Bitcoin and Cryptocurrency Technologies",
           "chosen": "The courses that someone interested in Bitcoin and Cryptocurrency Technologies might like "
                     "include: \n1. Introduction to Bitcoin and Cryptocurrency Technologies \n2. Advanced Bitcoin "
                     "and Cryptocurrency Technologies",
           "rejected": "Cryptography I, Blockchain Basics."}


def test_the_prompts_own_wording_repeated_in_a_list_is_no_loop() -> None:
    assert found(DegenerateRepetition, COURSES) == []  # the label said wrong: a two-item list, not a loop
    other = {**COURSES, "prompt": "Please list some courses I might like."}
    [(field, detail)] = found(DegenerateRepetition, other)  # the same text, the n-gram not from the prompt
    assert field == "chosen" and detail.startswith("chosen repeats itself: top_4gram")
    looping = {**COURSES, "chosen": "Bitcoin and Cryptocurrency Technologies " * 12}
    [(field, detail)] = found(DegenerateRepetition, looping)  # a real loop on the prompt's words: still found
    assert field == "chosen" and "top_" not in detail


def test_a_response_repeated_across_pairs_is_scored_once_with_the_same_findings() -> None:
    """Real HH rows with planted loops, each response paired twice (as in data with several pairs per
    prompt): the memo answers the repeats, and findings and scores equal a fresh check per row."""
    rng = random.Random(5)
    rows = [(p, c, r + repeat_unit(rng) if k % 7 == 0 else r) for k, (p, c, r) in enumerate(hh_rows(150))]
    records = [{"prompt": p, "chosen": c, "rejected": r} for p, c, r in rows]
    records += [{"prompt": p, "chosen": r, "rejected": c} for p, c, r in rows]  # the same texts swapped
    chk = DegenerateRepetition()
    out, metrics = check_pairs(chk, [to_pair(rec, i) for i, rec in enumerate(records)])
    fresh = [run(DegenerateRepetition, [rec]) for rec in records]
    assert metrics == [m[0] for _, m in fresh]
    assert [(f.field, f.score, f.detail) for f in out] == [(f.field, f.score, f.detail) for o, _ in fresh for f in o]
    assert len(out) >= 2 * 21  # every planted loop, found on both of its pairs
    assert chk.memo.hits >= 2 * 150 - 10  # the second pair of every text (HH repeats a few responses itself)


def test_the_memo_stays_bounded() -> None:
    memo: TextMemo[int] = TextMemo(max_texts=3)
    assert [memo.get(t, len) for t in ("a", "bb", "a", "ccc", "dddd", "a")] == [1, 2, 1, 3, 4, 1]
    assert memo.hits == 1 and len(memo._seen) <= 3


def test_a_numbered_list_that_repeats_its_items_loops() -> None:
    """PandaLM row 127 (data/precision/multipair.jsonl): the chosen list names two books over and over; each line
    differs only in its number, which is not part of what dup_lines compares."""
    books = ['"The Silence of the Lambs" by Thomas Harris', '"The Godfather" by Mario Puzo']
    listed = "\n".join(f"{i}. {books[i % 3 == 1]}" for i in range(1, 11))
    rec = {"prompt": "Choose the best books from the given genre.\n\nCrime & Mystery",
           "chosen": "The best books from the genre of Crime & Mystery are: \n" + listed, "rejected": ANSWER}
    [(field, detail)] = found(DegenerateRepetition, rec)
    assert field == "chosen" and detail.startswith("chosen repeats itself: dup_lines")
    distinct = "\n".join(f"{i}. {t}" for i, t in enumerate(["Rebecca", "Gone Girl", "In Cold Blood", "Dracula",
                                                            "The Big Sleep"], 1))
    assert found(DegenerateRepetition, {**rec, "chosen": distinct}) == []
    bullets = "\n".join(f"- {t}" for t in ["Rebecca by Daphne du Maurier"] * 4 + ["Gone Girl by Gillian Flynn"])
    assert [f for f, _ in found(DegenerateRepetition, {**rec, "chosen": bullets})] == ["chosen"]

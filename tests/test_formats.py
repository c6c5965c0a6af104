"""Every documented input format (docs/formats.md) parses to the same canonical pair; normalisers are idempotent."""

from __future__ import annotations

import pytest

from pairaudit.io.formats import detect_format, normalise, parse_columns, record_format, split_hh, to_record

PROMPT, GOOD, BAD = "How do I boil an egg?", "Put it in boiling water for 8 minutes.", "Eggs cannot be boiled."
U = {"role": "user", "content": PROMPT}
A_GOOD = {"role": "assistant", "content": GOOD}
A_BAD = {"role": "assistant", "content": BAD}

VARIANTS = {
    "standard": ({"prompt": PROMPT, "chosen": GOOD, "rejected": BAD, "id": 7}, None),
    "conversational": ({"prompt": [U], "chosen": [A_GOOD], "rejected": [A_BAD]}, None),
    "implicit_conversational": ({"chosen": [U, A_GOOD], "rejected": [U, A_BAD]}, None),
    "sharegpt_mapped": ({"conv_prompt": [{"from": "human", "value": PROMPT}],
                         "good": [{"from": "gpt", "value": GOOD}], "bad": [{"from": "gpt", "value": BAD}]},
                        "prompt=conv_prompt,chosen=good,rejected=bad"),
    "column_mapped": ({"question": PROMPT, "response_x": GOOD, "response_y": BAD},
                      "prompt=question,chosen=response_x,rejected=response_y"),
    "pairwise_label_b": ({"prompt": PROMPT, "response_1": BAD, "response_2": GOOD, "better": 1},
                         "response_a=response_1,response_b=response_2,label=better"),
    "pairwise_label_a": ({"prompt": PROMPT, "response_a": GOOD, "response_b": BAD, "label": "a"}, None),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variants_give_the_same_canonical_pair(name: str) -> None:
    rec, cols = VARIANTS[name]
    columns = parse_columns(cols)
    fmt = detect_format(rec, columns)
    assert fmt is not None
    pair = normalise(3, rec, fmt, columns)
    assert (pair.row, pair.prompt, pair.chosen, pair.rejected) == (3, PROMPT, GOOD, BAD)
    if pair.conversational:
        assert pair.prompt_messages == [U] and pair.chosen_messages == [A_GOOD] and pair.rejected_messages == [A_BAD]
    # idempotent: normalising the canonical record again gives the same pair
    again = normalise(3, to_record(pair), record_format(pair))
    assert (again.prompt, again.chosen, again.rejected) == (pair.prompt, pair.chosen, pair.rejected)
    assert again.prompt_messages == pair.prompt_messages
    assert to_record(normalise(3, to_record(again), record_format(again))) == to_record(again)


def test_hh_strings_split_at_last_shared_assistant_turn() -> None:
    c = f"\n\nHuman: {PROMPT}\n\nAssistant: {GOOD}"
    r = f"\n\nHuman: {PROMPT}\n\nAssistant: {BAD}"
    assert detect_format({"chosen": c, "rejected": r}) == "implicit_hh"
    pair = normalise(0, {"chosen": c, "rejected": r}, "implicit_hh")
    assert pair.prompt == f"\n\nHuman: {PROMPT}\n\nAssistant:"
    assert (pair.chosen, pair.rejected) == (f" {GOOD}", f" {BAD}")
    assert not pair.notes
    again = normalise(0, to_record(pair), "standard")
    assert (again.prompt, again.chosen, again.rejected) == (pair.prompt, pair.chosen, pair.rejected)


@pytest.mark.parametrize("c_resp,r_resp", [(" Same answer.", " Same answer."),  # identical pair
                                           (" Yes", " Yes, and more."),           # prefix pair
                                           (" Yes, and more.", " Yes")])
def test_hh_identical_and_prefix_pairs_keep_whole_responses(c_resp: str, r_resp: str) -> None:
    """TRL's character-wise extract_prompt is off by one here; the turn-boundary split is not."""
    head = "\n\nHuman: Hi\n\nAssistant: Hello\n\nHuman: Is it?\n\nAssistant:"
    prompt, c, r, note = split_hh(head + c_resp, head + r_resp)
    assert (prompt, c, r, note) == (head, c_resp, r_resp, None)


def test_implicit_conversational_identical_pair_keeps_last_turn() -> None:
    pair = normalise(0, {"chosen": [U, A_GOOD], "rejected": [U, A_GOOD]}, "implicit_conversational")
    assert pair.prompt_messages == [U] and pair.chosen_messages == [A_GOOD] == pair.rejected_messages


def test_differing_histories_are_noted() -> None:
    other = {"role": "user", "content": "Something else"}
    pair = normalise(0, {"chosen": [U, A_GOOD], "rejected": [other, A_BAD]}, "implicit_conversational")
    assert "prompt_mismatch" in pair.notes
    hh = normalise(0, {"chosen": "\n\nHuman: a\n\nAssistant: b",
                       "rejected": "\n\nHuman: a\n\nAssistant: c\n\nHuman: d\n\nAssistant: e"}, "implicit_hh")
    assert "the rejected reply goes on with dialogue turns of its own" in hh.notes["prompt_mismatch"]
    assert hh.notes["prompt_mismatch_side"] == "rejected" and pair.notes["prompt_mismatch_side"] == ""


def test_pretokenized_detected_and_kept_as_ids() -> None:
    rec = {"prompt_input_ids": [5, 6], "chosen_input_ids": [7, 2], "rejected_input_ids": [8, 2]}
    assert detect_format(rec) == "pretokenized"
    pair = normalise(0, rec, "pretokenized")
    assert pair.pretokenized and pair.ids == rec and pair.chosen is None
    assert normalise(0, to_record(pair), "pretokenized").ids == rec

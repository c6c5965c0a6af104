"""Issue 34, rules that fit real data: on rows copied from the shared HH helpful-base test split and the
UltraFeedback sample, a fault of the rejected side alone flags (a useful negative) where the same fault on
the chosen side drops; prompt_mismatch says which side adds a turn; repairable mojibake flags; short answers
are judged within the prompt's kind (length_outlier, near_identical_pair)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from conftest import write_jsonl

import pairaudit
from pairaudit.checks.prompt_kind import pair_short_answer_cue, short_answer_cue
from pairaudit.io.formats import detect_format, normalise

# UltraFeedback train_clean row 558 (SCAN task; the prompt shortened to its first and last lines)
SCAN = {
    "prompt": "Teacher:Given a sequence of actions to navigate an agent in its environment, provide the correct command "
              "in a limited form of natural language that matches the sequence of actions when executed. [...]\n"
              "Teacher: Now, understand the problem? Solve this instance: I_TURN_LEFT I_TURN_LEFT I_LOOK I_TURN_LEFT "
              "I_TURN_LEFT I_LOOK I_TURN_LEFT I_TURN_LEFT I_LOOK I_TURN_LEFT I_WALK I_TURN_LEFT I_WALK",
    "chosen": "Sure, I understand the problem. The correct command to navigate the agent through the sequence of "
              "actions would be:\n\n\"I_LOOK left, I_TURN_LEFT twice, I_LOOK around, I_TURN_LEFT three times, "
              "I_WALK.\"\n\nConfidence: 95%",
    "rejected": "turn left and turn left and look after turn left and turn left and look after turn left and turn "
                "left and look and turn left and walk and turn left and walk around left and walk around left",
}
# HH helpful-base test row 168: the rejected reply invents the user's next turn ("Humans: ...") and answers it
HH_168 = {
    "chosen": "\n\nHuman: What are some famous world music artists?\n\nAssistant: Here’s some world music artists "
              "that I’m familiar with:\n\nShankar: Indian sitar player and composer\n\nYma Sumac: Peruvian singer of "
              "popular songs from many different languages\n\nBob Marley: Jamaican reggae singer",
    "rejected": "\n\nHuman: What are some famous world music artists?\n\nAssistant: A complete list would be quite "
                "long, but I can make a quick list based on the first few hits in my knowledge base.\n\nHumans: "
                "That’s fine, how about the first ten?\n\nAssistant: Alright, let’s see...\n\n“A Thousand Miles "
                "Away”, the James Taylor Quartet\n\n“Zombie”, the Cranberries",
}
# HH row 567: the chosen reply does it ("Human:  How serious ...\n\nAssistant: ...")
HH_567 = {
    "chosen": "\n\nHuman: What is DVT?\n\nAssistant: This could be DVT, or Deep Vein Thrombosis.  In human biology, "
              "Deep Vein Thrombosis is a blood clot or blockage in a vein, usually in the leg.  Human:  How serious "
              "is this condition, and what can I do to prevent it from happening?\n\nAssistant:  Deep Vein "
              "Thrombosis can be very serious.",
    "rejected": "\n\nHuman: What is DVT?\n\nAssistant: I think you mean Deep Vein Thrombosis, and the problem is "
                "that it’s a blood clot in a deep vein.  Here’s some more information that might be helpful.",
}
# UltraFeedback row 434: one "2Â°C" in a long prompt; row 269: bytes lost (U+FFFD) in both answers
MOJIBAKE = {
    "prompt": "How do I temper white chocolate for Giandujotti? The tempering process will be basically the same "
              "(I've seen sources suggest 2Â°C below temperatures for white chocolate temperatures at all times), "
              "but keep in mind that it won't set as hard.",
    "chosen": "Yes", "rejected": "No.",
}
LOST = {"prompt": "Translate the tweet to Burmese.",
        "chosen": "DigitPoliticalUAuth #BreakingNews #Gaza #PressTV #လြတ\ufffd\ufffd\ufffdပ္ #CNN #FOX",
        "rejected": "Burmese translation: \"Press TV, အိရးနီအင်းဆောင်fly \ufffd\ufffdapi\""}


def scan(tmp_path: Path, records: list[dict[str, Any]], only: list[str], **kw: Any) -> Any:
    src = write_jsonl(tmp_path / "pairs.jsonl", records)
    return pairaudit.scan(src, out=tmp_path / "out", only=only, log=lambda m: None, **kw)


def rows_of(audit: Any, check: str) -> list[tuple[int, str, str, str]]:
    f = audit.findings.filter(pl.col("check") == check).sort("row", "field")
    return f.select("row", "field", "action", "detail").rows()


def test_a_loop_on_the_rejected_side_flags_and_on_the_chosen_side_drops(tmp_path: Path) -> None:
    swapped = {**SCAN, "chosen": SCAN["rejected"], "rejected": SCAN["chosen"]}
    audit = scan(tmp_path, [SCAN, swapped], ["degenerate_repetition"])
    (r0, f0, a0, d0), (r1, f1, a1, _) = rows_of(audit, "degenerate_repetition")
    assert (r0, f0, a0) == (0, "rejected", "flag") and "useful negative" in d0 and "not dropped" in d0
    assert (r1, f1, a1) == (1, "chosen", "drop")
    assert audit.totals["kept"] == 1 and audit.totals["dropped"] == 1


def test_drop_by_name_drops_the_rejected_side_too(tmp_path: Path) -> None:
    audit = scan(tmp_path, [SCAN], ["degenerate_repetition"], drop=["degenerate_repetition"])
    [(_, field, action, detail)] = rows_of(audit, "degenerate_repetition")
    assert (field, action) == ("rejected", "drop") and "useful negative" not in detail


def test_prompt_mismatch_names_the_side_that_invents_a_turn(tmp_path: Path) -> None:
    other = {"chosen": HH_567["rejected"], "rejected": HH_567["rejected"].replace("What is DVT?", "What is PE?")}
    audit = scan(tmp_path, [HH_168, HH_567, other], ["prompt_mismatch"])
    (r0, f0, a0, d0), (r1, f1, a1, d1), (r2, f2, a2, d2) = rows_of(audit, "prompt_mismatch")
    assert (r0, f0, a0) == (0, "rejected", "flag") and "the rejected reply goes on with dialogue turns" in d0
    assert "That’s fine, how about the first ten?" in d0 and "useful negative" in d0
    assert (r1, f1, a1) == (1, "chosen", "drop") and "the chosen reply goes on" in d1
    assert (r2, f2, a2) == (2, "prompt", "drop") and "turn 1 (Human) differs" in d2 and "What is PE?" in d2


# HH helpful-base test row 750: the same history, and both replies begin with the user's speaker label
HH_750 = {
    "chosen": "\n\nHuman: How do I turn on voice typing?\n\nAssistant: Human: Yes, clicking the microphone icon "
              "will enable it.",
    "rejected": "\n\nHuman: How do I turn on voice typing?\n\nAssistant: Human: Yes, that's called microphone "
                "detection and it allows you to record audio with your microphone.",
}


def test_a_reply_that_writes_a_speaker_label_is_flagged_not_dropped(tmp_path: Path) -> None:
    plain = {"chosen": HH_750["chosen"].replace("Assistant: Human: Yes,", "Assistant: Yes,"),
             "rejected": HH_750["rejected"].replace("Assistant: Human: Yes,", "Assistant: Yes,")}
    inline = {"chosen": plain["chosen"], "rejected": plain["rejected"] + "\nHuman: thanks!"}
    audit = scan(tmp_path, [HH_750, plain, inline], ["prompt_mismatch"])
    (r0, f0, a0, d0), (r2, f2, a2, d2) = rows_of(audit, "prompt_mismatch")
    assert (r0, f0, a0) == (0, "chosen", "flag") and "writes a 'Human:' speaker label" in d0
    assert "clicking the microphone" in d0 and "flagged, not dropped" in d0
    assert (r2, f2, a2) == (2, "rejected", "flag") and "Human: thanks!" in d2
    assert audit.totals["kept"] == 3


def test_prompt_mismatch_on_messages_names_the_side_or_the_turn() -> None:
    u, a = {"role": "user", "content": "What is DVT?"}, {"role": "assistant", "content": "A blood clot."}
    more = [u, {"role": "assistant", "content": "A clot."}, {"role": "user", "content": "Serious?"},
            {"role": "assistant", "content": "Yes."}]
    pair = normalise(0, {"chosen": [u, a], "rejected": more}, "implicit_conversational")
    assert pair.notes["prompt_mismatch_side"] == "rejected" and "adds 2 turn(s)" in pair.notes["prompt_mismatch"]
    pair = normalise(0, {"chosen": more, "rejected": [u, a]}, "implicit_conversational")
    assert pair.notes["prompt_mismatch_side"] == "chosen"
    other = normalise(0, {"chosen": [u, a], "rejected": [{"role": "user", "content": "What is PE?"}, a]},
                      "implicit_conversational")
    assert other.notes["prompt_mismatch_side"] == "" and "message 1 (user) differs" in other.notes["prompt_mismatch"]


def test_repairable_mojibake_flags_and_lost_bytes_drop(tmp_path: Path) -> None:
    audit = scan(tmp_path, [MOJIBAKE, LOST], ["encoding_error"])
    got = rows_of(audit, "encoding_error")
    assert [(r, f, a) for r, f, a, _ in got] == [(0, "prompt", "flag"), (1, "chosen", "drop"), (1, "rejected", "drop")]
    assert "suggest 2Â°C below tempe' -> ftfy: ' suggest 2°C below" in got[0][3]
    assert "ftfy.fix_text repairs it" in got[0][3] and "U+FFFD" in got[1][3]
    assert audit.totals["kept"] == 1


# UltraFeedback rows 24, 202 and 816 (prompts shortened): one-word answers the prompt asks for
SHORT_ANSWERS = [
    ("Classify your answers into \"Yes\" and \"No\".\nInput: Head: PersonX accepts PersonY offer<sep>Tail: to "
     "waiting for new offer\nOutput:", "No"),
    ("Classify the given hotel review based on the sentiment it expresses into two classes: negative and positive."
     "\n\n[EX Q]: AVOID AVOID AVOID a truely hideous experieince\n\n[EX A]:", "negative"),
    ("If you understand the task and are ready, say ready\n \n \n \n Translate now", "Ready"),
    # PandaLM test set (data/precision/multipair.jsonl rows 139, 291, 236): answers the reviewer labelled right
    ("Verify the correctness of the given statement.\n\n\"For all integers j and k, if j and k are odd, then jk "
     "is odd.\"", "True"),
    ("Decide if the given email belongs to the Promotions or Social category.\n\nSubject: You have an invitation",
     "Social"),
    ("Give the news title a category. Pick a category from the list of News & Buzz, Travel, Style, Arts & Culture, "
     "Politics, Tech, and Science & Health.", "Style"),
]


@pytest.mark.parametrize(("prompt", "answer"), SHORT_ANSWERS)
def test_prompts_that_ask_for_a_short_answer_show_a_cue(prompt: str, answer: str) -> None:
    assert short_answer_cue(prompt)


@pytest.mark.parametrize("prompt", ["how to cook t-bone in the oven", "Write a story about a dragon.",
                                    "Explain how vaccines work, in detail."])
def test_open_prompts_show_no_cue(prompt: str) -> None:
    assert short_answer_cue(prompt) == ""


def test_a_dialogue_is_judged_by_its_last_user_turn() -> None:
    rec = {"chosen": "\n\nHuman: How many cups of rice?\n\nAssistant: Two.\n\nHuman: Tell me about fried rice."
                     "\n\nAssistant: Fried rice is", "rejected": "\n\nHuman: How many cups of rice?\n\nAssistant: "
                     "Two.\n\nHuman: Tell me about fried rice.\n\nAssistant: No"}
    assert pair_short_answer_cue(normalise(0, rec, detect_format(rec))) == ""


def _long(i: int) -> str:
    return (f"Here is a careful answer number {i}: first preheat the oven, then season the steak on both sides, "
            "sear it in a hot pan for two minutes a side and roast it until it reaches the temperature you like. "
            * 3)


def test_length_outlier_judges_short_answers_within_the_prompts_kind(tmp_path: Path) -> None:
    records = [{"prompt": f"How do I cook dish number {i} in the oven?", "chosen": _long(i), "rejected": _long(i + 1)}
               for i in range(40)]
    for k, (prompt, answer) in enumerate(SHORT_ANSWERS):
        records[k] = {"prompt": prompt, "chosen": answer, "rejected": _long(k)}
    records[30] = {"prompt": "how to cook t-bone in the oven", "chosen": "To", "rejected": _long(30)}
    audit = scan(tmp_path, records, ["length_outlier"])
    responses = [(r, f) for r, f, _, _ in rows_of(audit, "length_outlier") if f != "prompt"]
    assert responses == [(30, "chosen")]  # the one-word answers to rows 0-2 are what their prompts ask for


def test_a_one_token_rejected_beside_a_full_chosen_says_it_is_a_usable_negative(tmp_path: Path) -> None:
    """PandaLM rows 147 / 150 ('Game' for a table; labelled "a useless answer, but a fine negative"): flagged as a
    negative worth a look, not as a broken pair; a one-token chosen says nothing of the kind."""
    records = [{"prompt": f"How do I cook dish number {i} in the oven?", "chosen": _long(i), "rejected": _long(i + 1)}
               for i in range(40)]
    records[5] = {**records[5], "rejected": "Game"}
    records[9] = {**records[9], "chosen": "To"}
    audit = scan(tmp_path, records, ["length_outlier"])
    got = {(r, f): d for r, f, _, d in rows_of(audit, "length_outlier") if f != "prompt"}
    assert set(got) == {(5, "rejected"), (9, "chosen")}
    assert "usable negative" in got[(5, "rejected")] and "negative" not in got[(9, "chosen")]


@pytest.mark.parametrize(("record", "expect"), [
    # UltraFeedback row 292: the changed word changes the answer; flagged, the word named
    ({"prompt": "Rearrange the following words into a meaningful sentence:\n\"travel, forests, are, enchanted, The\"",
      "chosen": "The enchanted forests are travel destinations.", "rejected": "The enchanted forests are travel."},
     "the words differ in 'destinations'"),
    # HH row 1118 (its last turns): punctuation only
    ({"chosen": "\n\nHuman: That will be all for now. Thank you!\n\nAssistant: You’re welcome, have a good day.",
      "rejected": "\n\nHuman: That will be all for now. Thank you!\n\nAssistant: You’re welcome, have a good day!"},
     "only punctuation, case or spacing differ"),
    # the differing word is the answer: a number, a label asked for
    ({"prompt": "A train covers 120 km in 3 hours. What is its speed?", "chosen": "The speed is 40 km per hour.",
      "rejected": "The speed is 36 km per hour."}, None),
    ({"prompt": "Is the hypothesis entailed by the premise?\nOptions:\n- yes\n- no\n- it is not possible to tell",
      "chosen": "The answer is no.", "rejected": "The answer is yes."}, None),
])
def test_near_identical_pair_reads_what_differs(record: dict, expect: str | None, tmp_path: Path) -> None:
    audit = scan(tmp_path, [record], ["near_identical_pair"])
    got = rows_of(audit, "near_identical_pair")
    if expect is None:
        assert got == []
    else:
        [(_, _, action, detail)] = got
        assert action == "flag" and expect in detail


@pytest.mark.parametrize(("actions", "flag", "expect"), [({}, [], "flag"), ({"encoding_error": "drop"}, [], "drop"),
                                                         ({}, ["encoding_error"], "flag")])
def test_a_mild_finding_flags_only_under_the_default_action(actions: dict, flag: list, expect: str) -> None:
    from pairaudit.config import ScanConfig
    from pairaudit.datatypes import Finding
    from pairaudit.plan import build_plan

    plan = build_plan(ScanConfig(actions=dict(actions), flag=list(flag)))
    f = Finding(0, "encoding_error", "prompt", 1.0, None, "prompt: repairable mojibake", mild="ftfy repairs it")
    plan.settle(f)
    assert f.action == expect and ("flagged, not dropped" in f.detail) is (not actions and not flag)
    unsure = Finding(0, "near_duplicate_pair", None, 0.9, 0, "close", unsure=True)
    plan.settle(unsure)
    assert unsure.action == "flag"


def test_the_summary_counts_a_drop_checks_flagged_rows_as_flagged() -> None:
    from pairaudit.report.summary import by_action, summary_groups

    entry = {"status": "ran", "action": "drop", "rows": 9, "dropped": 2, "kept": 7, "rate": 0.009}
    assert [(a, p["rows"], round(p["rate"], 6)) for a, p in by_action(entry)] == [("drop", 2, 0.002),
                                                                                ("flag", 7, 0.007)]
    old = {k: v for k, v in entry.items() if k != "dropped"}  # a report.json written before `dropped`
    assert [(a, p["rows"]) for a, p in by_action(old)] == [("drop", 9)]
    groups = summary_groups({"prompt_mismatch": entry, "too_long": {**entry, "action": "flag", "dropped": 0}})
    assert [n for n, _ in groups["drop"]] == ["prompt_mismatch"]
    assert [n for n, _ in groups["flag"]] == ["prompt_mismatch", "too_long"]

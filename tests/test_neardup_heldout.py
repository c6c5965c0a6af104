"""The held-out near-duplicate sets of issue 34 (data/precision/neardup_heldout*.jsonl, each planted by a reviewer
who had not read the rule): 300 one-pair-per-prompt HH rows, 30 hand-paraphrased copies with the same prompt
text, 10 hard negatives (same prompt, other answers). Two rules are read on it: a prompt whose only two rows share no
response gets the lower wording floor (flagged), and numbers of short answers keep different answers apart."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import pairaudit
from pairaudit.stages.near_duplicates.infos import NEAR_DUPLICATE_INFO
from pairaudit.stages.near_duplicates.match import other_numbers, sketch
from pairaudit.stages.near_duplicates.verify import find_groups, two_row_prompts

DATA = Path(__file__).resolve().parent.parent / "data" / "precision"
CHECKS = ["near_duplicate_pair", "contradictory_pair"]


@pytest.fixture(scope="module", params=["neardup_heldout.jsonl", "neardup_heldout2.jsonl"])
def heldout(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Both planted sets (the second by another reviewer, after the first was seen): scanned once each."""
    path = DATA / request.param
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    audit = pairaudit.scan(str(path), tmp_path_factory.mktemp("held") / "out", progress=False, log=lambda m: None,
                           only=CHECKS)
    return {"rows": rows, "findings": audit.findings.to_dicts()}


def test_paraphrases_found_hard_negatives_and_base_rows_left(heldout: dict) -> None:
    rows, found = heldout["rows"], heldout["findings"]
    nd = {f["row"]: f for f in found if f["check"] == "near_duplicate_pair"}
    plants = {i: r["plant_of"] for i, r in enumerate(rows) if r.get("plant_kind") == "paraphrase"}
    negatives = [i for i, r in enumerate(rows) if r.get("plant_kind") == "hard_negative"]
    got = [i for i, o in plants.items() if i in nd and nd[i]["group"] == o]
    assert len(got) >= 0.95 * len(plants), sorted(set(plants) - set(got))
    assert not [f for f in found if f["row"] in negatives or f["row"] < 300], found
    # the copies the lower floor lets in are worded apart: flagged for a person, never dropped
    lenient = [nd[i] for i in got if "worded apart" in nd[i]["detail"]]
    assert all(f["action"] == "flag" for f in lenient)


def test_two_row_prompts_counts_prompt_digests() -> None:
    assert two_row_prompts(np.array([3, 4, 3, 5, 5, 5, 6], dtype=np.int64)).tolist() == [
        True, False, True, False, False, False, False]


def test_other_numbers_of_short_answers_only() -> None:
    texts = [("14% tip on $47.50 is $6.50.", "14% tip on $47.50 is $2.50."),  # the answer changed
             ("14% tip on $47.50 is $6.50.", "A 14% tip on $47.50 comes to $6.50."),  # same numbers, reworded
             ("Try sniffing the water.", "Try sniffing the H2O."),  # numbers on one side only
             ("It premiered in 2017. " * 20, "It premiered in 2018. " * 20)]  # long: left to the similarity
    sk = [(sketch(a), sketch(b)) for a, b in texts]
    got = other_numbers(np.array([x[0][0] for x in sk]), np.array([x[0][1] for x in sk]),
                        np.array([x[1][0] for x in sk]), np.array([x[1][1] for x in sk]))
    assert got.tolist() == [True, False, False, False]


def test_a_changed_number_keeps_two_rows_apart() -> None:
    """Two rows of one prompt whose rejected answers embed alike but give another number: no match; the same
    rows with the same number are near duplicates (the vectors are the same in both runs)."""
    rng = np.random.default_rng(3)
    n, d = 120, 32
    P, C, R = (rng.normal(size=(n, d)) for _ in range(3))
    P[1], C[1], R[1] = P[0], C[0], R[0] + 0.02 * rng.normal(size=d)
    P, C, R = ((A / np.linalg.norm(A, axis=1, keepdims=True)).astype(np.float16) for A in (P, C, R))
    params = {**NEAR_DUPLICATE_INFO.thresholds, "floor_response": 0.85, "floor_response_flag": 0.80}
    for other, expect in (("The tip is $2.50.", []), ("The tip is $6.50!", [(1, 0)])):
        texts = [[f"prompt {i}", f"chosen answer {i}", f"rejected answer {i}"] for i in range(n)]
        texts[0] = ["What is a 14% tip on $47.50?", "It is $6.65.", "The tip is $6.50."]
        texts[1] = ["What is a 14% tip on $47.50?", "It is $6.65.", other]
        sk = np.array([[sketch(t)[0] for t in row] for row in texts], dtype="S257")
        ln = np.array([[sketch(t)[1] for t in row] for row in texts], dtype=np.int32)
        out = find_groups(np.arange(n), P, C, R, sk, ln, params, params)
        got = [(f.row, f.group) for f in out["findings"] if f.check == "near_duplicate_pair"]
        assert got == expect, (other, got)


def test_near_identical_embedding_view_reads_the_words() -> None:
    """The embedding view of near_identical_pair (cosine >= min_cosine) says what differs in words and leaves
    out the rows whose differing words are the answer (a number, a short-answer prompt's label), as the pair
    check does: the multi-pair reviewer labelled "$6.50" vs "$47.50" flags wrong."""
    from pairaudit.config import Context, ScanConfig
    from pairaudit.stages.near_duplicates.near_identical import near_identical_findings
    from pairaudit.stages.near_duplicates.texts import pack

    texts = [["What is a 14% tip on $47.50?", "14% tip on $47.50 is $6.50.", "14% tip on $47.50 is $47.50."],
             ["Classify the review as positive or negative: great phone", "positive", "negative"],
             ["Tell me about Paris.", "Paris is a lovely city to visit in spring.",
              "Paris is a wonderful city to visit in spring."]]
    ctx = Context(config=ScanConfig(embed_mode="static"))
    raw = np.array([0.99, 0.99, 0.99])
    got = near_identical_findings(ctx, np.array([10, 11, 12]), raw, "static", lambda idx: (None, None, None),
                                  [pack(t) for t in texts])
    assert [f.row for f in got] == [12]
    assert "'lovely', 'wonderful'" in got[0].detail and got[0].detail.startswith("chosen-vs-rejected embedding")
    assert [f.row for f in near_identical_findings(ctx, np.array([10, 11, 12]), raw, "static",
                                                   lambda idx: (None, None, None))] == [10, 11, 12]


LONE = [  # (prompt, chosen, rejected): each prompt text occurs exactly twice or once
    ("\n\nHuman: Is it safe to eat raw cookie dough?\n\nAssistant:", " No.",
     " It is mostly fine, but raw eggs and flour can both carry bacteria, so it is better to use a recipe that is "
     "made for eating raw."),
    ("\n\nHuman: Is it safe to eat raw cookie dough?\n\nAssistant:", " Nope.",  # the copy: "No." -> "Nope."
     " It is mostly fine, but raw eggs and raw flour can both carry bacteria, so it's better to use a recipe that "
     "is made for eating raw."),
    ("\n\nHuman: What should I pack for a weekend of hiking?\n\nAssistant:",
     " Layers you can take off, a rain jacket, two litres of water, snacks, a map and a small first-aid kit.",
     " Just bring your phone, you can buy anything you need on the way."),
    ("\n\nHuman: What should I pack for a weekend of hiking?\n\nAssistant:",  # another comparison of that prompt
     " Where are you going? The gear for a desert trail is not the gear for a snowy ridge.",
     " I would skip the trip if the forecast says storms, hiking in lightning is dangerous."),
    ("\n\nHuman: How do I boil an egg?\n\nAssistant:", " Put it in boiling water for about nine minutes.",
     " Crack it into a hot pan with butter."),
    ("\n\nHuman: Can you recommend a good book about space?\n\nAssistant:",
     " Cosmos by Carl Sagan is a classic that explains the universe in plain words.", " No, I don't read books."),
]


def test_the_prompt_s_only_two_rows_match_on_words_or_meaning_per_response(tmp_path: Path) -> None:
    """A prompt whose only two rows share no response (nothing says it was asked twice by design): a response
    counts as copied when its wording reaches floor_wording_two_rows OR its cosine reaches the band floor ("No."
    -> "Nope.": wording 0.67, a copy in meaning), flagged; two different comparisons of one prompt (answers apart
    in words and in meaning) are left apart, and the reason column says which response and why."""
    path = tmp_path / "lone.jsonl"
    path.write_text("".join(json.dumps({"prompt": p, "chosen": c, "rejected": r}) + "\n" for p, c, r in LONE))
    audit = pairaudit.scan(str(path), tmp_path / "out", progress=False, log=lambda m: None, only=CHECKS)
    nd = {f["row"]: f for f in audit.findings.to_dicts() if f["check"] == "near_duplicate_pair"}
    assert set(nd) == {1} and nd[1]["group"] == 0 and nd[1]["action"] == "flag", nd
    import polars as pl

    reason = pl.read_parquet(tmp_path / "out" / "scores.parquet")["near_duplicate_pair_reason"].to_list()
    assert reason[1].startswith("possibly a copy of row 0"), reason
    assert not any(f["row"] in (2, 3) for f in audit.findings.to_dicts()), audit.findings
    for i, other in ((2, 3), (3, 2)):  # when near enough to be explained, they say why they are apart
        assert reason[i] is None or reason[i].startswith(f"not a copy of row {other}: "), reason


def test_reworded_prompts_reach_the_transformer() -> None:
    """held6 (data/precision/neardup_heldout6.jsonl, written by a helper who had not read the rule): 99 HH rows, 40
    copies whose user turns are reworded (light to from scratch), 20 same-topic requests for something else. The
    static model's candidate rule turns a pair down on the prompt below ``candidate_min_prompt`` (its static
    cosine, unless the wording alone passes the deciding rule); the transformer matched heavy rewrites at static
    cosine 0.606 and 0.646, which a floor of 0.65 lost (33 of 40 found instead of 35: docs/near_duplicates.md,
    "The prompts")."""
    path = DATA / "neardup_heldout6.jsonl"
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    audit = pairaudit.scan(str(path), None, progress=False, log=lambda m: None, only=CHECKS)
    found = audit.findings.to_dicts()
    nd = {f["row"]: f for f in found if f["check"] == "near_duplicate_pair"}
    plants = {i: r["plant_of"] for i, r in enumerate(rows) if r.get("plant_kind") == "paraphrase"}
    got = sorted(i for i, o in plants.items() if i in nd and nd[i]["group"] == o)
    assert len(got) >= 35, sorted(set(plants) - set(got))
    assert {118, 126} <= set(got)  # the two heavy rewrites at static prompt cosine 0.606-0.646
    assert not [f for f in found if f["row"] < 99], "a base row was merged"
    base = {(r["chosen"], r["rejected"]) for r in rows[:99]}
    other = [i for i, r in enumerate(rows) if r.get("plant_kind") == "hard_negative"
             and (r["chosen"], r["rejected"]) not in base]
    assert not [f for f in found if f["row"] in other], "a request for something else with its own answers merged"


def test_reworded_requests_on_ultrafeedback() -> None:
    """held7 (data/precision/neardup_heldout7.jsonl, written by another helper after the candidate rule's prompt
    floor was first chosen): 200 UltraFeedback rows, 40 copies with the request reworded, 20 requests for
    something else of the same kind worded as close to the base as possible (few-shot templates differing in a
    few characters)."""
    path = DATA / "neardup_heldout7.jsonl"
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    found = pairaudit.scan(str(path), None, progress=False, log=lambda m: None, only=CHECKS).findings.to_dicts()
    nd = {f["row"]: f for f in found if f["check"] == "near_duplicate_pair"}
    plants = {i: r["plant_of"] for i, r in enumerate(rows) if r.get("plant_kind") == "paraphrase"}
    got = [i for i, o in plants.items() if i in nd and nd[i]["group"] == o]
    assert len(got) >= 34, sorted(set(plants) - set(got))
    negatives = {i for i, r in enumerate(rows) if r.get("plant_kind") == "hard_negative"}
    assert not [f for f in found if f["row"] < 200 or f["row"] in negatives], found

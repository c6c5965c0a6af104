"""preference_cycle and the multi-pair profile on tiny inline rows; the calibrated copy threshold."""

from __future__ import annotations

import numpy as np
import pytest

from pairaudit.config import Context, ScanConfig
from pairaudit.datatypes import Finding, Pair
from pairaudit.stages.near_duplicates.calibrate import MIN_NEGATIVES, calibrate
from pairaudit.stages.near_duplicates.infos import NEAR_DUPLICATE_INFO
from pairaudit.stages.preference_graph import PreferenceGraphStage


def run(rows: list[tuple[str, str, str]], near: list[Finding] | None = None) -> tuple[list[Finding], dict]:
    stage = PreferenceGraphStage(Context(config=ScanConfig()), {"preference_cycle"})
    stage.observe([Pair(row=i, format="standard", prompt=p, chosen=c, rejected=r) for i, (p, c, r) in enumerate(rows)],
                  None)
    stage.set_findings(near or [], {"near_duplicate_pair"})
    res = stage.finalize()
    return res.findings, res.stats["preference_graph"]


@pytest.mark.parametrize(("edges", "on_cycle"), [
    ([("x", "y"), ("y", "z"), ("z", "x")], {0, 1, 2}),                # X > Y > Z > X
    ([("x", "y"), ("y", "z"), ("x", "z")], set()),                    # consistent: X > Y > Z
    ([("x", "y"), ("y", "x")], set()),                                # an opposite-label repeat, not a cycle
    ([("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")], {0, 1, 2, 3}),  # a 4-cycle
    ([("a", "b"), ("b", "c"), ("c", "d"), ("a", "d"), ("d", "b")], {1, 2, 4}),  # b > c > d > b; a only leads in
    ([("x", "y"), ("y", "z"), ("z", "x"), ("x", "w")], {0, 1, 2}),    # a tail off the cycle stays clean
])
def test_cycles_found_and_consistent_orderings_left_alone(edges: list[tuple[str, str]], on_cycle: set[int]) -> None:
    rows = [("Which is best?", f"answer {c}", f"answer {r}") for c, r in edges]
    rows.append(("Another question", "answer y", "answer x"))  # same texts, other prompt: other nodes
    found, _ = run(rows)
    assert {f.row for f in found} == on_cycle
    for f in found:
        assert f.check == "preference_cycle" and f.group == min(on_cycle) and f.score >= 3
        assert "no ranking agrees" in f.detail


def test_near_duplicate_group_joins_responses_into_one_cycle() -> None:
    rows = [("q", "X", "Y"), ("q", "Y", "Z"), ("q", "Z", "X."), ("q", "X.", "W")]
    assert run(rows)[0] == []  # "X" and "X." are different texts: no cycle
    near = [Finding(3, "near_duplicate_pair", None, 0.99, 0)]  # row 3 is row 0's comparison (X ~ X., W ~ Y)
    found, _ = run(rows, near)
    assert {f.row for f in found} == {0, 1, 2, 3}


def test_profile_counts_pairs_and_responses_per_prompt() -> None:
    rows = [("p1", "a", "b"), ("p1", "a", "c"), ("p1", "b", "c"), ("p2", "a", "b")]
    _, prof = run(rows)
    assert prof["prompts"] == 2 and prof["prompts_with_several_pairs"] == 1 and prof["rows_sharing_a_prompt"] == 3
    assert prof["pairs_per_prompt"] == {"mean": 2.0, "median": 2.0, "max": 3}
    assert prof["responses_per_prompt"] == {"mean": 2.5, "median": 2.5, "max": 3}


@pytest.mark.parametrize(("negatives", "copy", "band"), [
    (np.full(10, 0.99), 0.85, 0.80),                       # too few negatives: the floors
    (np.linspace(0.2, 0.7, 400), 0.85, 0.80),              # different answers far apart (HH-like): the floors
    (np.linspace(0.5, 0.99, 400), 0.98, 0.9777),           # model-vs-model: near-alike answers push it to the cap
    (np.linspace(0.3, 0.9, 400), 0.915, 0.885),            # in between: quantile + margin
])
def test_copy_threshold_sits_above_the_datasets_negatives(negatives: np.ndarray, copy: float, band: float) -> None:
    p = dict(NEAR_DUPLICATE_INFO.thresholds)
    info = calibrate((negatives, np.empty(0)), p, "test")
    assert info["min_response"] == pytest.approx(copy, abs=2e-3)
    assert info["min_response_flag"] == pytest.approx(band, abs=2e-3)
    assert info["min_response_flag"] <= info["min_response"]
    if len(negatives) >= MIN_NEGATIVES:
        assert info["calibrated_on"] == "within rows" and info["negatives_within_rows"] == len(negatives)


def test_negatives_across_rows_take_precedence() -> None:
    p = dict(NEAR_DUPLICATE_INFO.thresholds)
    info = calibrate((np.linspace(0.2, 0.5, 100), np.linspace(0.5, 0.95, 100)), p, "test")
    assert info["calibrated_on"] == "across rows sharing a prompt" and info["min_response"] > 0.95

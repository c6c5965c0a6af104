"""Review decisions are an append-only log of actions: undo takes back exactly the last action (a bulk call
that recorded nothing takes nothing back), checked on the shipped example and against a model of the log
over a few hundred random decide / bulk / undo sequences."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import polars as pl
import pytest
from conftest import EXAMPLE
from support.report_fixtures import write_out

from pairaudit.review import Review

ROWS = list(range(8))  # write_out's folder: rows 0-7, rows 1, 3 dropped by a check, 5 malformed


def test_issue_sequence_on_the_shipped_example(tmp_path: Path) -> None:
    import pairaudit

    # the checks that drop and flag rows of the example without a model (its full scan flags the same rows
    # with these checks first in the queue)
    only = ["empty_response", "prompt_mismatch", "prefix_pair", "split_word", "length_outlier"]
    pairaudit.scan(EXAMPLE, out=tmp_path / "out", only=only, quiet=True)
    rv = Review(tmp_path / "out", reviewer="me")
    q = rv.queue(action="flag")
    first = q.next().row  # row 168: prompt_mismatch, its rejected reply invents a turn (a flag since issue 34)
    q.decide(first, "drop", note="x")
    assert first == 168 and {r: d.decision for r, d in rv.decisions().items()} == {168: "drop"}
    bulk = rv.queue(action="drop").decide_rest("keep")
    assert len(bulk) == 0 and len(bulk.held_rows) == 1
    assert "nothing recorded, so this was no action: undo() right after it takes nothing back" in bulk.message
    assert repr(bulk) == bulk.message
    undone = rv.undo()
    assert undone == [] and "nothing taken back" in undone.message
    assert {r: d.decision for r, d in rv.decisions().items()} == {168: "drop"}
    assert rv.undo().message == "took back drop of row 168" and rv.decisions() == {}
    assert "nothing to undo" in rv.undo().message


def test_undo_survives_a_new_session_and_leaves_other_reviewers_alone(tmp_path: Path) -> None:
    out = write_out(tmp_path)
    ana, bo = Review(out, reviewer="ana"), Review(out, reviewer="bo")
    ana.decide(4, "flip")
    bo.decide(4, "drop")  # the later line wins
    ana.decide_many([0, 2], "keep")
    assert Review(out, reviewer="ana").undo().message == "took back keep of 2 rows (0, 2)"  # a later session
    assert ana.undo().message == "took back flip of row 4"  # ana's flip, not bo's later drop
    assert {r: (d.decision, d.reviewer) for r, d in ana.decisions().items()} == {4: ("drop", "bo")}
    lines = [json.loads(x) for x in (out / "decisions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(x["decision"], x["action"]) for x in lines] == [("flip", 0), ("drop", 1), ("keep", 2), ("keep", 2),
                                                             ("undo", 2), ("undo", 2), ("undo", 0)]


def test_undo_line_without_action_takes_back_the_latest(tmp_path: Path) -> None:
    out = write_out(tmp_path)  # a file written before actions were numbered
    old = [{"row": 4, "decision": "flip"}, {"row": 4, "decision": "drop"}, {"row": 4, "decision": "undo"}]
    (out / "decisions.jsonl").write_text("".join(json.dumps(x) + "\n" for x in old), encoding="utf-8")
    assert Review(out).decisions()[4].decision == "flip"


def _model_final(stack: list[list[tuple[int, str]] | None]) -> dict[int, str]:
    final: dict[int, str] = {}
    for action in stack:
        for row, decision in action or []:
            final[row] = decision
    return final


def _random_step(rng: random.Random, rv: Review, stack: list, drops: set[int]) -> None:
    op = rng.choice(["decide", "decide", "bulk", "bulk", "undo", "undo"])
    decision = rng.choice(["keep", "drop", "flip"])
    if op == "decide":
        row = rng.choice(ROWS)
        rv.decide(row, decision)
        stack.append([(row, decision)])
    elif op == "bulk":
        rows = rng.sample(ROWS, rng.randint(0, 4))
        force = rng.random() < 0.2
        bulk = rv.decide_many(rows, decision, force=force)
        held = set() if force or decision == "drop" else drops & set(rows)
        allowed = sorted(set(rows) - held)
        assert [d.row for d in bulk] == allowed and set(bulk.held_rows) == held
        stack.append([(r, decision) for r in allowed] or None)
    else:
        undone = rv.undo()
        top = stack.pop() if stack else None
        assert sorted(d.row for d in undone) == sorted(r for r, _ in top or []), (top, undone.message)


def test_random_sequences_match_a_model_of_the_log(tmp_path: Path) -> None:
    base = write_out(tmp_path / "base")
    f = pl.read_parquet(base / "findings.parquet")
    drops = set(f.filter(pl.col("action") == "drop")["row"].to_list())
    rng = random.Random(35)
    for n in range(300):
        out = tmp_path / "out"
        if not out.exists():
            shutil.copytree(base, out)
        (out / "decisions.jsonl").unlink(missing_ok=True)
        rv = Review(out, reviewer=rng.choice(["ana", "bo"]))
        stack: list[list[tuple[int, str]] | None] = []  # the model: actions, newest last (None: empty bulk)
        for _ in range(rng.randint(1, 14)):
            _random_step(rng, rv, stack, drops)
            got = {r: d.decision for r, d in rv.decisions().items()}
            assert got == _model_final(stack), (n, stack)
        # a fresh session sees the same log: its undos take back the same actions, newest first
        again = Review(out, reviewer=rv.reviewer)
        live = [a for a in stack if a]
        while live:
            assert sorted(d.row for d in again.undo()) == sorted(r for r, _ in live.pop())
            assert {r: d.decision for r, d in again.decisions().items()} == _model_final(live)
        assert again.decisions() == {} and again.undo() == []


if __name__ == "__main__":
    pytest.main([__file__, "-q"])


def test_a_session_that_starts_with_undo_numbers_its_next_action_after_the_file(tmp_path: Path) -> None:
    """Independent tester's case: session A decides rows 1 and 2; session B undoes (row 2), then decides
    row 3; its undo takes back exactly row 3's keep, never row 1's drop."""
    out = write_out(tmp_path)
    a = Review(out, reviewer="me")
    a.decide(1, "drop")
    a.decide(2, "drop")
    b = Review(out, reviewer="me")
    assert "row 2" in b.undo().message
    b.decide(3, "keep")
    undone = b.undo()
    assert [d.row for d in undone] == [3] and "keep" in undone.message
    assert {r: d.decision for r, d in Review(out, reviewer="me").decisions().items()} == {1: "drop"}

"""A 1,000-row review played end to end on real HH rows: filter, bulk keep with the guard, undo, a second
reviewer merged with its conflicts listed, apply. No row a drop-by-default check removed comes back into
the cleaned output unless the reviewer forces it (by row, or naming the check)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from conftest import CHEAP, HH, write_jsonl

pairaudit = pytest.importorskip("pairaudit.api")
from pairaudit.review import Review  # noqa: E402

EMPTY, IDENTICAL = (120, 740), 721


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not HH.exists():
        pytest.skip("real data not present")
    root = tmp_path_factory.mktemp("review1000")
    recs = [json.loads(line) for line in HH.read_text(encoding="utf-8").splitlines()[:1000]]
    for r in EMPTY:  # the planted faults the issue saw brought back by a bulk keep
        head, _, _ = recs[r]["rejected"].rpartition("\n\nAssistant:")
        recs[r]["rejected"] = head + "\n\nAssistant:"
    recs[IDENTICAL]["rejected"] = recs[IDENTICAL]["chosen"]
    src = write_jsonl(root / "hh1000.jsonl", recs)
    out = root / "out"
    # max_length 128 makes most real HH rows too_long (flagged): a review of several hundred rows
    pairaudit.scan(src, out=out, only=CHEAP, max_length=128, log=lambda m: None, progress=False)
    return out


def _kept(out: Path) -> set[int]:
    s = pl.read_parquet(out / "scores.parquet")
    return set(s.filter(pl.col("kept"))["row"].to_list())


def _dropped_by_scan(out: Path) -> set[int]:
    f = pl.read_parquet(out / "findings.parquet")
    return set(f.filter(pl.col("action") == "drop")["row"].to_list())


def test_thousand_row_review(scanned: Path, tmp_path: Path) -> None:
    out = scanned
    drops = _dropped_by_scan(out)
    assert set(EMPTY) | {IDENTICAL} <= drops
    before = json.loads((out / "report.json").read_text(encoding="utf-8"))["totals"]
    ana = Review(out, reviewer="ana")
    q = ana.queue()
    assert q.total >= 500, q.total
    assert set(q.rows[:len(drops - _malformed(out))]) == drops - _malformed(out)  # drops first

    # filter, then decide one by one
    long = q.filter(check="too_long", min_score=1.5)
    assert 0 < long.total < q.total and all(r in q.rows for r in long.rows)
    first = long.next().row
    ana.decide(first, "drop", note="far too long")

    # bulk keep of everything else: the guard holds back every row a check drops
    bulk = q.decide_rest("keep", note="read through")
    assert set(EMPTY) <= set(bulk.held["empty_response"]) and IDENTICAL in bulk.held["identical_pair"]
    assert not drops & {d.row for d in bulk}
    assert len(bulk) == q.total - 1 - len(bulk.held_rows)

    # undo takes back the whole bulk decision, not the single one before it
    undone = ana.undo()
    assert len(undone) == len(bulk) and set(ana.decisions()) == {first}
    flags = q.filter(action="flag").decide_rest("keep", note="read through")  # scoped to the filter
    # rows with a flag that another check drops (721: identical and too long) are still held back
    assert not drops & {d.row for d in flags} and IDENTICAL in flags.held_rows and set(flags.held_rows) <= drops

    # a second reviewer, in their own file: some rows the same, some different, some new
    bo = Review(out, reviewer="bo", decisions_file=tmp_path / "bo.jsonl")
    same, differ = flags[0].row, flags[1].row
    bo.decide(same, "keep")
    bo.decide(differ, "drop", note="repetitive")
    bo.decide(first, "keep")  # ana dropped it
    new_drop = sorted(drops - _malformed(out) - set(EMPTY) - {IDENTICAL})[:1]
    bo.decide_many(new_drop, "keep", force=True)  # bo forces one dropped row back in, explicitly
    merged = ana.merge(bo)
    assert merged.agreed == [same] and merged.added == new_drop
    assert sorted(c["row"] for c in merged.conflicts) == sorted([differ, first])
    conflict = next(c for c in merged.conflicts if c["row"] == differ)
    assert [(d["reviewer"], d["decision"]) for d in conflict["decisions"]] == [("ana", "keep"), ("bo", "drop")]
    assert ana.decisions()[differ].decision == "keep"  # a conflict leaves ana's decision as it was
    lines = [json.loads(x) for x in (out / "decisions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {x["reviewer"] for x in lines} == {"ana", "bo"} and all(x["time"].endswith("Z") for x in lines)

    # apply: ana's drop and the forced row count; every other dropped row stays out
    ana.apply()
    after = json.loads((out / "report.json").read_text(encoding="utf-8"))["totals"]
    kept = _kept(out)
    assert after["input"] == before["input"] == 1000 and after["kept"] == before["kept"] - 1 + len(new_drop)
    assert first not in kept and set(new_drop) <= kept
    assert not (drops - set(new_drop)) & kept
    assert not (set(EMPTY) | {IDENTICAL}) & kept


def _malformed(out: Path) -> set[int]:
    f = pl.read_parquet(out / "findings.parquet")
    return set(f.filter(pl.col("check") == "malformed_record")["row"].to_list())

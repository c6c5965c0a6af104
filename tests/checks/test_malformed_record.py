"""malformed_record: made while reading and normalising (no per-pair class), here straight from the batch step
that turns read records into pairs: an unreadable line, a record without preference fields, a wrong type."""

from __future__ import annotations

from pathlib import Path

import pytest

from pairaudit.batch import BatchProcessor
from pairaudit.config import ScanConfig
from pairaudit.datatypes import Finding
from pairaudit.io.base import Record
from pairaudit.plan import build_plan

OK = {"prompt": "Hi?", "chosen": "Hello.", "rejected": "Go away."}


def to_pairs(tmp_path: Path, *records: Record) -> tuple[list[int], list[tuple[int, str | None, str]]]:
    cfg = ScanConfig(only=["identical_pair"])
    proc = BatchProcessor(cfg, build_plan(cfg), {}, None, tmp_path)
    out: list[Finding] = []
    pairs = proc.to_pairs(list(records), out)
    assert all(f.check == "malformed_record" and f.score is None for f in out)
    return [p.row for p in pairs], [(f.row, f.field, f.detail) for f in out]


@pytest.mark.parametrize(("record", "field", "says"), [
    (Record(1, None, "invalid JSON: Expecting value", None), None, "invalid JSON"),
    (Record(1, {**OK, "chosen": True}), "chosen", "field 'chosen' is a boolean ('True'), expected a string"),
    (Record(1, {**OK, "rejected": None}), "rejected", "field 'rejected' is null"),
    (Record(1, {"prompt": "Hi?", "chosen": "Hello."}), "rejected", "missing field 'rejected'; fix:"),
], ids=["unparseable", "boolean", "null", "missing"])
def test_bad_records_become_findings_and_the_rest_pairs(record: Record, field: str | None, says: str,
                                                        tmp_path: Path) -> None:
    rows, found = to_pairs(tmp_path, Record(0, dict(OK)), record, Record(2, dict(OK)))
    assert rows == [0, 2] and [(r, f) for r, f, _ in found] == [(1, field)] and says in found[0][2]


def test_a_source_without_preference_fields(tmp_path: Path) -> None:
    rows, found = to_pairs(tmp_path, Record(0, {"question": "Hi?", "answer": "Hello."}))
    assert rows == [] and found[0][:2] == (0, None) and "no preference fields" in found[0][2]
    assert "fix: --columns" in found[0][2]

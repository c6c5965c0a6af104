"""`apply` (and `scan --decisions` on an unchanged source and config) work from the folder's own findings:
rows move between clean and dropped without re-running a check or a model, with the same bytes as a rescan
with the same decisions, and the log says which of the two it did."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest
from conftest import CHEAP, EXAMPLE, output_files

import pairaudit
from pairaudit.api import apply_decisions

RUN_SPECIFIC = {"timings.json"}


def _source(tmp: Path) -> Path:
    src = tmp / "pairs.jsonl"
    src.write_text("".join(EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)[:300]), encoding="utf-8")
    return src


def _scan(src: Path, out: Path, logs: list[str] | None = None, **kw: object) -> pairaudit.Audit:
    return pairaudit.scan(src, out=out, only=CHEAP + ["prefix_pair", "split_word"], flip=["length_outlier"],
                          progress=False, log=(logs.append if logs is not None else lambda m: None), **kw)


def _decide(out: Path, path: Path) -> None:
    from pairaudit.review import Review

    f = pl.read_parquet(out / "findings.parquet")
    dropped = sorted(set(f.filter(pl.col("action") == "drop")["row"]))
    flagged = sorted(set(f.filter(pl.col("action") == "flag")["row"]) - set(dropped))
    rv = Review(out, reviewer="t", decisions_file=path)
    rv.decide(dropped[0], "keep")
    rv.decide_many(flagged[:3], "drop", note="bad")
    rv.decide(flagged[3], "flip")
    rv.decide(5, "keep")
    with open(path, "a", encoding="utf-8") as fh:  # a decision for a row whose text changed: ignored
        fh.write(json.dumps({"row": 7, "decision": "drop", "pair_hash": "0" * 32}) + "\n")


def _same(a: Path, b: Path) -> None:
    fa, fb = output_files(a), output_files(b)
    assert fa.keys() == fb.keys()
    for name in sorted(set(fa) - RUN_SPECIFIC):
        assert fa[name] == fb[name], name


def test_apply_from_findings_equals_a_rescan(tmp_path: Path) -> None:
    src = _source(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    before = _scan(src, a)
    _decide(a, a / "decisions.jsonl")
    logs: list[str] = []
    applied = apply_decisions(a, log=logs.append)
    assert any("to the folder's own findings (no check or model re-run" in m for m in logs), logs
    assert "apply_from_findings" in json.loads((a / "timings.json").read_text())
    # the same decisions in a fresh folder, applied by a full scan
    b.mkdir()
    shutil.copyfile(a / "decisions.jsonl", b / "decisions.jsonl")
    _scan(src, b)
    _same(a, b)
    d = applied.report["decisions"]
    assert d["total"] == 7 and d["applied"] == 6 and [i["row"] for i in d["ignored"]] == [7]
    dropped_before = set(pl.read_parquet(a / "findings.parquet").filter(pl.col("action") == "drop")["row"])
    assert applied.totals["kept"] == before.totals["kept"] + 1 + (5 in dropped_before) - 3 and d["flipped"]
    # what the decisions did is in the digest (a person's drop has no check to count it) with the recorded list
    page = (a / "report.html").read_text(encoding="utf-8")
    assert ('<li id="digest-review"><b>Review decisions</b>: 6 of 7 applied (3 dropped, 2 kept, 1 flipped); '
            "1 ignored (report.html lists why)") in page
    assert "Recorded decisions (7)" in page
    # applying again (nothing changed) gives the same bytes again
    apply_decisions(a, log=logs.append)
    _same(a, b)


def test_scan_with_decisions_on_an_unchanged_source_uses_the_findings(tmp_path: Path) -> None:
    src = _source(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    _scan(src, a)
    decisions = tmp_path / "review.jsonl"
    _decide(a, decisions)
    logs: list[str] = []
    _scan(src, a, logs, decisions=str(decisions))
    assert any("to the folder's own findings" in m for m in logs), logs
    _scan(src, b, decisions=str(decisions))  # a fresh folder: a full scan
    _same(a, b)
    # another configuration: a rescan, which says why
    logs.clear()
    _scan(src, a, logs, decisions=str(decisions), max_length=64)
    assert any("rescanning to apply the review decisions: the configuration differs from the scan's (max_length)"
               in m for m in logs), logs
    with pytest.raises(pairaudit.errors.InputError, match="does not exist"):  # type: ignore[attr-defined]
        _scan(src, b, decisions=str(tmp_path / "missing.jsonl"))


def test_a_changed_source_is_rescanned(tmp_path: Path) -> None:
    src = _source(tmp_path)
    a = tmp_path / "a"
    _scan(src, a)
    _decide(a, a / "decisions.jsonl")
    os.utime(src, ns=(1, 1))  # same bytes, another modification time: cannot be confirmed unchanged
    logs: list[str] = []
    apply_decisions(a, log=logs.append)
    assert any("rescanning to apply the review decisions: the source" in m and "changed since" in m
               for m in logs), logs
    logs.clear()
    apply_decisions(a, log=logs.append)  # the rescan recorded the source as it is now
    assert any("folder's own findings" in m for m in logs), logs

"""Issue 23: a run where nothing usable came through never says "ok"; UTF-16/32 files with a byte-order
mark are read as what they are."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import write_jsonl
from typer.testing import CliRunner

from pairaudit.cli import app

ROWS = [{"prompt": f"Question {i}?", "chosen": f"A careful answer number {i}.", "rejected": "no"} for i in range(5)]


def _scan(src: Path, out: Path, *extra: str):
    return CliRunner().invoke(app, ["scan", str(src), "--out", str(out), "--only", "identical_pair", *extra])


def _report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", ["all malformed", "all dropped", "empty file", "empty gz", "blank lines"])
def test_nothing_usable_is_a_distinct_status_and_exit(tmp_path: Path, case: str) -> None:
    src = tmp_path / ("pairs.jsonl.gz" if case == "empty gz" else "pairs.jsonl")
    if case == "all malformed":
        write_jsonl(src, ["{not json", '{"prompt": "p", "chosen": true, "rejected": "r"}', "[1, 2]"])
    elif case == "all dropped":
        write_jsonl(src, [{"prompt": "p", "chosen": "same", "rejected": "same"}] * 3)
    elif case == "empty gz":
        src.write_bytes(gzip.compress(b""))
    else:
        src.write_text("" if case == "empty file" else "\n\n  \n")
    out = tmp_path / "out"
    res = _scan(src, out, "--drop", "identical_pair")
    assert res.exit_code == 5, res.output
    rep = _report(out)
    assert rep["status"] == "empty" and rep["totals"]["kept"] == 0
    assert any("dropped" in p or "no record" in p for p in rep["problems"])
    assert "empty:" in res.output
    res = _scan(src, tmp_path / "out2", "--drop", "identical_pair", "--allow-empty")
    assert res.exit_code == 0, res.output
    assert _report(tmp_path / "out2")["status"] == "empty"


def test_one_kept_row_is_ok(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "p.jsonl", ["{bad", ROWS[0]])
    res = _scan(src, tmp_path / "out", "-q")
    assert res.exit_code == 0, res.output
    assert _report(tmp_path / "out")["status"] == "ok"


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
@pytest.mark.parametrize("ext", ["jsonl", "json"])
def test_a_wide_unicode_file_with_a_bom_reads_correctly(tmp_path: Path, encoding: str, ext: str) -> None:
    bom = {"utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff", "utf-32-le": b"\xff\xfe\x00\x00",
           "utf-32-be": b"\x00\x00\xfe\xff"}[encoding]
    rows = [*ROWS, {"prompt": "Ünïcödé ✓ 你好?", "chosen": "Ja, gerne: ß.", "rejected": "nein"}]
    text = ("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n" if ext == "jsonl"
            else json.dumps(rows, ensure_ascii=False))
    src = tmp_path / f"pairs.{ext}"
    src.write_bytes(bom + text.encode(encoding))
    out = tmp_path / "out"
    res = _scan(src, out, "-q")
    assert res.exit_code == 0, res.output
    rep = _report(out)
    assert rep["totals"] == {**rep["totals"], "input": 6, "kept": 6, "malformed": 0}
    kept = (out / f"clean.{ext}").read_text(encoding="utf-8")
    got = [json.loads(x) for x in kept.splitlines()] if ext == "jsonl" else json.loads(kept)
    assert got == rows


def test_a_refused_scan_on_a_fresh_folder_leaves_nothing(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "p.jsonl", [{"question": "q", "answer": "a"}])  # no preference columns
    out = tmp_path / "out"
    res = _scan(src, out)
    assert res.exit_code == 2, res.output
    assert not out.exists()

"""Issue 38: hostile input and faults. Each case is the issue's reproduction: no traceback, nothing lost
(input = kept + dropped), the documented exit code, and a message whose fix works when it is run."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import EXAMPLE
from typer.testing import CliRunner

import pairaudit
from pairaudit.cli import app
from pairaudit.errors import PairauditError

ONLY = ["identical_pair", "empty_response"]


def _bad_utf8_table() -> pa.Table:
    """The issue's table: one chosen cell holds the bytes b'bad \\xff', viewed as a string column."""
    chosen = pa.array([b"ok one", b"bad \xff", b"ok three"], pa.binary()).view(pa.string())
    return pa.table({"prompt": ["a", "b", "c"], "chosen": chosen, "rejected": ["x", "y", "z"]})


def _cli(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output, res.output
    return res.exit_code, res.output


def _totals(out: Path) -> dict[str, int]:
    return json.loads((out / "report.json").read_text())["totals"]


# ------------------------------------------------------------------ 1. invalid UTF-8 in Arrow containers
def _parquet(tmp: Path) -> Path:
    pq.write_table(_bad_utf8_table(), tmp / "u.parquet")
    return tmp / "u.parquet"


def _save_to_disk(tmp: Path) -> Path:
    datasets.Dataset(datasets.table.InMemoryTable(_bad_utf8_table())).save_to_disk(str(tmp / "u_hf"))
    return tmp / "u_hf"


@pytest.mark.parametrize("make", [_parquet, _save_to_disk])
def test_invalid_utf8_in_a_string_column_is_one_dropped_row(tmp_path: Path, make) -> None:  # noqa: ANN001
    src = make(tmp_path)
    code, output = _cli("scan", str(src), "--out", str(tmp_path / "out"), "-q", "--only", ",".join(ONLY))
    assert code == 0, output
    t = _totals(tmp_path / "out")
    assert (t["input"], t["kept"], t["dropped"], t["malformed"]) == (3, 2, 1, 1)
    import polars as pl

    f = pl.read_parquet(tmp_path / "out" / "findings.parquet").filter(pl.col("check") == "malformed_record")
    assert f["row"].to_list() == [1] and f["field"].to_list() == ["chosen"]
    assert "invalid UTF-8 in column 'chosen' at byte 4 (0xff)" in f["detail"][0]
    code, shown = _cli("show", str(tmp_path / "out"), "1")  # the dropped row reads back
    assert code == 0 and "invalid UTF-8" in shown


def test_invalid_utf8_bytes_reach_dropped_parquet_as_read(tmp_path: Path) -> None:
    audit = pairaudit.scan(_bad_utf8_table(), tmp_path / "out", only=ONLY)
    assert audit.exit_code == 0 and audit.report["totals"]["dropped"] == 1
    dropped = pq.read_table(tmp_path / "out" / "dropped.parquet")
    chosen = dropped.column("record").combine_chunks().field("chosen").cast(pa.binary()).to_pylist()
    assert dropped.column("row").to_pylist() == [1] and chosen == [b"bad \xff"]
    assert pq.read_table(tmp_path / "out" / "clean.parquet").column("chosen").to_pylist() == ["ok one", "ok three"]


def test_invalid_utf8_in_one_split_of_several(tmp_path: Path) -> None:
    ds = datasets.Dataset(datasets.table.InMemoryTable(_bad_utf8_table()))
    datasets.DatasetDict({"train": ds, "test": ds}).save_to_disk(str(tmp_path / "dd"))
    code, output = _cli("scan", str(tmp_path / "dd"), "--split", "all", "--out", str(tmp_path / "out"), "-q",
                        "--only", ",".join(ONLY))
    assert code == 0, output
    t = _totals(tmp_path / "out")
    assert (t["input"], t["kept"] + t["dropped"], t["malformed"]) == (6, 6, 2)


# ---------------------------------------------------------------- 2. a gzip member and trailing bytes
@pytest.mark.parametrize("tail", [b"GARBAGE", b"\0" * 100, b"x" * 70_000])
def test_gzip_with_trailing_bytes_reads_what_gzip_dc_reads(tmp_path: Path, tail: bytes) -> None:
    lines = EXAMPLE.read_bytes().splitlines(keepends=True)[:10]
    src = tmp_path / "g.jsonl.gz"
    src.write_bytes(gzip.compress(b"".join(lines[:6])) + gzip.compress(b"".join(lines[6:])) + tail)
    expected = subprocess.run(["gzip", "-dc", str(src)], capture_output=True).stdout
    assert expected.count(b"\n") == 10
    code, output = _cli("scan", str(src), "--out", str(tmp_path / "out"), "--only", ",".join(ONLY))
    assert code == 0, output
    assert _totals(tmp_path / "out")["input"] == 10
    assert (tmp_path / "out" / "clean.jsonl").read_bytes() == expected
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["status"] == "ok" and "damage" not in report["source"]
    assert "after the last gzip member were ignored" in " ".join(output.split())


def test_gzip_damaged_after_a_complete_member_keeps_its_rows(tmp_path: Path) -> None:
    lines = EXAMPLE.read_bytes().splitlines(keepends=True)[:10]
    second = bytearray(gzip.compress(b"".join(lines[5:])))
    second[20:40] = b"\xff" * 20  # a second member that starts like gzip and is damaged
    src = tmp_path / "d.jsonl.gz"
    src.write_bytes(gzip.compress(b"".join(lines[:5])) + bytes(second))
    code, output = _cli("scan", str(src), "--out", str(tmp_path / "out"), "--only", ",".join(ONLY))
    assert code == 2, output
    t = _totals(tmp_path / "out")
    assert t["input"] >= 5 and t["input"] == t["kept"] + t["dropped"]


# ----------------------------------------------------------------------- 5. Python objects, raw errors
def _frame(n: int = 6):  # noqa: ANN202
    import pandas as pd

    return pd.DataFrame([{"prompt": f"Question {i}?", "chosen": f"A good answer {i}.", "rejected": f"No {i}."}
                         for i in range(n)])


def _fix_of(exc: BaseException) -> str:
    return str(exc).split("keep the first of each: ", 1)[1].strip()


def test_duplicate_column_names_are_an_error_whose_fix_runs(tmp_path: Path) -> None:
    df = _frame()
    df.insert(3, "chosen", "another chosen column", allow_duplicates=True)
    table = pa.Table.from_pandas(_frame(), preserve_index=False).append_column("rejected", pa.array(["r"] * 6))
    for name, obj in (("df", df), ("table", table)):
        with pytest.raises(PairauditError) as err:
            pairaudit.scan(obj, tmp_path / name, only=ONLY)
        assert err.value.exit_code == 2 and "occurs more than once" in str(err.value)
        scope = {name: obj}
        exec(_fix_of(err.value), scope)  # the suggested fix, run as written
        audit = pairaudit.scan(scope[name], tmp_path / name, only=ONLY)
        assert audit.exit_code == 0 and audit.report["totals"]["input"] == 6


@pytest.mark.parametrize("cell", [5, b"bytes", 2.5, ["a", "list"]])
def test_one_mistyped_cell_in_a_pandas_text_column_is_one_malformed_row(tmp_path: Path, cell: object) -> None:
    df = _frame()
    df["chosen"] = df["chosen"].astype(object)
    df.at[2, "chosen"] = cell
    audit = pairaudit.scan(df, tmp_path / "out", only=ONLY)
    t = audit.report["totals"]
    assert audit.exit_code == 0 and (t["input"], t["kept"], t["dropped"], t["malformed"]) == (6, 5, 1, 1)
    assert audit.report["source"]["type"] == "pandas.DataFrame" and "mix types" in audit.report["source"]["notes"][0]
    dropped = [json.loads(x) for x in (tmp_path / "out" / "dropped.jsonl").read_text().splitlines()]
    assert [d["row"] for d in dropped] == [2]
    assert len((tmp_path / "out" / "clean.jsonl").read_text().splitlines()) == 5


# ---------------------------------------------------------------- 6. row numbers in the Python review API
@pytest.fixture
def scanned(tmp_path: Path) -> Path:
    src = tmp_path / "hh.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:12]))
    assert pairaudit.scan(str(src), tmp_path / "out", only=ONLY).exit_code == 0
    return tmp_path / "out"


BAD_ROWS = [3.7, 8.0, "6", True, float("nan"), float("inf"), -1, None]


def test_review_rejects_every_row_number_the_decisions_file_rejects(scanned: Path) -> None:
    import numpy as np

    from pairaudit.decisions import read_log
    from pairaudit.errors import ConfigError, InputError
    from pairaudit.review import Review

    rv = Review(scanned, reviewer="ana")
    q = rv.queue()
    for bad in BAD_ROWS:
        for call in (lambda b: rv.decide(b, "drop"), lambda b: rv.decide_many([5, b], "drop"),
                     lambda b: q.decide(b, "drop"), lambda b: rv.pair(b)):
            with pytest.raises(ConfigError, match="row"):
                call(bad)
        line = json.dumps({"row": bad, "decision": "drop"}) if bad == bad else '{"row": NaN, "decision": "drop"}'
        (scanned / "other.jsonl").write_text(line + "\n")
        with pytest.raises(InputError):  # the file refuses the same values
            read_log(scanned / "other.jsonl")
    assert not (scanned / "decisions.jsonl").exists()  # nothing was recorded
    assert rv.decide(np.int64(3), "drop").row == 3
    rv.decide_many([4, np.int64(5)], "keep")
    assert sorted(rv.decisions()) == [3, 4, 5]


def test_merging_a_decisions_file_that_does_not_exist_is_an_error(scanned: Path) -> None:
    from pairaudit.errors import InputError
    from pairaudit.review import Review

    rv = Review(scanned, reviewer="ana")
    with pytest.raises(InputError, match="does not exist"):
        rv.merge(scanned / "no-such-decisions.jsonl")
    assert repr(rv.merge(Review(scanned, reviewer="bo"))).startswith("Merge: 0 rows added")


# ------------------------------------------------------------------------------ 7. apply's exit codes
@pytest.mark.parametrize("malformed", [0, 2])
def test_apply_exits_5_when_every_row_ends_up_dropped(tmp_path: Path, malformed: int) -> None:
    from pairaudit.review import Review

    lines = EXAMPLE.read_bytes().splitlines(keepends=True)[:3 - malformed] + [b"{not json\n"] * malformed
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(lines))
    out = tmp_path / "out"
    code, output = _cli("scan", str(src), "--out", str(out), "-q", "--only", ",".join(ONLY))
    assert code == 0, output
    Review(out, reviewer="ana").decide_many(range(3 - malformed), "drop")
    code, output = _cli("apply", str(out), "-q")
    t = _totals(out)
    assert code == 5 and (t["input"], t["kept"], t["dropped"]) == (3, 0, 3), output
    assert json.loads((out / "report.json").read_text())["status"] == "empty"
    code, output = _cli("apply", str(out), "-q", "--allow-empty")
    assert code == 0, output

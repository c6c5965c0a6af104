"""Broken input never kills the run and nothing is lost; every source kind round-trips."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import CHEAP

import pairaudit

OK = {"prompt": "Hello?", "chosen": "Hi, how can I help?", "rejected": "Go away."}


def _ok(i: int) -> dict:
    return {"prompt": f"Question {i}: what is {i} plus {i}?", "chosen": f"It is {2 * i}.",
            "rejected": f"Probably {3 * i + 1}, I guess."}


def _line(obj: object) -> bytes:
    return json.dumps(obj).encode()


def test_broken_jsonl_yields_exactly_the_malformed_rows(tmp_path: Path) -> None:
    lines = [
        b"\xef\xbb\xbf" + _line(_ok(0)),                                   # 0 BOM
        _line(_ok(1)) + b"\r",                                               # 1 CRLF
        b"",                                                                  # 2 blank: no record
        b'{"prompt": "caf\xe9", "chosen": "a", "rejected": "b"}',            # 3 invalid UTF-8
        _line({**OK, "chosen": 42}),                                          # 4 number for text
        _line({**OK, "rejected": True}),                                      # 5 boolean for text
        _line({**OK, "prompt": None}),                                        # 6 null for text
        b'{"prompt": "p", "chosen": "a", "chosen": "b", "rejected": "c"}',   # 7 duplicate key
        b"[1, 2, 3]",                                                         # 8 not an object
        b"   \t",                                                             # 9 whitespace: no record
        _line(_ok(10)),                                                       # 10 fine
        _line({"prompt": "p", "chosen": "a"}),                                # 11 missing field
        b'{"prompt": "x", "chosen": "trunc',                                 # 12 truncated last line
    ]
    src = tmp_path / "broken.jsonl"
    src.write_bytes(b"\n".join(lines))  # no newline after the last line
    audit = pairaudit.scan(src, out=tmp_path / "out", only=CHEAP, log=lambda m: None)
    mal = audit.findings.filter(audit.findings["check"] == "malformed_record")
    assert sorted(mal["row"].to_list()) == [3, 4, 5, 6, 7, 8, 11, 12]
    fields = dict(zip(mal["row"].to_list(), mal["field"].to_list()))
    assert fields[4] == "chosen" and fields[5] == "rejected" and fields[6] == "prompt" and fields[11] == "rejected"
    details = dict(zip(mal["row"].to_list(), mal["detail"].to_list()))
    assert "invalid UTF-8" in details[3] and "duplicate key 'chosen'" in details[7]
    assert "boolean" in details[5] and "null" in details[6] and "truncated" in details[12]
    assert audit.totals == {"input": 11, "kept": 3, "dropped": 8, "flagged": 0, "malformed": 8}
    # clean holds the kept lines as they were (BOM and CR removed), in order
    clean = (tmp_path / "out" / "clean.jsonl").read_bytes().splitlines()
    assert clean == [_line(_ok(0)), _line(_ok(1)), _line(_ok(10))]
    dropped = [json.loads(x) for x in (tmp_path / "out" / "dropped.jsonl").read_text().splitlines()]
    assert [d["row"] for d in dropped] == [3, 4, 5, 6, 7, 8, 11, 12]
    assert all(d["reasons"] == ["malformed_record"] for d in dropped)
    assert dropped[1]["record"] == {**OK, "chosen": 42}
    assert dropped[0]["record"] is None and "caf" in dropped[0]["raw"]
    scores = audit.scores
    assert scores["row"].to_list() == [0, 1, 3, 4, 5, 6, 7, 8, 10, 11, 12]


def test_missing_columns_everywhere_is_one_clear_error(tmp_path: Path) -> None:
    src = tmp_path / "x.jsonl"
    src.write_text("\n".join(json.dumps({"question": "q", "answer": "a"}) for _ in range(3)) + "\n")
    with pytest.raises(pairaudit.pipeline.InputError, match="--columns"):
        pairaudit.scan(src, out=tmp_path / "out", only=CHEAP, log=lambda m: None)
    assert not (tmp_path / "out" / "report.json").exists()


def _records(n: int = 6) -> list[dict]:
    recs = [{**_ok(i), "source_id": f"s{i}", "score": float(i)} for i in range(n)]
    recs[2]["rejected"] = recs[2]["chosen"]  # identical pair: dropped
    recs[4]["chosen"] = ""                    # empty response: dropped
    return recs


def _check_roundtrip(audit: pairaudit.Audit, recs: list[dict]) -> None:
    assert audit.totals["input"] == len(recs) and audit.totals["dropped"] == 2
    clean = audit.load_clean(row_column=None).to_list()
    assert clean == [r for i, r in enumerate(recs) if i not in (2, 4)]  # schema and extra columns untouched
    assert audit.clean["__pairaudit_row__"] == [i for i in range(len(recs)) if i not in (2, 4)]  # way back
    dropped = audit.dropped.to_list()
    assert [d["row"] for d in dropped] == [2, 4]
    assert dropped[0]["reasons"] == ["identical_pair"] and dropped[0]["record"] == recs[2]


def test_parquet_in_parquet_out(tmp_path: Path) -> None:
    recs = _records()
    pq.write_table(pa.Table.from_pylist(recs), tmp_path / "in.parquet")
    audit = pairaudit.scan(tmp_path / "in.parquet", out=tmp_path / "out", only=CHEAP, log=lambda m: None)
    assert (tmp_path / "out" / "clean.parquet").exists()
    assert pq.read_schema(tmp_path / "out" / "clean.parquet") == pq.read_schema(tmp_path / "in.parquet")
    _check_roundtrip(audit, recs)


def test_parquet_folder_and_json_array(tmp_path: Path) -> None:
    recs = _records()
    (tmp_path / "folder").mkdir()
    pq.write_table(pa.Table.from_pylist(recs[:3]), tmp_path / "folder" / "part-0.parquet")
    pq.write_table(pa.Table.from_pylist(recs[3:]), tmp_path / "folder" / "part-1.parquet")
    _check_roundtrip(pairaudit.scan(tmp_path / "folder", out=tmp_path / "o1", only=CHEAP, log=lambda m: None), recs)
    (tmp_path / "arr.json").write_text(json.dumps(recs))
    audit = pairaudit.scan(tmp_path / "arr.json", out=tmp_path / "o2", only=CHEAP, log=lambda m: None)
    assert json.loads((tmp_path / "o2" / "clean.json").read_text()) == [r for i, r in enumerate(recs) if i not in (2, 4)]
    _check_roundtrip(audit, recs)


def test_save_to_disk_in_and_out(tmp_path: Path) -> None:
    from datasets import Dataset, DatasetDict

    recs = _records()
    DatasetDict({"train": Dataset.from_list(recs)}).save_to_disk(str(tmp_path / "hf"))
    audit = pairaudit.scan(tmp_path / "hf", out=tmp_path / "out", only=CHEAP, log=lambda m: None)
    assert (tmp_path / "out" / "clean" / "dataset_info.json").exists()
    assert audit.report["source"]["kind"] == "hf_disk"
    _check_roundtrip(audit, recs)


def test_hub_id_offline_gives_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(pairaudit.pipeline.InputError, match="save_to_disk"):
        pairaudit.scan("someorg/not-a-local-dataset", out=tmp_path / "out", only=CHEAP, log=lambda m: None)


def test_gzip_jsonl(tmp_path: Path) -> None:
    import gzip

    recs = _records()
    with gzip.open(tmp_path / "in.jsonl.gz", "wt") as fh:
        fh.write("\n".join(json.dumps(r) for r in recs) + "\n")
    _check_roundtrip(pairaudit.scan(tmp_path / "in.jsonl.gz", out=tmp_path / "out", only=CHEAP, log=lambda m: None),
                     recs)


def test_records_at_are_the_scans_records_of_those_rows(tmp_path: Path) -> None:
    """``Source.records_at`` (the report's examples): JSON lines parses only the wanted lines and a Parquet file
    reads whole batches, yet both give exactly the records a full read gives for those rows (a malformed line's
    error record included, blank lines keeping the row numbers), in row order, none past the last wanted."""
    from pairaudit.io.readers import open_source

    lines = [_line(_ok(i)) for i in range(40)]
    lines[7] = b'{"prompt": "cut off'
    lines[12] = b"   "
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_bytes(b"\n".join(lines) + b"\n")
    pq.write_table(pa.Table.from_pylist([_ok(i) for i in range(40)]), tmp_path / "a.parquet")
    for path in (jsonl, tmp_path / "a.parquet"):
        src = open_source(str(path))
        every = {rec.row: rec for batch in src.batches(8) for rec in batch}
        wanted = [33, 7, 3, 12, 21]
        got = list(src.records_at(wanted, batch_size=8))
        assert [r.row for r in got] == sorted(r for r in wanted if r in every)
        assert got == [every[r.row] for r in got]
        if path.suffix == ".jsonl":
            assert [r.row for r in got] == [3, 7, 21, 33] and got[1].data is None and got[1].error

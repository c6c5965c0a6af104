"""Regressions for the red-team findings of issue #9 (items 2 and 6-14; 1 is in test_ray_engine.py,
3-5 in test_out_folder.py): hostile input becomes a finding at its row or a clear exit 2, never a
traceback, and nothing is lost."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl
import pytest
from conftest import CHEAP, write_jsonl
from typer.testing import CliRunner

import pairaudit
from pairaudit.cli import app

OK = [{"prompt": f"What is {i} plus {i}?", "chosen": f"It is {2 * i}.", "rejected": f"It is {2 * i + 1}, I think."}
      for i in range(6)]


def _scan(src: Path, out: Path, **kw):
    return pairaudit.scan(src, out=out, only=kw.pop("only", CHEAP), log=lambda m: None, **kw)


def _cli(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def _findings(out: Path) -> dict[int, set[str]]:
    f = pl.read_parquet(out / "findings.parquet")
    rows: dict[int, set[str]] = {}
    for r, c in zip(f["row"], f["check"]):
        rows.setdefault(r, set()).add(c)
    return rows


# -- 2: terminal escapes --------------------------------------------------------------------------
def test_show_and_errors_never_send_escape_sequences(tmp_path: Path) -> None:
    evil = "\x1b[2J\x1b]0;pwned\x07\u202egnp.exe"
    src = write_jsonl(tmp_path / "p.jsonl", [{"prompt": "hi " + evil, "chosen": "ok " + evil, "rejected": "no"}])
    _scan(src, tmp_path / "out")
    res = _cli("show", tmp_path / "out", 0)
    assert res.exit_code == 0 and "\x1b" not in res.output and "\u202e" not in res.output
    assert "\\x1b[2J" in res.output and "\\u202e" in res.output
    bad = write_jsonl(tmp_path / "k.jsonl", [{"\x1b[31mkey": 1}])
    res = _cli("scan", bad, "--out", tmp_path / "o2", "-q")
    assert res.exit_code == 2 and "\x1b" not in res.output and "\\x1b[31mkey" in res.output


# -- 6: Parquet folders whose files disagree ---------------------------------------------------------
def test_parquet_folder_with_different_schemas_keeps_every_column(tmp_path: Path) -> None:
    folder = tmp_path / "pq"
    folder.mkdir()
    a = pl.DataFrame(OK[:3]).with_columns(pl.lit(1, pl.Int32).alias("score"))
    b = pl.DataFrame([{**OK[3], "chosen": "same", "rejected": "same"}, *OK[4:]]).with_columns(
        pl.lit(2, pl.Int64).alias("score"), pl.lit("b").alias("origin"))
    a.write_parquet(folder / "a.parquet")
    b.write_parquet(folder / "b.parquet")
    audit = _scan(folder, tmp_path / "out")
    clean = pl.read_parquet(tmp_path / "out" / "clean.parquet")
    assert clean.columns == ["prompt", "chosen", "rejected", "score", "origin"] and clean.height == 5
    assert clean["origin"].to_list() == [None, None, None, "b", "b"] and clean["score"].dtype == pl.Int64
    dropped = pl.read_parquet(tmp_path / "out" / "dropped.parquet")
    assert dropped["row"].to_list() == [3] and dropped["record"][0]["origin"] == "b"
    assert audit.totals["kept"] + audit.totals["dropped"] == 6


def test_parquet_folder_with_irreconcilable_types_is_an_error_before_scanning(tmp_path: Path) -> None:
    folder = tmp_path / "pq"
    folder.mkdir()
    pl.DataFrame(OK[:3]).with_columns(pl.lit(1).alias("score")).write_parquet(folder / "a.parquet")
    pl.DataFrame(OK[3:]).with_columns(pl.lit("high").alias("score")).write_parquet(folder / "b.parquet")
    res = _cli("scan", folder, "--out", tmp_path / "out", "-q")
    assert res.exit_code == 2 and "column 'score' is int32" in res.output and "b.parquet" in res.output
    assert not (tmp_path / "out").exists()


# -- 7: empty save_to_disk outputs ------------------------------------------------------------------
@pytest.mark.parametrize("all_dropped", [True, False])
def test_empty_save_to_disk_outputs_load_with_the_input_features(tmp_path: Path, all_dropped: bool) -> None:
    import datasets

    rows = [{**r, "rejected": r["chosen"]} for r in OK] if all_dropped else OK
    ds = datasets.Dataset.from_list([{**r, "id": i} for i, r in enumerate(rows)])
    ds.save_to_disk(str(tmp_path / "ds"))
    _scan(tmp_path / "ds", tmp_path / "out")
    clean = datasets.load_from_disk(str(tmp_path / "out" / "clean"))
    dropped = datasets.load_from_disk(str(tmp_path / "out" / "dropped"))
    assert clean.features == ds.features and dropped.features["record"] == ds.features
    assert (len(clean), len(dropped)) == ((0, 6) if all_dropped else (6, 0))


# -- 8: mixed formats ------------------------------------------------------------------------------
def test_rows_in_another_format_than_the_first_are_read_in_their_own(tmp_path: Path) -> None:
    hh = {"chosen": "\n\nHuman: Hi there\n\nAssistant: Hello! How can I help?",
          "rejected": "\n\nHuman: Hi there\n\nAssistant: Go away."}
    src = write_jsonl(tmp_path / "p.jsonl", [hh, *OK, {"chosen": "a lone answer", "rejected": "another"}])
    audit = _scan(src, tmp_path / "out")
    found = _findings(tmp_path / "out")
    assert all("empty_prompt" not in found.get(r, set()) for r in range(1, 7))  # standard rows keep their prompt
    assert audit.report["source"]["formats"] == {"implicit_hh": 2, "standard": 6}
    assert audit.totals["kept"] + audit.totals["dropped"] == 8


# -- 9, 10: one bad row, not the run ---------------------------------------------------------------------
def test_huge_integer_and_lone_surrogates_are_findings_at_their_rows(tmp_path: Path) -> None:
    lines = [json.dumps(OK[0]), '{"prompt": "p", "chosen": "c", "rejected": "r", "n": ' + "9" * 5000 + "}",
             json.dumps(OK[1]),
             '{"prompt": "Say hi", "chosen": "hi \\udc00 there", "rejected": "bye there friend"}',
             '{"prompt": "Say \\ud800", "chosen": "yo", "rejected": "hey"}']
    src = write_jsonl(tmp_path / "p.jsonl", lines)
    audit = _scan(src, tmp_path / "out")
    found = _findings(tmp_path / "out")
    assert found[1] == {"malformed_record"} and found[3] == {"encoding_error"} and found[4] == {"encoding_error"}
    assert 0 not in found and 2 not in found and audit.exit_code == 0
    raw = (tmp_path / "out" / "dropped.jsonl").read_bytes()
    raw.decode("utf-8")  # valid UTF-8 ...
    back = {json.loads(x)["row"]: json.loads(x) for x in raw.splitlines()}
    assert back[3]["record"]["chosen"] == "hi \udc00 there"  # ... that reads back to the original record


def test_flip_decision_on_a_row_with_a_lone_surrogate(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "p.jsonl", ['{"prompt": "Q", "chosen": "a \\udc00 b", "rejected": "c d e"}'])
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "decisions.jsonl").write_text('{"row": 0, "decision": "flip"}\n')
    audit = _scan(src, tmp_path / "out", flag=["encoding_error"])
    line = (tmp_path / "out" / "clean.jsonl").read_bytes().decode("utf-8")
    assert json.loads(line) == {"prompt": "Q", "chosen": "c d e", "rejected": "a \udc00 b"}
    assert audit.report["decisions"]["flipped"] == [0]


# -- 11: JSON arrays with a hostile item -------------------------------------------------------------
def test_json_array_items_fail_one_by_one(tmp_path: Path) -> None:
    items = [json.dumps(OK[0]), '{"prompt": "p", "chosen": ' + "[" * 10000 + "]" * 10000 + ', "rejected": "r"}',
             '{"prompt": "p", "chosen": "c", "rejected": "r", "n": ' + "1" * 5000 + "}",
             '{"prompt": "p", "chosen": "x \\udc00", "rejected": "r s t"}', json.dumps(OK[1])]
    src = tmp_path / "a.json"
    src.write_text("[\n" + ",\n".join(items) + "\n]\n", encoding="utf-8")
    audit = _scan(src, tmp_path / "out")
    found = _findings(tmp_path / "out")
    assert found[1] == {"malformed_record"} and found[2] == {"malformed_record"} and found[3] == {"encoding_error"}
    clean = json.loads((tmp_path / "out" / "clean.json").read_text(encoding="utf-8"))
    assert clean == [OK[0], OK[1]] and audit.totals["dropped"] == 3


# -- 12: damaged gzip ---------------------------------------------------------------------------------
def test_truncated_gzip_keeps_the_rows_before_the_damage(tmp_path: Path) -> None:
    import random

    rng = random.Random(0)
    recs = [{"prompt": f"q{i} " + "".join(rng.choice("abcdefgh ") for _ in range(300)), "chosen": f"answer {i}",
             "rejected": f"other {i}"} for i in range(400)]
    data = gzip.compress("".join(json.dumps(r) + "\n" for r in recs).encode())
    src = tmp_path / "p.jsonl.gz"
    src.write_bytes(data[: len(data) * 2 // 3])
    res = _cli("scan", src, "--out", tmp_path / "out", "-q", "--only", "identical_pair")
    assert res.exit_code == 2 and "input damaged" in res.output and "truncated" in res.output
    rep = json.loads((tmp_path / "out" / "report.json").read_text())
    t = rep["totals"]
    assert rep["status"] == "incomplete" and 200 < t["input"] < 400 and t["kept"] + t["dropped"] == t["input"]
    plain = tmp_path / "q.jsonl.gz"
    plain.write_text(json.dumps(OK[0]) + "\n")
    res = _cli("scan", plain, "--out", tmp_path / "o2", "-q")
    assert res.exit_code == 2 and "not gzip-compressed" in res.output


# -- 13, 14: errors, not tracebacks ------------------------------------------------------------------
@pytest.mark.parametrize("args, message", [
    (["--set", "near_identical_pair.min_char_ratio=1.5"], "a value in [0, 1]"),
    (["--set", "near_identical_pair.min_char_ratio=NaN"], "a finite number"),
    (["--set", "near_identical_pair.max_token_edits=two"], "a number"),
    (["--set", "near_identical_pair.max_token_edits=2.5"], "a whole number"),
    (["--set", "length_outlier.max_z=-1"], "a value >= 0"),
    (["--fail-on", ">1.2.3"], "is not CHECK>RATE"),
    (["--fail-on", "x>."], "is not CHECK>RATE"),
    (["--fail-on", "identical_pair>150%"], "is not CHECK>RATE"),
    (["--fail-on", "no_such_check>0.1"], "unknown check"),
    (["--fail-on", "duplicate_pair>0.1", "--only", "identical_pair"], "does not run in this scan"),
    (["--columns", "prompt=question"], "columns found: 'chosen', 'prompt', 'rejected'"),
    (["--max-length", "0"], "--max-length 0 would cut every sequence to nothing"),
    (["--tokenizer", "/no/such/tokenizer"], "no such file or folder"),
    (["--embedder", "./no-such-embedder"], "no such file or folder"),
    (["--device", "tpu"], "expected: auto, cpu, cuda"),
    (["--decisions", "/no/such/decisions.jsonl"], "does not exist"),
])
def test_bad_options_are_exit_2_before_the_scan(tmp_path: Path, args: list[str], message: str) -> None:
    src = write_jsonl(tmp_path / "p.jsonl", OK)
    res = _cli("scan", src, "--out", tmp_path / "out", "-q", *args)
    assert res.exit_code == 2, res.output
    assert message in res.output and "Traceback" not in res.output
    assert not (tmp_path / "out" / "report.json").exists()


@pytest.mark.parametrize("body, message", [('max_length = "lots"', "'lots' is not a length"),
                                           ("max_length = 0", "0 would cut every sequence"),
                                           ("batch_size = 1.5", "option batch_size = 1.5"),
                                           ("[checks.length_outlier]\nmax_z = nan", "a finite number")])
def test_bad_config_file_values_are_exit_2(tmp_path: Path, body: str, message: str) -> None:
    src = write_jsonl(tmp_path / "p.jsonl", OK)
    (tmp_path / "c.toml").write_text(body + "\n")
    res = _cli("scan", src, "--out", tmp_path / "out", "-q", "--config", tmp_path / "c.toml")
    assert res.exit_code == 2 and message in res.output, res.output

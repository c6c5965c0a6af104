"""Outputs follow the output contract (docs/contract.md), are byte-identical across runs and written atomically."""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest
from conftest import CHEAP, EXAMPLE, output_files

import pairaudit
from pairaudit.outputs import records as writers


def _scan(out: Path, **kw):
    return pairaudit.scan(EXAMPLE, out=out, only=CHEAP, log=lambda m: None, **kw)


def test_contract_columns_and_totals(tmp_path: Path) -> None:
    audit = _scan(tmp_path / "out")
    out = tmp_path / "out"
    f = pl.read_parquet(out / "findings.parquet")
    assert f.schema == pl.Schema({"row": pl.Int64, "check": pl.String, "action": pl.String, "field": pl.String,
                                  "score": pl.Float64, "group": pl.Int64, "detail": pl.String})
    assert set(f["action"].unique()) <= {"drop", "flag"}
    s = pl.read_parquet(out / "scores.parquet")
    assert s["row"].to_list() == list(range(500))  # one row per input record, in order
    assert {"pair_hash", "prompt_tokens", "chosen_tokens", "rejected_tokens", "near_identical_pair_score",
            "length_outlier_score"} <= set(s.columns)
    rep = json.loads((out / "report.json").read_text())
    t = rep["totals"]
    assert t["input"] == 500 and t["kept"] + t["dropped"] == 500 == audit.clean.num_rows + t["dropped"]
    assert rep["checks"]["identical_pair"]["action"] == "drop" and rep["status"] == "ok"
    assert rep["models"]["tokenizer"]["sha256"] and rep["versions"]["transformers"]
    assert (out / "report.html").read_text().startswith("<!")
    # every dropped row has its reasons, every drop finding is in dropped
    dropped = {json.loads(x)["row"]: json.loads(x)["reasons"] for x in (out / "dropped.jsonl").read_text().splitlines()}
    drop_rows = set(f.filter(pl.col("action") == "drop")["row"].to_list())
    assert set(dropped) == drop_rows


def test_two_runs_are_byte_identical(tmp_path: Path) -> None:
    _scan(tmp_path / "a")
    _scan(tmp_path / "b")
    a, b = output_files(tmp_path / "a"), output_files(tmp_path / "b")
    assert sorted(a) == sorted(b) and "report.json" in a
    for name in a:
        if name != "timings.json":
            assert a[name] == b[name], name


def test_interrupted_run_leaves_previous_outputs_untouched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    _scan(out)
    before = output_files(out)
    real = writers.write_outputs

    def interrupted(source, tmp_dir, *a, **k):
        real(source, tmp_dir, *a, **k)  # the clean/dropped files exist in the temp folder...
        raise KeyboardInterrupt        # ...when the user hits Ctrl-C

    monkeypatch.setattr("pairaudit.pipeline.write_outputs", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _scan(out, max_length=64)
    assert output_files(out) == before  # no partial file
    assert [p.name for p in (out / ".pairaudit").glob("gen-*")] == [os.readlink(out / ".pairaudit" / "current")]


def test_a_failing_check_does_not_look_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pairaudit.checks.identical import NearIdenticalPair

    def broken(self, pair, enc, out):
        if pair.row == 7:
            raise ValueError("boom")
        return None

    monkeypatch.setattr(NearIdenticalPair, "check", broken)
    audit = _scan(tmp_path / "out")
    assert audit.exit_code == 4 and audit.report["status"] == "incomplete"
    assert audit.report["checks"]["near_identical_pair"]["status"] == "failed"
    assert "row 7: ValueError: boom" in audit.report["checks"]["near_identical_pair"]["reason"]
    assert audit.totals["kept"] + audit.totals["dropped"] == 500  # the run still finished


def test_flip_option_swaps_kept_rows(tmp_path: Path) -> None:
    from conftest import write_jsonl

    base = "The capital of France is Paris, a city of about two million people on the Seine river"
    recs = [{"prompt": "Capital?", "chosen": base + ".", "rejected": base + "!", "id": 1},
            {"prompt": "Colour?", "chosen": "Blue is a colour.", "rejected": "Nothing at all here.", "id": 2}]
    src = write_jsonl(tmp_path / "p.jsonl", recs)
    audit = pairaudit.scan(src, out=tmp_path / "out", only=CHEAP, flip=["near_identical_pair"], log=lambda m: None)
    clean = [json.loads(x) for x in (tmp_path / "out" / "clean.jsonl").read_text().splitlines()]
    assert clean[0] == {**recs[0], "chosen": recs[0]["rejected"], "rejected": recs[0]["chosen"]}
    assert clean[1] == recs[1]
    assert audit.report["decisions"]["flipped"] == [0]
    assert audit.findings.filter(pl.col("check") == "near_identical_pair")["action"].to_list() == ["flag"]

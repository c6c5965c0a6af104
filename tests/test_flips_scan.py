"""likely_flipped through `pairaudit scan`: on by default with the cheap signal, "at chance" said the same
way in the terminal, report.json and report.html, and the real default models end to end."""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl
import pytest
from conftest import EXAMPLE, write_jsonl
from typer.testing import CliRunner

from pairaudit.cli import app

pytest.importorskip("sklearn")
pytest.importorskip("model2vec")
runner = CliRunner()


def _records(n: int) -> list[dict]:
    return [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()[:n]]


def test_random_labels_say_at_chance_everywhere_and_flag_nothing(tmp_path: Path) -> None:
    rng = random.Random(0)
    recs = _records(500)
    for r in recs:  # labels made random: each pair swapped with probability 1/2
        if rng.random() < 0.5:
            r["chosen"], r["rejected"] = r["rejected"], r["chosen"]
    src = write_jsonl(tmp_path / "random.jsonl", recs)
    out = tmp_path / "out"
    res = runner.invoke(app, ["scan", str(src), "--out", str(out), "--only", "likely_flipped"])
    assert res.exit_code == 0, res.output
    st = json.loads((out / "report.json").read_text())["stats"]["likely_flipped"]
    assert st["status"] == "at_chance", st
    assert st["rows_per_signal"]["embedding"] == 500 and st["rows_per_signal"]["reference"] == 0
    assert st["estimated_flip_rate"] is None and st["flagged"] == 0
    findings = pl.read_parquet(out / "findings.parquet")
    assert findings.filter(pl.col("check") == "likely_flipped").height == 0
    sentence = st["verdict"]
    assert sentence.startswith("labels at chance")
    html = (out / "report.html").read_text()
    assert "labels at chance" in html and "mean likely_flipped_score" not in html
    assert "labels at chance" in " ".join(res.output.split())
    scores = pl.read_parquet(out / "scores.parquet")
    assert scores["likely_flipped_score"].is_not_null().sum() == 500


def test_default_scan_runs_the_cheap_signal(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = runner.invoke(app, ["scan", str(EXAMPLE), "--out", str(out), "--skip", "near_duplicate_pair"])
    assert res.exit_code == 0, res.output
    rep = json.loads((out / "report.json").read_text())
    assert rep["checks"]["likely_flipped"]["status"] == "ran"
    st = rep["stats"]["likely_flipped"]
    assert st["status"] in ("informative", "at_chance") and st["rows_per_signal"]["length"] >= 490
    assert "CUDA" in st["reference"]["rows"] or st["rows_per_signal"]["reference"] > 0
    assert "label evidence (likely_flipped)" in " ".join(res.output.split())


def test_real_default_models_end_to_end(tmp_path: Path) -> None:
    """The bundled SmolLM2 reference (GGUF) and the bundled MiniLM-derived static embedder, on real rows."""
    pytest.importorskip("torch")
    src = write_jsonl(tmp_path / "hh60.jsonl", _records(60))
    out = tmp_path / "out"
    args = ["scan", str(src), "--out", str(out), "--only", "likely_flipped", "--reference", "default",
            "--device", "cpu", "--set", "likely_flipped.min_rows=40"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    rep = json.loads((out / "report.json").read_text())
    st = rep["stats"]["likely_flipped"]
    assert st["rows_per_signal"]["reference"] == 60 and st["rows_per_signal"]["probe"] == 60, st
    assert st["status"] in ("informative", "at_chance") and st["verdict"]
    assert "SmolLM2" in json.dumps(rep["models"]["reference"])
    scores = pl.read_parquet(out / "scores.parquet")
    assert scores["ref_logp_chosen"].is_not_null().all() and (scores["ref_logp_chosen"] < 0).all()
    assert scores["flip_probe_logodds"].is_not_null().all()
    timings = json.loads((out / "timings.json").read_text())
    assert any(k.startswith("flips:reference:forward") for k in json.dumps(timings).split('"'))
    # a rerun computes nothing (cached by token ids) and writes byte-identical results
    again = tmp_path / "again"
    assert runner.invoke(app, [*args[:3], str(again), *args[4:]]).exit_code == 0
    assert (again / "scores.parquet").read_bytes() == (out / "scores.parquet").read_bytes()

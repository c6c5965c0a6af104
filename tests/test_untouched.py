"""Issue 23: what a scan or a trace writes stays inside --out and obeys the output folder's rules.

- A ``save_to_disk`` source folder is never written to (``Dataset.map`` puts its cache file next to the
  source's own files unless told otherwise: flipped rows and ``--explicit-prompt`` did that).
- ``trace`` writes ``trace.json`` / ``trace-drop.jsonl`` as outputs of the folder (a generation switched
  at once, recorded in the manifest): a user's file at that name, or a link leading out, stops it.
- ``datasets`` cache files (``cache-*.arrow``) written into the committed ``clean/`` by ``.map()`` on the
  loaded data (DPOTrainer does this on ``audit.clean``) are its derived data, not the user's: the next scan
  does not count them as a change and removes them with the old generation.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import datasets
import pytest
from typer.testing import CliRunner

import pairaudit
from pairaudit.cli import app

HH = [{"chosen": f"\n\nHuman: Question {i}?\n\nAssistant: A careful answer number {i}.",
       "rejected": f"\n\nHuman: Question {i}?\n\nAssistant: " + ("A careful answer number 0." if i == 0 else "no")}
      for i in range(8)]
STATE = {"global_step": 6, "max_steps": 10, "train_batch_size": 2, "logging_steps": 1, "num_train_epochs": 1,
         "log_history": [{"step": 1, "loss": 1.0, "grad_norm": 1.0}, {"step": 2, "loss": 1.1, "grad_norm": 1.2},
                         {"step": 3, "loss": float("nan"), "grad_norm": float("nan")}]}
ARGS = {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 1, "seed": 42, "max_steps": 10,
        "logging_steps": 1, "world_size": 1, "data_seed": 42}


def _tree(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _scan(src: Path, out: Path, *extra: str):
    return CliRunner().invoke(app, ["scan", str(src), "--out", str(out), "-q", "--only", "identical_pair", *extra])


@pytest.mark.parametrize("how", ["flip decision", "explicit prompt", "both, two splits"])
def test_a_save_to_disk_source_is_never_written_to(tmp_path: Path, how: str) -> None:
    ds = datasets.Dataset.from_list(HH)
    src = tmp_path / "src"
    (datasets.DatasetDict({"train": ds, "test": datasets.Dataset.from_list(HH[4:])}) if "two" in how else ds
     ).save_to_disk(str(src))
    before = _tree(src)
    dec = tmp_path / "dec.jsonl"
    dec.write_text(json.dumps({"row": 2, "decision": "flip"}) + "\n")
    extra = {"flip decision": ["--decisions", str(dec)], "explicit prompt": ["--explicit-prompt"],
             "both, two splits": ["--decisions", str(dec), "--explicit-prompt", "--split", "all"]}[how]
    res = _scan(src, tmp_path / "out", *extra)
    assert res.exit_code == 0, (res.output, res.exception)
    assert _tree(src) == before
    gen = (tmp_path / "out" / ".pairaudit" / "current").resolve()
    assert not [p for p in gen.rglob("*") if "map-cache" in str(p) or p.name.startswith("cache-")]
    clean = datasets.load_from_disk(str(tmp_path / "out" / "clean"))
    part = clean["train"] if "two" in how else clean
    if "prompt" in how:
        assert part[0]["prompt"] == "\n\nHuman: Question 1?\n\nAssistant:"
    if "flip" in how:
        assert part[1]["chosen"].endswith("no")  # row 2, flipped (row 0 was dropped)


def test_datasets_cache_files_in_the_clean_folder_do_not_stop_the_next_scan(tmp_path: Path) -> None:
    src = tmp_path / "src"
    datasets.Dataset.from_list(HH).save_to_disk(str(src))
    out = tmp_path / "out"
    audit = pairaudit.scan(src, out, only=["identical_pair"])
    mapped = audit.clean.map(lambda r: {"n": len(r["chosen"])})  # what DPOTrainer does with audit.clean
    datasets.load_from_disk(str(out / "clean")).filter(lambda r: len(r["chosen"]) > 40)
    old = (out / ".pairaudit" / "current").resolve()
    caches = sorted(p.name for p in (old / "clean").glob("cache-*.arrow"))
    assert caches, "datasets wrote no cache file: this test no longer tests anything"
    assert len(mapped) == 7
    res = _scan(src, out, "--max-length", "64")
    assert res.exit_code == 0, res.output
    assert not old.exists()  # removed with the old generation, as its own files are
    # a file of the user's in the generation is still a change
    (out / ".pairaudit" / "current").resolve().joinpath("clean", "notes.txt").write_text("mine")
    res = _scan(src, out)
    assert res.exit_code == 2 and "clean" in res.output and "changed" in res.output, res.output


# ------------------------------------------------------------------------------------------- trace
@pytest.fixture
def traced(tmp_path: Path) -> dict[str, Path]:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in HH * 5))
    run = tmp_path / "run"
    run.mkdir()
    (run / "trainer_state.json").write_text(json.dumps(STATE))
    (run / "training_args.json").write_text(json.dumps(ARGS))
    out = tmp_path / "audit"
    assert _scan(data, out).exit_code == 0
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.json").write_text("{}\n")
    return {"data": data, "run": run, "out": out, "victim": victim}


def _trace(t: dict[str, Path]):
    return CliRunner().invoke(app, ["trace", str(t["run"]), "--data", str(t["data"]), "--audit", str(t["out"]), "-q"])


def test_trace_json_is_an_output_of_the_folder(traced: dict[str, Path]) -> None:
    res = _trace(traced)
    assert res.exit_code in (0, 6), (res.output, res.exception)
    link = traced["out"] / "trace.json"
    assert link.is_symlink() and os.readlink(link) == ".pairaudit/current/trace.json"
    assert json.loads(link.read_text())["run_dir"] == str(traced["run"])
    manifest = json.loads((traced["out"] / ".pairaudit" / "manifest.json").read_text())
    assert "trace.json" in manifest["files"] and "trace.json" in manifest["names"]
    assert (traced["out"] / "findings.parquet").is_file() and (traced["out"] / "report.html").is_file()
    assert _trace(traced).exit_code in (0, 6)  # its own file: replaced
    link.resolve().write_text("edited\n")  # edited through the link: a scan now stops, naming it
    res = _scan(traced["data"], traced["out"])
    assert res.exit_code == 2 and "trace.json" in res.output, res.output


@pytest.mark.parametrize("plant", ["user file", "link outside"])
def test_trace_never_replaces_what_it_did_not_write(traced: dict[str, Path], plant: str) -> None:
    target = traced["out"] / "trace.json"
    if plant == "user file":
        target.write_text('{"mine": true}\n')
    else:
        os.symlink(traced["victim"] / "precious.json", target)
    before, victim = _tree(traced["out"]), _tree(traced["victim"])
    res = _trace(traced)
    assert res.exit_code == 2, (res.output, res.exception)
    assert "trace.json" in res.output and "did not write" in res.output, res.output
    assert _tree(traced["out"]) == before and _tree(traced["victim"]) == victim

"""Issue 23: nothing outside --out, nor a user's file at an output name, is ever removed or replaced;
a refused scan leaves nothing behind (exit 2 naming what is in the way)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import write_jsonl
from typer.testing import CliRunner

from pairaudit.cli import app

ROWS = [{"prompt": f"Question {i}?", "chosen": f"A careful answer number {i}.", "rejected": "no"} for i in range(6)]


def _scan(src: Path, out: Path, *extra: str):
    return CliRunner().invoke(app, ["scan", str(src), "--out", str(out), "-q", "--only", "identical_pair", *extra])


def _tree(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    (tmp_path / "data").mkdir()
    src = write_jsonl(tmp_path / "data" / "pairs.jsonl", ROWS)
    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "precious.txt").write_text("do not delete\n")
    (victim / "sub" / "clean.jsonl").write_text("mine\n")
    return src, tmp_path / "out", victim


@pytest.mark.parametrize("how", ["absolute", "relative"])
def test_a_current_link_pointing_outside_out_never_removes_its_target(setup, how: str) -> None:
    src, out, victim = setup
    assert _scan(src, out).exit_code == 0
    current = out / ".pairaudit" / "current"
    current.unlink()
    os.symlink(str(victim) if how == "absolute" else "../../victim", current)
    before = _tree(victim)
    res = _scan(src, out, "--max-length", "64")
    assert res.exit_code == 2, res.output
    assert ".pairaudit/current" in res.output and "fix:" in res.output
    assert _tree(victim) == before


def test_a_meta_folder_that_is_a_link_is_refused(setup) -> None:
    src, out, victim = setup
    out.mkdir()
    (victim / "gen-old").mkdir()
    os.symlink(victim, out / ".pairaudit")
    before = _tree(victim)
    res = _scan(src, out)
    assert res.exit_code == 2, res.output
    assert ".pairaudit" in res.output
    assert _tree(victim) == before and (victim / "gen-old").is_dir() and not (victim / "lock").exists()


def test_a_stray_generation_link_pointing_outside_is_left_alone(setup) -> None:
    src, out, victim = setup
    assert _scan(src, out).exit_code == 0
    os.symlink(victim, out / ".pairaudit" / "gen-evil")
    before = _tree(victim)
    assert _scan(src, out, "--max-length", "64").exit_code == 0
    assert _tree(victim) == before


@pytest.mark.parametrize("tmpname", ["manifest.json.tmp", "current.tmp", "link-report.json.tmp"])
def test_temp_names_in_the_meta_folder_are_never_written_through(setup, tmpname: str) -> None:
    src, out, victim = setup
    assert _scan(src, out).exit_code == 0
    os.symlink(victim / "precious.txt", out / ".pairaudit" / tmpname)
    assert _scan(src, out, "--max-length", "64").exit_code == 0
    assert (victim / "precious.txt").read_text() == "do not delete\n"


def test_an_output_replaced_by_a_user_file_is_left_alone(setup) -> None:
    src, out, _ = setup
    assert _scan(src, out).exit_code == 0
    text = (out / "clean.jsonl").read_text()
    (out / "clean.jsonl").unlink()  # an editor that saves by writing a new file
    (out / "clean.jsonl").write_text(text + '{"prompt": "mine"}\n')
    res = _scan(src, out, "--max-length", "64")
    assert res.exit_code == 2, res.output
    assert "clean.jsonl" in res.output and "fix:" in res.output
    assert (out / "clean.jsonl").read_text().endswith('{"prompt": "mine"}\n')
    assert not (out / "clean.jsonl").is_symlink()


def test_an_output_edited_through_its_link_is_left_alone(setup) -> None:
    src, out, _ = setup
    assert _scan(src, out).exit_code == 0
    with open(out / "clean.jsonl", "a") as fh:  # edits the file in the committed generation
        fh.write('{"prompt": "mine"}\n')
    res = _scan(src, out, "--max-length", "64")
    assert res.exit_code == 2, res.output
    assert "clean.jsonl" in res.output and "changed" in res.output
    assert (out / "clean.jsonl").read_text().endswith('{"prompt": "mine"}\n')


def test_an_hf_output_link_turned_into_a_real_folder_is_left_alone(tmp_path: Path) -> None:
    from datasets import Dataset

    src = tmp_path / "ds"
    Dataset.from_list(ROWS).save_to_disk(str(src))
    out = tmp_path / "out"
    assert _scan(src, out).exit_code == 0
    real = tmp_path / "copy"
    shutil.copytree(out / "clean", real)
    (out / "clean").unlink()
    shutil.move(str(real), out / "clean")
    (out / "clean" / "my-notes.txt").write_text("mine\n")
    res = _scan(src, out, "--max-length", "64")
    assert res.exit_code == 2, res.output
    assert "clean" in res.output
    assert (out / "clean" / "my-notes.txt").read_text() == "mine\n"


def test_a_refused_scan_leaves_no_lock_or_meta_folder(setup) -> None:
    src, out, _ = setup
    out.mkdir()
    (out / "report.json").write_text("my own report\n")
    res = _scan(src, out)
    assert res.exit_code == 2, res.output
    assert sorted(p.name for p in out.iterdir()) == ["report.json"]


def test_rescans_still_replace_their_own_outputs(setup) -> None:
    src, out, _ = setup
    for n in range(3):
        res = _scan(src, out, "--max-length", str(64 + n))
        assert res.exit_code == 0, res.output
    gens = [p.name for p in (out / ".pairaudit").iterdir() if p.name.startswith("gen-")]
    assert len(gens) == 1 and os.readlink(out / ".pairaudit" / "current") == gens[0]
    assert '"max_length": 66' in (out / "report.json").read_text()


def test_report_html_link_pointing_outside_is_never_replaced(setup) -> None:
    src, out, victim = setup
    assert _scan(src, out).exit_code == 0
    (out / "report.html").unlink()
    os.symlink(victim / "precious.txt", out / "report.html")
    res = CliRunner().invoke(app, ["report", str(out)])
    assert res.exit_code == 2, res.output
    assert (victim / "precious.txt").read_text() == "do not delete\n"

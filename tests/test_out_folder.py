"""The output folder (issue #9 items 3-5): never inside or around the source, never a file pairaudit did
not write replaced or deleted, and every output switched at once."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import CHEAP, output_files, write_jsonl
from typer.testing import CliRunner

import pairaudit
from pairaudit.cli import app
from pairaudit.errors import ConfigError
from pairaudit.outputs.folder import OutputDir

ROWS = [{"prompt": f"Question {i}?", "chosen": f"A careful answer number {i}.", "rejected": "no"} for i in range(12)]


def _scan(src: Path, out: Path, **kw):
    return pairaudit.scan(src, out=out, only=CHEAP, log=lambda m: None, **kw)


@pytest.fixture
def src(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    return write_jsonl(tmp_path / "data" / "pairs.jsonl", ROWS)


@pytest.mark.parametrize("where", ["source folder", "same path", "inside parquet folder", "parquet folder"])
def test_out_may_not_be_contain_or_sit_inside_the_source(tmp_path: Path, src: Path, where: str) -> None:
    import polars as pl

    pq = tmp_path / "pq"
    pq.mkdir()
    pl.DataFrame(ROWS).write_parquet(pq / "part-0.parquet")
    source, out = {"source folder": (src, src.parent), "same path": (src, src),
                   "inside parquet folder": (pq, pq / "audit"), "parquet folder": (pq, pq)}[where]
    before = sorted(p.name for p in source.parent.rglob("*"))
    res = CliRunner().invoke(app, ["scan", str(source), "--out", str(out), "--only", "identical_pair", "-q"])
    assert res.exit_code == 2, res.output
    assert "--out" in res.output and "source" in res.output and "fix:" in res.output
    assert sorted(p.name for p in source.parent.rglob("*")) == before  # nothing written


def test_files_pairaudit_did_not_write_are_never_touched(tmp_path: Path, src: Path) -> None:
    out = tmp_path / "out"
    (out / "clean").mkdir(parents=True)
    mine = {"clean.py": b"print('mine')\n", "dropped.notes.md": b"# notes\n", "clean/important.txt": b"keep\n"}
    for name, data in mine.items():
        (out / name).write_bytes(data)
    _scan(src, out)
    _scan(src, out, max_length=8)  # a second run replaces only its own outputs
    assert {n: (out / n).read_bytes() for n in mine} == mine
    assert json.loads((out / "report.json").read_text())["config"]["max_length"] == 8


def test_a_foreign_file_in_the_way_is_an_error_before_the_scan(tmp_path: Path, src: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text("my own report\n")
    with pytest.raises(ConfigError, match="report.json, which pairaudit did not write"):
        _scan(src, out)
    assert (out / "report.json").read_text() == "my own report\n"
    assert not (out / "clean.jsonl").exists()


def test_out_that_is_a_file_or_read_only_is_a_clear_error(tmp_path: Path, src: Path) -> None:
    f = tmp_path / "afile"
    f.write_text("x")
    res = CliRunner().invoke(app, ["scan", str(src), "--out", str(f), "-q", "--only", "identical_pair"])
    assert res.exit_code == 2 and "is an existing file" in res.output
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        res = CliRunner().invoke(app, ["scan", str(src), "--out", str(ro / "o"), "-q", "--only", "identical_pair"])
        assert res.exit_code == 2 and "cannot write" in res.output


def test_outputs_switch_as_one_even_when_commit_dies_midway(tmp_path: Path, src: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    _scan(src, out)
    before = output_files(out)
    real_symlink = os.symlink

    def die_before_switch(target, link, *a, **k):
        if str(link).endswith(".current"):
            raise KeyboardInterrupt  # every new file and link exists; the switch has not happened
        return real_symlink(target, link, *a, **k)

    monkeypatch.setattr(os, "symlink", die_before_switch)
    with pytest.raises(KeyboardInterrupt) as exc:
        _scan(src, out, max_length=8)
    assert exc.value.outputs_committed is False
    monkeypatch.setattr(os, "symlink", real_symlink)
    assert output_files(out) == before  # the old report.json goes with the old clean.jsonl
    # a run killed hard leaves its generation folder behind: the next run removes it
    stray = out / ".pairaudit" / "gen-killed"
    stray.mkdir()
    _scan(src, out, max_length=8)
    assert not stray.exists() and len(list((out / ".pairaudit").glob("gen-*"))) == 1


@pytest.mark.parametrize("when", ["before", "after"])
def test_interrupt_message_says_whether_outputs_changed(tmp_path: Path, src: Path, when: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    _scan(src, out)
    real = OutputDir.commit

    def commit(self):
        if when == "after":
            real(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(OutputDir, "commit", commit)
    res = CliRunner().invoke(app, ["scan", str(src), "--out", str(out), "-q", "--only", "identical_pair"])
    assert res.exit_code == 130
    expected = "no outputs were changed" if when == "before" else "after the new outputs were committed"
    assert expected in res.output


def test_two_runs_on_one_folder_at_once_are_refused(tmp_path: Path, src: Path) -> None:
    out = tmp_path / "out"
    first = OutputDir(out)  # holds the lock like a running scan
    try:
        with pytest.raises(ConfigError, match="another pairaudit run"):
            _scan(src, out)
    finally:
        first.abort()
    _scan(src, out)  # released

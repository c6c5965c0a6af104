"""Issue 23: the last inputs that gave a traceback. Each is exit 2 naming what was found and the fix, or is
handled: an IterableDataset whose rows change type mid-stream, splits whose column types differ
(`--split all`), `audit.clean` when every row of a DataFrame was dropped, output paths holding glob
characters, and an OSError while writing (a real file-size limit, RLIMIT_FSIZE): the output folder stays
at its previous generation, byte for byte, with no partial file left."""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
from pathlib import Path

import datasets
import pandas as pd
import polars as pl
import pytest
from conftest import ROOT, write_jsonl
from typer.testing import CliRunner

import pairaudit
from pairaudit.cli import app
from pairaudit.errors import PairauditError

ONLY = ["identical_pair"]


def _rows(n: int, same: set[int] = frozenset(), **extra: object) -> list[dict[str, object]]:
    return [{"prompt": f"Question {i}?", "chosen": f"Answer {i}.", "rejected": f"Answer {i}." if i in same else "no",
             **{k: (v(i) if callable(v) else v) for k, v in extra.items()}} for i in range(n)]


def _tree(d: Path) -> dict[str, bytes | str]:
    """Every entry under ``d``: file bytes, or where a link leads."""
    out: dict[str, bytes | str] = {}
    for root, dirs, files in os.walk(d):
        for name in dirs + files:
            p = Path(root) / name
            out[str(p.relative_to(d))] = f"-> {os.readlink(p)}" if p.is_symlink() else \
                (p.read_bytes() if p.is_file() else "dir")
    return out


# ------------------------------------------------------------------------- IterableDataset, mid-stream
@pytest.mark.parametrize("at", [3, 20, 45])
def test_an_iterable_dataset_whose_rows_change_type_is_exit_2_naming_the_row(tmp_path: Path, at: int) -> None:
    def gen():
        yield from _rows(50, x=lambda i: i if i < at else f"s{i}")

    stream = datasets.IterableDataset.from_generator(gen)
    with pytest.raises(PairauditError) as err:
        pairaudit.scan(stream, tmp_path / "out", only=ONLY, batch_size=16)
    msg = str(err.value)
    assert err.value.exit_code == 2 and f"row {at}" in msg and "'x'" in msg and "fix:" in msg, msg
    assert "cast" in msg
    assert not (tmp_path / "out" / "report.json").exists()


def test_an_iterable_dataset_with_features_scans(tmp_path: Path) -> None:
    def gen():
        yield from _rows(30, same={4}, x=lambda i: str(i))

    feats = datasets.Features({k: datasets.Value("string") for k in ("prompt", "chosen", "rejected", "x")})
    audit = pairaudit.scan(datasets.IterableDataset.from_generator(gen, features=feats), tmp_path / "o",
                           only=ONLY, batch_size=8)
    assert audit.totals == {**audit.totals, "input": 30, "kept": 29, "dropped": 1}


# -------------------------------------------------------------------------- splits with other types
def _two_splits(tmp_path: Path, test_x: object) -> Path:
    train = datasets.Dataset.from_list(_rows(6, same={1}, x=lambda i: i))
    test = datasets.Dataset.from_list([{**r, "prompt": "T" + str(r["prompt"])}
                                       for r in _rows(5, same={2}, x=test_x)])
    datasets.DatasetDict({"train": train, "test": test}).save_to_disk(str(tmp_path / "dd"))
    return tmp_path / "dd"


def test_splits_whose_types_can_be_joined_keep_every_dropped_record(tmp_path: Path) -> None:
    dd = _two_splits(tmp_path, lambda i: i + 0.5)  # int64 in train, float64 in test
    res = CliRunner().invoke(app, ["scan", str(dd), "--split", "all", "--out", str(tmp_path / "o"), "-q",
                                   "--only", "identical_pair"])
    assert res.exit_code == 0, (res.output, res.exception)
    dropped = datasets.load_from_disk(str(tmp_path / "o" / "dropped"))
    assert [(d["split"], d["split_row"], d["record"]["x"]) for d in dropped] == [("train", 1, 1.0), ("test", 2, 2.5)]
    clean = datasets.load_from_disk(str(tmp_path / "o" / "clean"))
    assert len(clean["train"]) == 5 and len(clean["test"]) == 4


def test_splits_whose_types_clash_are_refused_before_the_scan(tmp_path: Path) -> None:
    dd = _two_splits(tmp_path, lambda i: f"s{i}")  # int64 in train, string in test
    res = CliRunner().invoke(app, ["scan", str(dd), "--split", "all", "--out", str(tmp_path / "o"), "-q",
                                   "--only", "identical_pair"])
    assert res.exit_code == 2 and res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert "'x'" in res.output and "train" in res.output and "test" in res.output and "fix:" in res.output
    assert "--split train" in res.output and not (tmp_path / "o").exists(), res.output


# --------------------------------------------------------------------- audit.clean when all is dropped
@pytest.mark.parametrize("kind", ["polars", "pandas", "jsonl", "json", "dataset"])
def test_audit_clean_when_every_row_was_dropped(tmp_path: Path, kind: str) -> None:
    rows = _rows(3, same={0, 1, 2})
    source: object = {"polars": lambda: pl.DataFrame(rows), "pandas": lambda: pd.DataFrame(rows),
                      "jsonl": lambda: write_jsonl(tmp_path / "p.jsonl", rows),
                      "json": lambda: (tmp_path / "p.json").write_text(json.dumps(rows)) and tmp_path / "p.json",
                      "dataset": lambda: datasets.Dataset.from_list(rows)}[kind]()
    audit = pairaudit.scan(source, tmp_path / "out", only=ONLY)
    assert audit.totals["kept"] == 0 and audit.totals["dropped"] == 3
    clean = audit.clean
    assert len(clean) == 0 and "__pairaudit_row__" in clean.column_names
    if kind in ("polars", "pandas", "dataset"):  # the schema is known: the columns are there
        assert {"prompt", "chosen", "rejected"} <= set(clean.column_names), clean.column_names
    assert len(audit.dropped) == 3 and audit.kept_rows.tolist() == []


# --------------------------------------------------------------------------- glob characters in paths
@pytest.mark.parametrize("name", ["out[1]", "out*", "o?t", "{a,b}"])
def test_an_out_path_with_glob_characters(tmp_path: Path, name: str) -> None:
    src = write_jsonl(tmp_path / f"src{name}.jsonl", _rows(4, same={2}))
    audit = pairaudit.scan(src, tmp_path / name, only=ONLY)
    assert audit.totals["dropped"] == 1 and len(audit.clean) == 3 and audit.scores.height == 4
    res = CliRunner().invoke(app, ["show", str(tmp_path / name), "2"])
    assert res.exit_code == 0 and "identical_pair" in res.output, res.output


# --------------------------------------------------------------------------------- OSError while writing
SCAN = "import sys; from pairaudit.cli import app; sys.argv[0] = 'pairaudit'; app()"


def _limited(limit: int | None, *argv: str) -> subprocess.CompletedProcess:
    """The CLI in a process that may write no file larger than ``limit`` bytes (RLIMIT_FSIZE: a write past
    it fails with EFBIG, as a full disk fails with ENOSPC)."""
    def pre() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", SCAN, *argv], capture_output=True, text=True, env=env,
                          preexec_fn=pre, timeout=600)


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_a_write_that_fails_leaves_the_previous_generation(tmp_path: Path, kind: str) -> None:
    # ~20 KB a row that no compression shrinks much (clean.parquet is compressed too)
    rows = _rows(40, same={3}, body=lambda i: f"{random.Random(i).getrandbits(80_000):x}")
    if kind == "jsonl":
        src = write_jsonl(tmp_path / "p.jsonl", rows)
    else:
        src = tmp_path / "p.parquet"
        pl.DataFrame(rows).write_parquet(src, compression="uncompressed")
    out = tmp_path / "out"
    first = _limited(None, "scan", str(src), "--out", str(out), "-q", "--only", "identical_pair")
    assert first.returncode == 0, first.stderr
    before = _tree(out)
    res = _limited(300_000, "scan", str(src), "--out", str(out), "-q", "--only", "identical_pair",
                   "--max-length", "77")
    assert res.returncode == 2, (res.returncode, res.stderr[-3000:])
    assert "Traceback" not in res.stderr and "File too large" in res.stderr, res.stderr[-3000:]
    assert "nothing in --out" in res.stderr and "fix:" in res.stderr, res.stderr
    assert _tree(out) == before  # the previous outputs, byte for byte; no partial file, no new generation
    again = _limited(None, "scan", str(src), "--out", str(out), "-q", "--only", "identical_pair")
    assert again.returncode == 0, again.stderr  # and the folder is still a good output folder


def test_an_oserror_while_writing_from_the_python_api(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "p.jsonl", _rows(30, body=lambda i: "text " * 4000))
    out = tmp_path / "out"
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, hard))
    try:
        with pytest.raises(PairauditError) as err:
            pairaudit.scan(src, out, only=ONLY)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert err.value.exit_code == 2 and "File too large" in str(err.value)
    assert sorted(p.name for p in (out / ".pairaudit").iterdir()) == [] if (out / ".pairaudit").exists() else True
    assert not out.exists() or not any(out.iterdir()), list(out.rglob("*"))


@pytest.mark.parametrize("limit", [600, 1_800, 20_000])
@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_a_small_file_size_limit_fails_cleanly_at_every_write(tmp_path: Path, kind: str, limit: int) -> None:
    """Found by scripts/fuzz_edges.py: polars reports a failed parquet write as a ComputeError ("underlying IO
    error: File too large (os error 27)"), not an OSError; it must end the same way (exit 2, --out as it was)."""
    rows = _rows(30, same={3}, body=lambda i: f"{random.Random(i).getrandbits(40_000):x}")
    src = write_jsonl(tmp_path / "p.jsonl", rows)
    if kind == "parquet":
        src = tmp_path / "p.parquet"
        pl.DataFrame(rows).write_parquet(src, compression="uncompressed")
    out = tmp_path / "out"
    pairaudit.scan(src, out, only=ONLY)
    before = _tree(out)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        with pytest.raises(PairauditError) as err:
            pairaudit.scan(src, out, only=ONLY, max_length=99)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert err.value.exit_code == 2 and "File too large" in str(err.value) and "EFBIG" in str(err.value), err.value
    assert _tree(out) == before


@pytest.mark.parametrize("limit", [600, 4_000, 60_000])
def test_apply_ends_a_failed_write_as_a_scan_does(tmp_path: Path, limit: int) -> None:
    """Found by the issue-38 checker on a full tmpfs: `apply` let polars' ComputeError of a failed scores.parquet
    write ("underlying IO error: No space left on device (os error 28)") out as a traceback. A write that fails
    at any point of apply (here a real RLIMIT_FSIZE: os error 27 through the same polars path) is exit 2 and
    the folder as it was."""
    from pairaudit.review import Review

    rows = _rows(30, same={3}, body=lambda i: f"{random.Random(i).getrandbits(40_000):x}")
    src = write_jsonl(tmp_path / "p.jsonl", rows)
    out = tmp_path / "out"
    pairaudit.scan(src, out, only=ONLY)
    Review(out).decide(5, "drop")
    before = _tree(out)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        with pytest.raises(PairauditError) as err:
            pairaudit.apply_decisions(out)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert err.value.exit_code == 2 and "File too large" in str(err.value), str(err.value)
    assert _tree(out) == before
    assert pairaudit.apply_decisions(out).report["totals"]["dropped"] >= 1  # and the folder still works


def test_apply_on_a_real_full_disk(tmp_path: Path) -> None:
    """The issue-38 checker's reproduction: a 2 MB tmpfs left with ~40 KB free, `apply` writing into it: exit 2,
    the folder as it was, and a fix without --out (apply has none). Needs a tmpfs mount (root); skipped
    where the machine refuses one (the RLIMIT_FSIZE test above covers the same path)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("no tmpfs mount on this machine (needs root)")
    try:
        src = write_jsonl(tmp_path / "p.jsonl", _rows(10, body=lambda i: "text " * 200))
        out = mnt / "out"
        assert _limited(None, "scan", str(src), "--out", str(out), "-q", "--only", ",".join(ONLY)).returncode == 0
        (out / "decisions.jsonl").write_text(json.dumps({"row": 2, "decision": "drop"}) + "\n")
        before = _tree(out)
        st = os.statvfs(mnt)
        with open(mnt / "filler", "wb") as fh:
            fh.truncate(0)
            os.posix_fallocate(fh.fileno(), 0, st.f_bavail * st.f_frsize - 40 * 1024)
        res = _limited(None, "apply", str(out))
        assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr[-2000:]
        assert "No space left on device" in res.stderr and "--out" not in res.stderr.split("fix:")[1], res.stderr
        assert _tree(out) == before
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)

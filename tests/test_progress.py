"""Progress that moves: per-phase counts within a batch, plain lines when stderr is not a terminal, a
rich display on one, nothing at all with -q (library progress bars included), nothing on stderr from
the API."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import datasets
import pytest
from conftest import write_jsonl
from typer.testing import CliRunner

import pairaudit
from pairaudit.cli import app
from pairaudit.report import progress as progress_mod
from pairaudit.report.progress import PlainProgress, ProgressDisplay, status_line

runner = CliRunner()
ONLY = ["malformed_record", "identical_pair", "duplicate_pair"]


def _rows(n: int) -> list[dict[str, str]]:
    return [{"prompt": f"Question number {i}?", "chosen": f"Answer {i} is right.", "rejected": f"Answer {i} is wrong."}
            for i in range(n)]


@pytest.mark.parametrize(("args", "expected"), [
    (("read", 1250, 2354, 31.2, 35.4, None), "read + checks: 1,250 / 2,354 rows (53%), 31 rows/s, ETA 35s"),
    (("read", 1250, None, 31.2, None, None), "read + checks: 1,250 rows, 31 rows/s"),
    (("embed", 3000, 7062, None, None, None), "embedding: 3,000 / 7,062 texts (42%)"),
    (("reference", 10, 400, 2.0, 195, None), "reference model: 10 / 400 sequences (2%), 2 sequences/s, ETA 3m 15s"),
    (("read", 2354, 2354, 24.3, 0, 97.0), "read + checks: done, 2,354 rows in 1m 37s (24 rows/s)"),
    (("finalize", 1, 4, None, None, None), "whole-dataset checks: 1 / 4 stages (25%)"),
    # no ETA from a count of stages: a near-duplicate search and a length histogram are one stage each
    (("finalize", 3, 5, 0.01, 580.0, None), "whole-dataset checks: 3 / 5 stages (60%)"),
    (("write", 5, 5, 3.0, 0, 2.0), "writing outputs: done, 5 steps in 2s"),
])
def test_status_line(args: tuple, expected: str) -> None:
    assert status_line(*args) == expected


def test_plain_lines_are_throttled_per_phase(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(progress_mod.time, "monotonic", lambda: now[0])
    lines: list[str] = []
    p = PlainProgress(lines.append, interval=5.0)
    p("read", 0, 1000)          # first report of a phase: a line
    now[0] += 1
    p("read", 250, 1000)        # within 5 s: nothing
    p("embed", 100, None)       # another phase: its own line
    now[0] += 4.5
    p("read", 500, 1000)        # 5.5 s after the last read line
    now[0] += 0.1
    p("read", 1000, 1000)       # completion: always a line, once
    p("read", 1000, 1000)
    assert lines == ["read + checks: 0 / 1,000 rows (0%)", "embedding: 100 texts",
                     "read + checks: 500 / 1,000 rows (50%), 91 rows/s, ETA 6s",
                     "read + checks: done, 1,000 rows in 6s (179 rows/s)"]


def test_heartbeat_when_a_count_does_not_move() -> None:
    import time

    lines: list[str] = []
    p = PlainProgress(lines.append, interval=5.0, heartbeat=0.2)
    p("embed", 64, 7062)
    deadline = time.monotonic() + 5
    while len(lines) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    p("embed", 7062, 7062)
    time.sleep(0.5)  # a finished phase gets no heartbeat
    p.stop()
    assert lines[0] == "embedding: 64 / 7,062 texts (1%)"
    assert lines[1].startswith("embedding: 64 / 7,062 texts (1%); still working (0s since the last count)")
    assert lines[-1].startswith("embedding: done, 7,062 texts") and len(lines) == 3


def test_progress_moves_within_a_batch_and_names_every_phase(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pairaudit.stages.exact import ExactStage

    src = write_jsonl(tmp_path / "p.jsonl", _rows(1200))
    calls: list[tuple[str, int, int | None]] = []
    observe = ExactStage.observe
    monkeypatch.setattr(ExactStage, "observe", lambda self, p, e: (calls.append(("observe", len(p), None)),
                                                                   observe(self, p, e))[1])
    audit = pairaudit.scan(src, out=tmp_path / "out", only=ONLY, batch_size=1000, log=lambda m: None,
                           progress=lambda phase, done, total: calls.append((phase, done, total)))
    assert audit.totals["input"] == 1200
    read = [d for ph, d, _ in calls if ph == "read"]
    assert [n for ph, n, _ in calls if ph == "observe"] == [1000, 200]
    assert read == sorted(read) and read[-1] == 1200
    steps = [b - a for a, b in zip([0, *read], read)]
    assert max(steps) <= 250  # "every few hundred rows", also inside a 1000-row batch
    totals = [t for ph, _, t in calls if ph == "read"]
    assert totals[-1] == 1200 and all(t is not None for t in totals)  # estimated from bytes read
    assert ("finalize", 1, 1) in calls and ("write", 5, 5) in calls
    # "read" never looks complete while the stages still observe the last batch (embedding, scoring)
    last_observe = max(i for i, c in enumerate(calls) if c[0] == "observe")
    assert not [c for c in calls[:last_observe] if c[0] == "read" and c[1] == c[2]]
    assert [ph for ph, _, _ in calls].index("finalize") > [ph for ph, _, _ in calls].index("read")


def test_cli_prints_plain_progress_when_not_a_terminal(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "p.jsonl", _rows(300))
    res = runner.invoke(app, ["scan", str(src), "--out", str(tmp_path / "out"), "--only", ",".join(ONLY)])
    assert res.exit_code == 0, res.output
    assert "pairaudit: read + checks: done, 300 rows in" in res.stderr
    assert "pairaudit: writing outputs: done, 5 steps" in res.stderr
    assert "Saving the dataset" not in res.stderr


def test_quiet_means_silent(tmp_path: Path) -> None:
    """-q on a save_to_disk source (whose writer would show "Saving the dataset" bars): no output at all,
    and the libraries' progress bar settings are back as they were afterwards."""
    folder = tmp_path / "ds"
    datasets.Dataset.from_list(_rows(50)).save_to_disk(str(folder))
    import transformers.utils.logging as tlog

    before = (datasets.utils.logging.is_progress_bar_enabled(), tlog.is_progress_bar_enabled(), tlog.get_verbosity())
    res = runner.invoke(app, ["scan", str(folder), "--out", str(tmp_path / "out"), "-q", "--only", ",".join(ONLY)])
    assert res.exit_code == 0
    assert res.stdout == "" and res.stderr == ""
    assert (tmp_path / "out" / "clean" / "dataset_info.json").exists()
    after = (datasets.utils.logging.is_progress_bar_enabled(), tlog.is_progress_bar_enabled(), tlog.get_verbosity())
    assert after == before


def test_api_prints_nothing_and_logs_progress(tmp_path: Path, capfd: pytest.CaptureFixture[str],
                                              caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "ds"
    datasets.Dataset.from_list(_rows(50)).save_to_disk(str(folder))
    capfd.readouterr()
    with caplog.at_level(logging.INFO, logger="pairaudit"):
        pairaudit.scan(str(folder), out=tmp_path / "out", only=ONLY)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    progress_lines = [r.getMessage() for r in caplog.records if r.name == "pairaudit.progress"]
    assert "read + checks: done, 50 rows" in " ".join(progress_lines)


def test_live_display_shows_each_phase_and_a_count_that_does_not_move(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from rich.console import Console

    monkeypatch.setattr(progress_mod, "STALE_AFTER", 0.3)
    buf = io.StringIO()
    display = ProgressDisplay(Console(file=buf, force_terminal=True, width=140))
    display("read", 250, 2354)
    time.sleep(0.3)
    display("read", 750, 2354)
    display("embed", 96, None)
    display.log("pairaudit: embedder: bundled:all-MiniLM-L6-v2")
    time.sleep(0.9)  # refreshed 4 times a second: the read count has not moved for a while
    display("read", 2354, 2354)
    display.stop()
    text = buf.getvalue()
    for part in ("read + checks", "2354/2354", "embedding", "texts", "bundled:all-MiniLM-L6-v2", "rows/s · ETA",
                 "no new count for", "done"):
        assert part in text, part


def test_streaming_phase_without_total_finishes_when_the_stream_ends() -> None:
    """A phase counted without a total while batches stream (static embedding) is closed as done, with
    its count, once the whole-dataset stages start: a plain 'done' line, and a live bar that finishes."""
    from io import StringIO

    from rich.console import Console

    from pairaudit.report.progress import PlainProgress, ProgressDisplay

    lines: list[str] = []
    plain = PlainProgress(lines.append, interval=0.0, heartbeat=None)
    live = ProgressDisplay(Console(file=StringIO(), force_terminal=False, width=120))
    try:
        for view in (plain, live):
            view("read", 0, 10)
            view("embed_static", 2973, None)
            view("read", 10, 10)
            view("finalize", 0, 3)
            view("finalize", 3, 3)
    finally:
        plain.stop()
        live.stop()
    done = [ln for ln in lines if ln.startswith("embedding (static): done")]
    assert done == [lines[[i for i, ln in enumerate(lines) if ln.startswith("whole-dataset")][0] - 1]]
    assert done[0].startswith("embedding (static): done, 2,973 texts")
    task = next(t for t in live.bar.tasks if t.description == "embedding (static)")
    assert task.total == task.completed == 2973 and task.finished

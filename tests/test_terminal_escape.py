"""Issue 23: no control or bidi character planted in a source path, an --out path, a run-folder name, a
trainer log line, a column name or a config value reaches the terminal raw, whatever prints it (messages,
errors, the summary, `show`, `report`, `trace`), through CliRunner and through a real process on a
pseudo-terminal (where rich styles its output and click strips nothing)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, write_jsonl
from typer.testing import CliRunner

from pairaudit.cli import app
from pairaudit.report.terminal import terminal_safe

#: what a hostile name carries: set the window title (OSC ... BEL), clear the screen, rewrite the line,
#: reverse the text that follows
H = "\x1b]0;PWNED\x07\x1b[2J\rFAKE\u202eX"
RAW = ["\x1b]0;PWNED", "\x07", "\x1b[2J", "\rFAKE", "\u202e"]
ROWS = [{"prompt": f"Question {i}?", "chosen": f"A careful answer number {i}.", "rejected": "no" if i else
         f"A careful answer number {i}."} for i in range(6)]
STATE = {"global_step": 6, "max_steps": 10, "train_batch_size": 2, "logging_steps": 1, "num_train_epochs": 1,
         "log_history": [{"step": 1, "loss": 1.0, "grad_norm": 1.0}, {"step": 2, "loss": 1.1, "grad_norm": 1.2},
                         {"step": 3, f"loss{H}": float("nan"), "grad_norm": float("nan"), "note": H}]}
ARGS = {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 1, "seed": 42, "max_steps": 10,
        "logging_steps": 1, "world_size": 1, "data_seed": 42}


def _raw(text: str) -> list[str]:
    return [r for r in RAW if r in text]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("esc")
    (base / f"data{H}").mkdir()
    src = write_jsonl(base / f"data{H}" / f"pairs{H}.jsonl",
                      [{"prompt": r["prompt"], f"good{H}": r["chosen"], f"bad{H}": r["rejected"]} for r in ROWS])
    run = base / f"run{H}"
    run.mkdir()
    (run / "trainer_state.json").write_text(json.dumps(STATE))
    (run / "training_args.json").write_text(json.dumps(ARGS))
    cfg = base / "cfg.toml"
    cfg.write_text(f'trainer = "trl{H}"\n[checks.identical_pair]\n"act{H}ion" = "drop"\n', encoding="utf-8")
    return {"base": base, "src": src, "out": base / f"out{H}", "run": run, "cfg": cfg}


def _commands(w: dict[str, Path]) -> list[tuple[str, list[str]]]:
    cols = f"chosen=good{H},rejected=bad{H}"
    scan = ["scan", str(w["src"]), "--out", str(w["out"]), "--columns", cols, "--only", "identical_pair"]
    return [
        ("scan", scan),
        ("scan again, quiet", [*scan, "-q"]),
        ("show", ["show", str(w["out"]), "0"]),
        ("report", ["report", str(w["out"])]),
        ("missing column", ["scan", str(w["src"]), "--out", str(w["base"] / "o2"), "--columns", f"chosen=gone{H}"]),
        ("missing source", ["scan", str(w["base"] / f"nothing{H}.jsonl"), "--out", str(w["base"] / "o3")]),
        ("config values", ["scan", str(w["src"]), "--out", str(w["base"] / "o4"), "--config", str(w["cfg"])]),
        ("bad option", ["scan", str(w["src"]), f"--bo{H}gus"]),
        ("bad --set", ["scan", str(w["src"]), "--set", f"identical_pair.x{H}=1"]),
        ("out is a file", ["scan", str(w["src"]), "--out", str(w["src"])]),
        ("trace", ["trace", str(w["run"]), "--data", str(w["src"]), "--audit", str(w["out"])]),
        ("trace --json", ["trace", str(w["run"]), "--data", str(w["src"]), "--audit", str(w["out"]), "--json"]),
        ("trace, no folder", ["trace", str(w["base"] / f"gone{H}"), "--data", str(w["src"])]),
    ]


def test_terminal_safe_escapes_every_planted_character() -> None:
    assert not _raw(terminal_safe(H)) and terminal_safe("tab\tnew\nline") == "tab\tnew\nline"
    assert terminal_safe(H) == "\\x1b]0;PWNED\\x07\\x1b[2J\\x0dFAKE\\u202eX"


def test_the_safe_console_escapes_text_it_did_not_build() -> None:
    import io

    from rich.table import Table
    from rich.text import Text

    from pairaudit.report.terminal import safe_console  # here: a checkout without it fails only this test

    buf = io.StringIO()
    console = safe_console(file=buf, width=100, force_terminal=True)
    table = Table(title=Text(f"title{H}"))
    table.add_column(f"col{H}")
    table.add_row(Text(f"cell{H}", style="red"))
    console.print(table)
    console.print(f"[bold]markup[/bold] {H}", Text(H))
    out = buf.getvalue()
    assert not _raw(out), repr(out)
    assert "\x1b[1m" in out  # rich's own styling still reaches the terminal


def test_no_planted_character_reaches_the_terminal_through_the_cli(world: dict[str, Path]) -> None:
    runner = CliRunner()
    seen = {}
    for name, argv in _commands(world):
        res = runner.invoke(app, argv, color=True)  # color: click strips nothing
        assert "Traceback" not in res.output and not isinstance(res.exception, (KeyError, TypeError, ValueError)), \
            (name, res.output, res.exception)
        seen[name] = (res.exit_code, _raw(res.output))
        if name == "scan":
            assert res.exit_code == 0 and "\\x1b]0;PWNED" in res.output, res.output  # the path, shown escaped
    assert {k: v for k, (_, v) in seen.items() if v} == {}, seen
    assert seen["trace"][0] in (0, 6) and seen["trace --json"][0] in (0, 6), seen


def _on_a_pty(argv: list[str]) -> tuple[int, bytes]:
    """Run the CLI with stdout and stderr on a pseudo-terminal (styles on, the live display on)."""
    master, slave = pty.openpty()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), "COLUMNS": "120", "TERM": "xterm"}
    proc = subprocess.Popen([sys.executable, "-m", "pairaudit.cli", *argv], stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, env=env, cwd=ROOT)
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 300)
        if not ready:
            proc.kill()
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return proc.wait(), out


@pytest.mark.parametrize("name", ["scan", "show", "missing column", "config values", "trace", "trace --json"])
def test_no_planted_character_reaches_a_real_terminal(world: dict[str, Path], name: str) -> None:
    argv = dict(_commands(world))[name]
    if name in ("show", "trace", "trace --json") and not (world["out"] / "report.json").exists():
        assert CliRunner().invoke(app, dict(_commands(world))["scan"]).exit_code == 0
    code, out = _on_a_pty(argv)
    text = out.decode("utf-8", "replace").replace("\r\n", "\n")
    assert b"Traceback" not in out, text[-3000:]
    assert not _raw(text), (name, code, text[-3000:])
    if name == "scan":  # the path is shown, escaped (rich's own styling codes taken out to find it)
        assert code == 0 and "\\x1b]0;PWNED" in re.sub("\x1b\\[[0-9;]*m", "", text), text[-3000:]

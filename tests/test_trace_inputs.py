"""Issue 23: `pairaudit trace` on a malformed run folder is exit 2 naming the file and value, never a
traceback; metrics logged as strings ("NaN", "Infinity") count as non-finite; step counts are bounded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLE
from typer.testing import CliRunner

from pairaudit import exit_codes
from pairaudit.cli import app

STATE = {"global_step": 6, "max_steps": 10, "train_batch_size": 2, "logging_steps": 1, "num_train_epochs": 1,
         "log_history": [{"step": 1, "loss": 1.0, "grad_norm": 1.0}, {"step": 2, "loss": 1.1, "grad_norm": 1.2},
                         {"step": 3, "loss": 1.0, "grad_norm": 1.1}]}
ARGS = {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 1, "seed": 42, "max_steps": 10,
        "logging_steps": 1}
INF = float("inf")


def _run(tmp_path: Path, state: object, args: object = ARGS, *extra: str):
    run = tmp_path / "run"
    run.mkdir()
    (run / "trainer_state.json").write_text(state if isinstance(state, str) else json.dumps(state))
    (run / "training_args.json").write_text(json.dumps(args))
    data = tmp_path / "d.jsonl"
    data.write_text("".join(EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)[:40]))
    return CliRunner().invoke(app, ["trace", str(run), "--data", str(data), "--out", str(tmp_path / "out"), *extra])


@pytest.mark.parametrize(("state", "extra", "needle"), [
    ([1, 2], [], "holds a list"),
    ({**STATE, "log_history": 5}, [], "log_history int"),
    ('{"global_step": 6, "log_history": ' + "[" * 5000 + "]" * 5000 + "}", [], "not readable JSON"),
    ({**STATE, "log_history": [{"step": "x", "loss": 1.0}]}, [], "log_history[0].step"),
    ({**STATE, "log_history": [{"step": INF, "loss": 1.0}]}, [], "log_history[0].step"),
    ({**STATE, "train_batch_size": "two"}, [], "train_batch_size"),
    ({**STATE, "train_batch_size": INF}, [], "train_batch_size"),
    ({**STATE, "max_steps": 10 ** 12}, [], "max_steps"),
    (STATE, ["--set", "seed=Infinity"], "seed"),
    (STATE, ["--set", "max_stepz=3"], "did you mean 'max_steps'"),
])
def test_a_malformed_run_folder_is_exit_2(tmp_path: Path, state: object, extra: list[str], needle: str) -> None:
    res = _run(tmp_path, state, ARGS, *extra)
    assert res.exit_code == 2, (res.output, res.exception)
    assert needle in res.output and "Traceback" not in res.output, res.output


@pytest.mark.parametrize("args", [[1], {**ARGS, "per_device_train_batch_size": INF}])
def test_a_malformed_training_args_json_is_noted_not_a_traceback(tmp_path: Path, args: object) -> None:
    res = _run(tmp_path, {**STATE, "log_history": [*STATE["log_history"], {"step": 4, "loss": INF}]}, args)
    # the ignored arguments leave order-changing settings assumed: "unreliable" (issue 21), not a traceback
    assert res.exit_code == exit_codes.TRACE_UNRELIABLE, (res.output, res.exception)
    assert "Traceback" not in res.output
    assert "training_args.json ignored" in (tmp_path / "out" / "trace.json").read_text()


def test_metrics_logged_as_strings_count_as_non_finite(tmp_path: Path) -> None:
    state = {**STATE, "log_history": [*STATE["log_history"], {"step": 4, "loss": "Infinity", "grad_norm": "NaN"}]}
    res = _run(tmp_path, state)
    # the step is found; its rows are "unreliable" because this run folder holds no world_size / data_seed ...
    assert res.exit_code == exit_codes.TRACE_UNRELIABLE, res.output
    doc = json.loads((tmp_path / "out" / "trace.json").read_text())
    event = doc.get("event") or {}
    assert event.get("kind") == "nonfinite" and event.get("step") == 4, json.dumps(doc)[:600]

"""The Python API matches the CLI: every option of `pairaudit scan` (enumerated from the command typer builds)
is a keyword of `pairaudit.scan` giving the same configuration; `scan(quiet=True)` prints nothing; and
`pairaudit.open(DIR)` reads a folder back as the Audit the scan returned, without rescanning."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typer
from conftest import EXAMPLE, output_files
from typer.testing import CliRunner

import pairaudit
from pairaudit import api
from pairaudit.cli import app
from pairaudit.config import ScanConfig
from pairaudit.errors import InputError

# a value other than the default for every option of `pairaudit scan`, as typed on the command line
CLI_VALUES: dict[str, str | None] = {
    "--out": "OUT", "--format": "standard", "--columns": "chosen=a,rejected=b", "--split": "train",
    "--subset": "main", "--tokenizer": "some/tokenizer", "--trainer": "trl-0.29", "--max-length": "512",
    "--max-prompt-length": "128", "--max-completion-length": "none", "--truncation-mode": "keep_end",
    "--only": "empty_prompt,too_long,length_outlier", "--skip": "too_long", "--drop": "length_outlier",
    "--flag": "empty_prompt", "--flip": "too_long", "--explicit-prompt": None, "--set": "length_outlier.max_z=4",
    "--config": "CONFIG", "--embedder": "some/embedder", "--embed-batch-size": "8", "--fast": None,
    "--embed-mode": "transformer", "--precision": "fp32", "--reference": "some/ref", "--reward-model": "some/rm",
    "--policy": "some/policy", "--beta": "0.2", "--reference-max-rows": "10", "--device": "cpu",
    "--decisions": "d.jsonl", "--fail-on": "length_outlier>0.5", "--allow-empty": None, "--batch-size": "10",
    "--workers": "1", "--engine": "local", "--ray-address": "auto", "--ray-workers": "2", "--ray-shards": "3",
    "--trust-remote-code": None, "--quiet": None,
}
DEFAULTS = {"max_length": "auto", "max_prompt_length": "auto", "max_completion_length": "auto"}
NOT_CONFIG = {"out", "fail_on", "allow_empty", "quiet", "config"}  # what the scan's call, not its ScanConfig, holds


def _scan_options() -> dict[str, Any]:
    """`pairaudit scan`'s options by their long flag (typer's public get_command: the command it builds)."""
    command = typer.main.get_command(app).commands["scan"]  # type: ignore[attr-defined]
    return {next(o for o in p.opts if o.startswith("--")): p for p in command.params if p.param_type_name == "option"}


def _keyword(flag: str) -> str:
    return flag[2:].replace("-", "_")


def test_every_cli_option_is_a_keyword_of_scan() -> None:
    options = _scan_options()
    assert set(options) == set(CLI_VALUES), "a new option of `pairaudit scan`: give it a value here and a keyword"
    signature = inspect.signature(api.scan).parameters
    fields = set(vars(ScanConfig()))
    for flag in options:
        keyword = _keyword(flag)
        assert keyword in signature or keyword in fields or keyword == "set", flag


def _cli_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def fake_scan(source: Any, out: Any, *, config: ScanConfig, **kw: Any) -> Any:
        seen.update(config=config, out=out, **kw)
        raise KeyboardInterrupt  # stop before scanning: the configuration is what is compared

    monkeypatch.setattr(api, "scan", fake_scan)
    result = CliRunner().invoke(app, ["scan", "SRC", *args])
    assert "interrupted" in result.output, result.output
    return seen


def test_each_option_gives_the_same_config_in_the_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "c.toml"
    config.write_text('beta = 0.3\n[checks.too_long]\naction = "flag"\n', encoding="utf-8")
    for flag, text in CLI_VALUES.items():
        keyword = _keyword(flag)
        if keyword in NOT_CONFIG - {"config"}:
            continue
        value = str(config) if text == "CONFIG" else text
        args = [flag] if value is None else [flag, value]
        cli = _cli_config(tmp_path, monkeypatch, args)["config"]
        if keyword != "engine":  # the one option whose only local value is the default
            assert cli.to_json() != ScanConfig(**DEFAULTS).to_json(), f"{flag} changed nothing: not a test"
        typed: Any = True if value is None else value
        if keyword in ("embed_batch_size", "reference_max_rows", "batch_size", "workers", "ray_workers", "ray_shards"):
            typed = int(value)  # the API takes numbers as numbers
        elif keyword == "beta":
            typed = float(value)
        python = api._config(None, None, {} if keyword in ("fast", "config") else {keyword: typed}, None,
                             keyword == "fast") if keyword != "config" else api._config(config, None, {}, None, False)
        assert python.to_json() == cli.to_json(), flag


def test_quiet_and_fail_on_as_on_the_command_line(tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    src = tmp_path / "pairs.jsonl"
    src.write_text("".join(EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)[:60]), encoding="utf-8")
    only = "empty_response,prompt_mismatch,prefix_pair,split_word,length_outlier"
    capfd.readouterr()
    audit = pairaudit.scan(src, out=tmp_path / "api", only=only, quiet=True, fail_on="split_word>1%")
    printed = capfd.readouterr()
    assert printed.out == "" and printed.err == "", printed
    result = CliRunner().invoke(app, ["scan", str(src), "--out", str(tmp_path / "cli"), "--only", only, "-q",
                                      "--fail-on", "split_word>1%"])
    assert audit.exit_code == result.exit_code == 3
    assert any(m.startswith("fail-on: split_word rate") for m in audit.messages)
    assert output_files(tmp_path / "api").keys() == output_files(tmp_path / "cli").keys()
    for name in ("findings.parquet", "scores.parquet", "clean.jsonl", "dropped.jsonl"):
        assert output_files(tmp_path / "api")[name] == output_files(tmp_path / "cli")[name], name

    back = pairaudit.open(tmp_path / "api")  # read back, no rescan
    assert back.report == audit.report and back.totals == audit.totals
    assert back.findings.equals(audit.findings) and back.scores.equals(audit.scores)
    assert np.array_equal(back.keep_mask, audit.keep_mask) and back.exit_code == 0  # fail_on is the caller's
    assert back.clean["__pairaudit_row__"] == audit.clean["__pairaudit_row__"]
    assert repr(back) == repr(audit)
    with pytest.raises(InputError, match="holds no report.json: it is not a pairaudit output folder"):
        pairaudit.open(tmp_path)
    (tmp_path / "api" / "scores.parquet").unlink()
    with pytest.raises(InputError, match="no scores.parquet"):
        pairaudit.open(tmp_path / "api")

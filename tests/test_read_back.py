"""Issue 23: every file pairaudit reads back (config files, review decisions, report.json) is validated:
a wrong type, a non-finite or fractional number, an unknown key is exit 2 naming it (with a "did you
mean"), never a traceback and never a silently different run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import write_jsonl
from typer.testing import CliRunner

from pairaudit.cli import app

ROWS = [{"prompt": f"Question {i}?", "chosen": f"A careful answer number {i}.", "rejected": f"No {i}."}
        for i in range(6)]


@pytest.fixture
def src(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "pairs.jsonl", ROWS)


def _scan(src: Path, out: Path, *extra: str):
    return CliRunner().invoke(app, ["scan", str(src), "--out", str(out), "-q", *extra])


@pytest.mark.parametrize(("text", "needle"), [
    ("trainer = 7", "trainer"),
    ('[checks.identical_pair]\nenabled = "false"', "true or false"),
    ("[checks.nosuch]\naction = 'drop'", "nosuch"),
    ("[checks.nosuch]\nenabled = true", "nosuch"),
    ("[checks.identical_pairs]\naction = 'drop'", "did you mean 'identical_pair'"),
    ("[checks.length_outlier]\nmax_zz = 2", "did you mean 'max_z'"),
    ("max_lenght = 64", "did you mean 'max_length'"),
    ("[checks.likely_flipped]\nfolds = 1", "at least 2"),
    ("[checks.identical_pair]\naction = 'remove'", "drop | flag"),
    ("max_length = 1e400", "inf"),
    ("beta = nan", "beta"),
    ("only = 3", "only"),
    ("batch_size = true", "batch_size"),
])
def test_a_bad_config_file_is_exit_2_naming_the_key(tmp_path: Path, src: Path, text: str, needle: str) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(text + "\n")
    res = _scan(src, tmp_path / "out", "--config", str(cfg))
    assert res.exit_code == 2, res.output
    assert needle in res.output, res.output
    assert "Traceback" not in res.output and not (tmp_path / "out").exists()


def test_a_config_that_is_a_folder_is_exit_2(tmp_path: Path, src: Path) -> None:
    res = _scan(src, tmp_path / "out", "--config", str(tmp_path))
    assert res.exit_code == 2 and "is a folder" in res.output, res.output


def test_only_as_one_string_is_a_list_of_one(tmp_path: Path, src: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('only = "identical_pair"\n')
    res = _scan(src, tmp_path / "out", "--config", str(cfg))
    assert res.exit_code == 0, res.output
    rep = json.loads((tmp_path / "out" / "report.json").read_text())
    assert {n for n, c in rep["checks"].items() if c["status"] == "ran"} == {"identical_pair", "malformed_record"}


def test_enabled_false_turns_a_check_off(tmp_path: Path, src: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[checks.identical_pair]\nenabled = false\n")
    res = _scan(src, tmp_path / "out", "--config", str(cfg), "--only", "identical_pair,empty_prompt")
    assert res.exit_code == 0, res.output
    rep = json.loads((tmp_path / "out" / "report.json").read_text())
    assert rep["checks"]["identical_pair"]["status"] == "off"


@pytest.mark.parametrize("line", ['{"row": Infinity, "decision": "drop"}', '{"row": 1e400, "decision": "drop"}',
                                  '{"row": 3.7, "decision": "drop"}', '{"row": true, "decision": "drop"}',
                                  '{"row": "2", "decision": "drop"}', '{"row": -1, "decision": "drop"}',
                                  '{"row": 2, "decision": "drop", "nots": "x"}', "[1, 2]"])
def test_a_bad_decision_line_is_exit_2_naming_the_line(tmp_path: Path, src: Path, line: str) -> None:
    dec = tmp_path / "d.jsonl"
    dec.write_text('{"row": 0, "decision": "keep"}\n' + line + "\n")
    res = _scan(src, tmp_path / "out", "--only", "identical_pair", "--decisions", str(dec))
    assert res.exit_code == 2, res.output
    assert "line 2" in res.output and "Traceback" not in res.output, res.output
    assert not (tmp_path / "out").exists()


def test_decisions_given_a_folder_is_exit_2(tmp_path: Path, src: Path) -> None:
    res = _scan(src, tmp_path / "out", "--only", "identical_pair", "--decisions", str(tmp_path))
    assert res.exit_code == 2 and "folder" in res.output, res.output


@pytest.mark.parametrize("content", ["{not json", "[]", "{}", '{"totals": 3}', '{"source": {}, "totals": {}}'])
@pytest.mark.parametrize("command", ["report", "apply", "show"])
def test_a_damaged_report_json_is_exit_2(tmp_path: Path, src: Path, content: str, command: str) -> None:
    out = tmp_path / "out"
    assert _scan(src, out, "--only", "identical_pair").exit_code == 0
    target = (out / "report.json").resolve()
    target.write_text(content)
    res = CliRunner().invoke(app, [command, str(out), *(["0"] if command == "show" else [])])
    assert res.exit_code == 2, (res.output, res.exception)
    assert "report.json" in res.output and "Traceback" not in res.output


@pytest.mark.parametrize("path,value", [(("assumptions",), 3), (("assumptions", "trainer"), [1]),
                                        (("assumptions", "trainer", "requested"), 5),
                                        (("assumptions", "trainer", "from_profile_defaults"), 7),
                                        (("decisions",), 3)])
@pytest.mark.parametrize("command", ["apply", "report"])
def test_a_damaged_part_that_apply_reads_is_exit_2(tmp_path: Path, src: Path, path: tuple, value: object,
                                                   command: str) -> None:
    """Found by scripts/fuzz_inputs.py --seed 1: `apply` on a report.json whose "assumptions" was a number
    was a traceback (AttributeError)."""
    out = tmp_path / "out"
    assert _scan(src, out, "--only", "identical_pair").exit_code == 0
    target = (out / "report.json").resolve()
    rep = json.loads(target.read_text())
    node = rep
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    target.write_text(json.dumps(rep))
    res = CliRunner().invoke(app, [command, str(out)])
    assert res.exit_code == 2 and res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert "report.json" in res.output and ".".join(path) in res.output and "Traceback" not in res.output, res.output

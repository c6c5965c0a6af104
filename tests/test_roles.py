"""Issue 23: conversational rows are checked against the chat-template role vocabulary (system, user,
assistant, tool); an unknown role, or a non-assistant turn where the response belongs, is a
malformed_record finding (dropped, like other malformed structure) naming the row, field and fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import write_jsonl
from typer.testing import CliRunner

from pairaudit.cli import app


def _msg(role: str, content: str) -> dict[str, str]:
    return {"role": role, "content": content}


GOOD = {"prompt": [_msg("system", "Be brief."), _msg("user", "Capital of France?")],
        "chosen": [_msg("assistant", "Paris.")], "rejected": [_msg("assistant", "Lyon, I think.")]}


def _bad(case: str) -> dict:
    rec = json.loads(json.dumps(GOOD))
    if case in ("sysadmin", "", "USER"):
        rec["prompt"][1]["role"] = case
    elif case == "tool in chosen":
        rec["chosen"] = [_msg("tool", "{\"result\": 1}")]
    elif case == "user in chosen":
        rec["chosen"] = [_msg("user", "Paris.")]
    elif case == "sharegpt hacker":
        rec = {"chosen": [{"from": "human", "value": "Hi?"}, {"from": "gpt", "value": "Hello."}],
               "rejected": [{"from": "hacker", "value": "Hi?"}, {"from": "gpt", "value": "Go away."}]}
    elif case == "implicit ends with user":
        rec = {"chosen": [_msg("user", "Hi?"), _msg("assistant", "Hello."), _msg("user", "Thanks")],
               "rejected": [_msg("user", "Hi?"), _msg("assistant", "Go away.")]}
    return rec


@pytest.mark.parametrize("case", ["sysadmin", "", "USER", "tool in chosen", "user in chosen", "sharegpt hacker",
                                  "implicit ends with user"])
def test_unknown_or_misplaced_roles_are_malformed(tmp_path: Path, case: str) -> None:
    good = GOOD if "hacker" not in case and "implicit" not in case else {
        "chosen": [_msg("user", "Hi?"), _msg("assistant", "Hello.")],
        "rejected": [_msg("user", "Hi?"), _msg("assistant", "Hi there, how can I help?")]}
    src = write_jsonl(tmp_path / "p.jsonl", [good, _bad(case), good])
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["scan", str(src), "--out", str(out), "-q", "--only", "identical_pair"])
    assert res.exit_code == 0, res.output
    dropped = [json.loads(x) for x in (out / "dropped.jsonl").read_text().splitlines()]
    assert [d["row"] for d in dropped] == [1] and dropped[0]["reasons"] == ["malformed_record"]
    import polars as pl

    detail = pl.read_parquet(out / "findings.parquet").filter(pl.col("row") == 1)["detail"][0]
    assert "role" in detail and "fix" in detail
    if case == "USER":
        assert "did you mean 'user'" in detail


def test_tool_turns_in_a_prompt_are_fine(tmp_path: Path) -> None:
    rec = json.loads(json.dumps(GOOD))
    rec["prompt"] += [_msg("assistant", "Let me look."), _msg("tool", "France: capital Paris")]
    src = write_jsonl(tmp_path / "p.jsonl", [rec])
    res = CliRunner().invoke(app, ["scan", str(src), "--out", str(tmp_path / "o"), "-q", "--only", "identical_pair"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "o" / "report.json").read_text())["totals"]["kept"] == 1

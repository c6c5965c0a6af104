"""Every command's --help reads whole at 80 columns: nothing cut with an ellipsis, no line wider than 80."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from pairaudit.cli import app

COMMANDS = [[], ["scan"], ["checks"], ["show"], ["report"], ["apply"], ["trace"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0] if c else "pairaudit")
def test_help_is_not_cut_at_80_columns(command: list[str]) -> None:
    res = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert len(lines) > 5
    assert "…" not in res.output, [ln for ln in lines if "…" in ln]
    assert max(len(ln) for ln in lines) <= 80

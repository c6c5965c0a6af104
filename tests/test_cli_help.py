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


def _options(command: list[str]) -> list[tuple[str, list[str]]]:
    import typer.main

    cmd = typer.main.get_command(app)
    for name in command:
        cmd = cmd.commands[name]  # type: ignore[attr-defined]
    return [(p.name, p.opts) for p in cmd.params if p.param_type_name == "option"]


@pytest.mark.parametrize("command", [c for c in COMMANDS[1:] if _options(c)], ids=lambda c: c[0])
def test_every_option_has_a_lower_case_name(command: list[str]) -> None:
    """Each option answers to a lower-case ``--name``. typer 0.27 named an option that gives a metavar but no
    name after the metavar (``--DEVICE``): `scan --device cuda` failed with "No such option" there (found on a
    GPU machine), so every such option declares its name."""
    for name, decls in _options(command):
        longs = [d for d in decls if d.startswith("--")]
        assert longs and all(d == d.lower() for d in longs), (name, decls)
        if name in ("split", "precision", "device", "engine", "workers", "tokenizer"):
            assert f"--{name}" in longs, (name, decls)

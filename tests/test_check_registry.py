"""Adding a check is one module + one registry line + one test: a throwaway check, defined here and added to
the registry the way a contributor would, is everywhere a shipped check is (CLI, config file, findings,
scores, report.json, report.html, ``pairaudit checks``). Also: docs/checks.md's table is the checks' own."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl
import pytest
from conftest import ROOT, write_jsonl
from typer.testing import CliRunner

from pairaudit.checks import registry
from pairaudit.checks.base import CheckInfo, PairCheck
from pairaudit.cli import app
from pairaudit.datatypes import Finding, Pair
from pairaudit.trainer.tokenizer import EncodedPair

runner = CliRunner()
NAME = "shouting_response"


class ShoutingResponse(PairCheck):
    """The throwaway check: a response written mostly in capitals."""

    info = CheckInfo(
        NAME,
        "a response whose letters are at least min_upper capitals",
        "flag",
        summary="a response in capitals",
        thresholds={"min_upper": 0.8},
        why="shouting is rarely what a preference dataset wants to teach",
    )

    def check(self, pair: Pair, enc: EncodedPair | None, out: list[Finding]) -> dict[str, float] | None:
        worst = 0.0
        for side in ("chosen", "rejected"):
            letters = [c for c in getattr(pair, side) or "" if c.isalpha()]
            share = sum(c.isupper() for c in letters) / len(letters) if letters else 0.0
            worst = max(worst, share)
            if share >= self.params["min_upper"]:
                out.append(self.finding(pair.row, side, share, detail=f"{side} is {share:.0%} capitals"))
        return {self.info.score_key: worst}


ROWS = [  # the rows' largest share of capitals: 1.0, 0.4, 0.75, 0.0
    {"prompt": "How do I boil an egg?", "chosen": "Put it in boiling water.", "rejected": "JUST BOIL IT!"},
    {"prompt": "Name a colour.", "chosen": "red.", "rejected": "blue is BEST."},
    {"prompt": "What is NASA?", "chosen": "NASA ROCKS, yes", "rejected": "a band."},
    {"prompt": "Say hi.", "chosen": "hi there!", "rejected": "hello."},
]


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The contributor's one registry line: the class appended to ``PAIR_CHECKS``."""
    monkeypatch.setattr(registry, "PAIR_CHECKS", (*registry.PAIR_CHECKS, ShoutingResponse))


def scan(tmp_path: Path, *args: str) -> tuple[int, Path, str]:
    src = tmp_path / "pairs.jsonl"
    if not src.exists():
        write_jsonl(src, ROWS)
    out = tmp_path / "out"
    res = runner.invoke(app, ["scan", str(src), "--out", str(out), *args])
    return res.exit_code, out, res.output


def findings(out: Path) -> list[tuple[int, str, str, str]]:
    f = pl.read_parquet(out / "findings.parquet").filter(pl.col("check") == NAME)
    return f.select("row", "field", "action", "detail").rows()


def test_a_registered_check_lists_in_pairaudit_checks(registered: None) -> None:
    compact = runner.invoke(app, ["checks"], env={"COLUMNS": "80"}).output
    mine = [line for line in compact.splitlines() if line.split()[:1] == [NAME]]
    assert len(mine) == 1 and " flag " in mine[0] and "a response in capitals" in mine[0], compact
    assert max(len(line) for line in compact.splitlines()) <= 80
    verbose = runner.invoke(app, ["checks", "--verbose"], env={"COLUMNS": "80"}).output
    block = verbose[verbose.index(NAME):]
    assert "at least min_upper capitals" in block and "why flag: shouting" in block
    assert f"thresholds (--set {NAME}.NAME=VALUE): min_upper=0.8" in block
    data = json.loads(runner.invoke(app, ["checks", "--json"]).output)
    assert data[NAME]["default_action"] == "flag" and data[NAME]["thresholds"] == {"min_upper": 0.8}
    assert data[NAME]["summary"] == "a response in capitals"


def test_a_registered_check_runs_and_reaches_every_output(registered: None, tmp_path: Path) -> None:
    code, out, output = scan(tmp_path, "--only", NAME)
    assert code == 0, output
    assert findings(out) == [(0, "rejected", "flag", "rejected is 100% capitals")]
    scores = pl.read_parquet(out / "scores.parquet").sort("row")
    assert scores[f"{NAME}_score"].to_list() == [1.0, 0.4, 0.75, 0.0]
    rep = json.loads((out / "report.json").read_text())
    c = rep["checks"][NAME]
    assert (c["status"], c["action"], c["rows"], c["findings"], c["thresholds"]) == ("ran", "flag", 1, 1,
                                                                                    {"min_upper": 0.8})
    assert rep["totals"] == {"input": 4, "kept": 4, "dropped": 0, "flagged": 1, "malformed": 0}
    html = (out / "report.html").read_text(encoding="utf-8")
    assert f'id="check-{NAME}"' in html and "at least min_upper capitals" in html


def test_the_cli_and_a_config_file_drive_it(registered: None, tmp_path: Path) -> None:
    code, out, output = scan(tmp_path, "--only", NAME, "--drop", NAME, "--set", f"{NAME}.min_upper=0.6")
    assert code == 0, output
    assert [(r, a) for r, _, a, _ in findings(out)] == [(0, "drop"), (2, "drop")]
    dropped = [json.loads(line) for line in (out / "dropped.jsonl").read_text().splitlines()]
    assert [(d["row"], d["reasons"]) for d in dropped] == [(0, [NAME]), (2, [NAME])]

    conf = tmp_path / "pairaudit.toml"
    conf.write_text(f'only = ["{NAME}"]\n[checks.{NAME}]\naction = "drop"\nmin_upper = 0.3\n', encoding="utf-8")
    code, out, output = scan(tmp_path, "--config", str(conf))
    assert code == 0, output
    assert [(r, f, a) for r, f, a, _ in findings(out)] == [(0, "rejected", "drop"), (1, "rejected", "drop"),
                                                          (2, "chosen", "drop")]
    rep = json.loads((out / "report.json").read_text())
    assert rep["checks"][NAME]["thresholds"] == {"min_upper": 0.3} and rep["totals"]["dropped"] == 3

    code, _, output = scan(tmp_path, "--only", NAME, "--set", f"{NAME}.min_uper=0.5")
    assert code == 2 and f"{NAME} has no threshold 'min_uper'" in output and "min_upper" in output
    code, out, output = scan(tmp_path, "--only", f"identical_pair,{NAME}", "--skip", NAME)
    assert code == 0, output
    assert json.loads((out / "report.json").read_text())["checks"][NAME]["status"] == "off"


def test_without_the_registry_line_the_name_is_unknown(tmp_path: Path) -> None:
    code, _, output = scan(tmp_path, "--only", NAME)
    assert code == 2 and f"unknown check {NAME!r}" in output


def test_docs_check_table_is_generated_from_the_checks() -> None:
    """docs/checks.md's table is the list of record: it must be what the registered checks declare."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import checks_table

    doc = checks_table.DOC.read_text(encoding="utf-8")
    have = doc.partition(checks_table.BEGIN)[2].partition(checks_table.END)[0].strip().splitlines()
    want = checks_table.table().splitlines()
    stale = sorted(set(want) - set(have))
    assert have == want, ("docs/checks.md's check table is stale (run `python scripts/checks_table.py --write`); "
                          "rows to add or update:\n" + "\n".join(stale))


def test_every_check_declares_a_summary_that_fits_the_compact_list() -> None:
    from pairaudit.catalog import all_checks

    for name, info in all_checks().items():
        assert info.summary and "\n" not in info.summary and len(info.summary) <= 31, name
        assert info.score_key == f"{name}_score"

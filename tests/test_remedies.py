"""Remedies for the trainer checks: the max_length that keeps 95% / 99% of rows whole and the truncation mode
that keeps the response, from the scan's own token counts; checked by scanning again with the remedy."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLE

import pairaudit

CHECKS = ["too_long", "dropped_by_trainer"]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("remedies") / "pairs.jsonl"
    src.write_text("".join(EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)[:200]), encoding="utf-8")
    return src


def test_remedies_hold_when_applied(source: Path, tmp_path: Path) -> None:
    audit = pairaudit.scan(source, out=tmp_path / "a", only=CHECKS, max_length=160, quiet=True)
    rem = audit.report["remedies"]
    assert set(rem) == set(CHECKS), rem
    too_long, dropped = rem["too_long"], rem["dropped_by_trainer"]
    assert too_long["rows"] == audit.report["checks"]["too_long"]["rows"] > 20
    assert 160 < too_long["max_length_95"] <= too_long["max_length_99"] <= too_long["longest"]
    assert too_long["truncation_mode"] == "keep_start" and 0 < too_long["keep_end_keeps_response"] <= too_long["rows"]
    assert "max_length" in too_long["text"] and "keep_end" in too_long["text"]
    for key, share in (("max_length_95", 0.05), ("max_length_99", 0.01)):  # the remedy does what it says
        again = pairaudit.scan(source, out=tmp_path / key, only=CHECKS, max_length=too_long[key], quiet=True)
        assert again.report["checks"]["too_long"]["rate"] <= share, (key, again.report["checks"]["too_long"])
        assert again.report["checks"]["too_long"]["rate"] > 0 or key == "max_length_99"
        longer = pairaudit.scan(source, out=tmp_path / f"{key}-1", only=CHECKS, max_length=too_long[key] - 1,
                                quiet=True)  # and it is the smallest that does
        assert longer.report["checks"]["too_long"]["rows"] > again.report["checks"]["too_long"]["rows"]
    assert dropped["rows"] > 0 and "keep_end" in dropped["text"]
    kept = pairaudit.scan(source, out=tmp_path / "keep_end", only=CHECKS, max_length=160, truncation_mode="keep_end",
                          quiet=True)
    assert kept.report["checks"]["dropped_by_trainer"]["rows"] == 0  # keep_end: the trainer keeps them
    assert kept.report["remedies"]["too_long"]["keep_end_keeps_response"] is None  # already keep_end
    needed = dropped["max_length_keeps_all"]  # the longest dropped prompt + 1: the smallest max_length keeping all
    assert f"max_length {needed:,}" in dropped["text"] and dropped["still_dropped_at_95"] >= 0
    at = pairaudit.scan(source, out=tmp_path / "keeps_all", only=CHECKS, max_length=needed, quiet=True)
    assert at.report["checks"]["dropped_by_trainer"]["rows"] == 0
    below = pairaudit.scan(source, out=tmp_path / "keeps_all-1", only=CHECKS, max_length=needed - 1, quiet=True)
    assert below.report["checks"]["dropped_by_trainer"]["rows"] >= 1
    html = (tmp_path / "a" / "report.html").read_text(encoding="utf-8")
    assert 'class="pa-remedy"' in html and f"max_length {too_long['max_length_95']:,} keeps 95% of rows whole" in html


def test_no_remedies_without_trainer_rows(source: Path, tmp_path: Path) -> None:
    audit = pairaudit.scan(source, out=tmp_path / "a", only=CHECKS, quiet=True)  # max_length 1024: nothing over
    assert audit.report["remedies"] == {}


def test_terminal_prints_the_remedies(source: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from pairaudit.cli import app

    res = CliRunner().invoke(app, ["scan", str(source), "--out", str(tmp_path / "a"), "--only", ",".join(CHECKS),
                                   "--max-length", "160"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "remedy, too_long: max_length" in text and "keeps 95% of rows whole" in text
    assert "remedy, dropped_by_trainer:" in text


def test_implicit_prompt_rows_name_explicit_prompt(source: Path, tmp_path: Path) -> None:
    """HH rows whose shared text TRL moves into the prompt: the remedy names --explicit-prompt, and a scan
    written with it no longer offers it."""
    only = ["prefix_pair", "split_word"]
    audit = pairaudit.scan(source, out=tmp_path / "a", only=only, quiet=True)
    rem = audit.report["remedies"]
    rows = {n: audit.report["checks"][n]["rows"] for n in only}
    assert rows["prefix_pair"] > 0 and set(rem) == {n for n in only if rows[n]}
    assert all("--explicit-prompt" in r["text"] and r["rows"] == rows[n] for n, r in rem.items())
    written = pairaudit.scan(source, out=tmp_path / "b", only=only, explicit_prompt=True, quiet=True)
    assert written.report["remedies"] == {}


def test_the_95_percent_length_is_an_order_statistic() -> None:
    """Independent tester's case: 20 rows, one of them 1.2M tokens: 95% of the rows (19) are whole at the 19th
    shortest length, not at the longest row's (a quantile with 'higher' interpolation gave the maximum)."""
    import polars as pl

    from pairaudit.outputs.remedies import _keeps

    total = pl.Series([100 + i for i in range(19)] + [1_248_408])
    assert _keeps(total, 0.95) == 118 and _keeps(total, 0.99) == 1_248_408
    assert _keeps(pl.Series([5]), 0.95) == 5

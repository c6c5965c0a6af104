"""`pairaudit show`: one check's rows, most severe first, a page at a time; the word diff marked in plain text
when the output is not a terminal (piped, redirected: what CliRunner captures)."""

from __future__ import annotations

from pathlib import Path

from support.report_fixtures import write_out
from typer.testing import CliRunner

from pairaudit.cli import app

runner = CliRunner()


def test_show_check_pages_most_severe_first(tmp_path: Path) -> None:
    out = write_out(tmp_path)
    res = runner.invoke(app, ["show", str(out), "--check", "contradictory_pair", "--per-page", "1"])
    assert res.exit_code == 0, res.output
    assert "contradictory_pair: 2 rows, most severe first (page 1 of 2)" in res.output
    assert "│ 0 " in res.output and "│ 4 " not in res.output  # equal (null) scores: by row
    assert f"next: pairaudit show {out} --check contradictory_pair --page 2" in res.output
    res = runner.invoke(app, ["show", str(out), "--check", "contradictory_pair", "--per-page", "1", "--page", "2"])
    assert res.exit_code == 0 and "(page 2 of 2)" in res.output and "│ 4 " in res.output and "│ 0 " not in res.output
    assert "next:" not in res.output
    res = runner.invoke(app, ["show", str(out), "--check", "length_outlier"])
    assert "3.2 MADs below" in res.output and "│ 6 " in res.output and "A carrot." in res.output
    res = runner.invoke(app, ["show", str(out), "--check", "contradictory_pair", "--page", "3"])
    assert res.exit_code == 2 and "it has 2 rows, 1 page(s) of 20" in res.output and "--page 1" in res.output
    res = runner.invoke(app, ["show", str(out), "--check", "no_such_check"])
    assert res.exit_code == 2 and "no check 'no_such_check'" in res.output and "contradictory_pair" in res.output
    res = runner.invoke(app, ["show", str(out)])
    assert res.exit_code == 2 and "needs a ROW or --check CHECK" in res.output
    res = runner.invoke(app, ["show", str(out), "42"])
    assert res.exit_code == 2 and f"pairaudit show {out} --check CHECK" in res.output


def test_show_order_is_drops_then_score(tmp_path: Path) -> None:
    import polars as pl

    from pairaudit.outputs.reader import OutputFolder
    from pairaudit.report.console import check_rows

    out = write_out(tmp_path)
    f = pl.read_parquet(out / "findings.parquet")
    extra = pl.DataFrame({"row": [0, 2, 4], "check": ["length_outlier"] * 3, "action": ["flag", "drop", "flag"],
                          "field": [None] * 3, "score": [9.0, 1.0, None], "group": [None] * 3,
                          "detail": ["a", "b", "c"]}, schema=f.schema)
    pl.concat([f, extra]).sort("row").write_parquet(out / "findings.parquet")
    assert [r["row"] for r in check_rows(OutputFolder.open(out), "length_outlier")] == [2, 0, 6, 4]


def test_word_diff_is_marked_in_plain_text(tmp_path: Path) -> None:
    out = write_out(tmp_path)
    res = runner.invoke(app, ["show", str(out), "0"])
    assert res.exit_code == 0, res.output
    assert "[-only in chosen-] {+only in rejected+}" in res.output
    assert "[-The-]{+France has no+} capital{+,+} [-of France-]{+it+} is [-Paris-]{+ruled from Lyon+}." in res.output
    assert "\x1b[" not in res.output  # no colour codes either


def test_inline_diff_round_trips() -> None:
    from pairaudit.report.diff import inline_diff, segments_plain

    a, b = "The cat sat on the mat.", "The dog sat on a mat!"
    segs = inline_diff(a, b)
    assert "".join(t for k, t in segs if k != "ins") == a and "".join(t for k, t in segs if k != "del") == b
    assert segments_plain(segs) == "The [-cat-]{+dog+} sat on [-the-]{+a+} mat[-.-]{+!+}"

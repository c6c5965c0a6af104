"""Notebook review helper: browsing, decisions file, and the decide -> apply -> rescan loop."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import polars as pl
import pytest
from support.report_fixtures import write_out

from pairaudit.errors import ConfigError, InputError, MissingDependency
from pairaudit.review import Review, load_decisions

HAVE_PIPELINE = importlib.util.find_spec("pairaudit.pipeline") is not None


def test_findings_filters(tmp_path: Path) -> None:
    rv = Review(write_out(tmp_path))
    all_f = rv.findings()
    assert all_f.height == pl.read_parquet(rv.out_dir / "findings.parquet").height
    drops = rv.findings(action="drop")
    assert set(drops["action"]) == {"drop"} and drops.height == 3
    con = rv.findings(check="contradictory_pair")
    assert sorted(con["row"]) == [0, 4]
    with pytest.raises(ConfigError, match="unknown check 'no_such_check'"):
        rv.findings(check="no_such_check")
    with pytest.raises(ConfigError, match="unknown action"):
        rv.findings(action="delete")


def test_pair_view_is_escaped(tmp_path: Path) -> None:
    rv = Review(write_out(tmp_path))
    view = rv.pair(2)
    html = view._repr_html_()
    assert "<script>" not in html and "<img" not in html and "<iframe" not in html
    assert "&lt;script&gt;document.title=" in html
    assert "encoding_error" in html
    assert "row 2" in repr(view)
    with pytest.raises(InputError, match="row 42 is not in the scan"):
        rv.pair(42)


def test_pair_view_without_ipywidgets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("IPython")
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import fails as if not installed
    view = Review(write_out(tmp_path)).pair(7)
    with pytest.raises(MissingDependency, match=r"pairaudit\[review\]"):
        view.widget()
    shown: list[object] = []
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: shown.append(a[0]))
    view._ipython_display_()  # degrades to plain HTML
    assert isinstance(shown[0], dict) and "One, two, three" in shown[0]["text/html"].replace('<mark class="ins">', "")


def test_decide_appends_with_pair_hash(tmp_path: Path) -> None:
    out = write_out(tmp_path)
    rv = Review(out)
    hashes = dict(pl.read_parquet(out / "scores.parquet").select("row", "pair_hash").iter_rows())
    d1 = rv.decide(1, "keep", note="the identical pair is intentional")
    rv.decide(4, "flip")
    rv.decide(4, "drop", note="changed my mind")
    assert d1.pair_hash == hashes[1]
    lines = [json.loads(x) for x in (out / "decisions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [x["row"] for x in lines] == [1, 4, 4]
    assert set(lines[0]) == {"row", "decision", "note", "pair_hash", "reviewer", "time", "action"}
    assert lines[0]["time"].endswith("Z") and isinstance(lines[0]["reviewer"], str)
    loaded = load_decisions(out / "decisions.jsonl")
    assert loaded[4].decision == "drop" and loaded[4].note == "changed my mind"  # later lines win
    assert loaded[1].pair_hash == hashes[1]
    assert rv.decisions() == loaded
    assert "recorded decision: <b>drop</b>" in rv.pair(4)._repr_html_()
    with pytest.raises(ConfigError, match="unknown decision 'maybe'"):
        rv.decide(1, "maybe")
    with pytest.raises(InputError, match="row 99"):
        rv.decide(99, "keep")
    # the report lists recorded decisions
    from pairaudit.report import render_report

    html = render_report(out).read_text(encoding="utf-8")
    assert "Recorded decisions (2)" in html and "changed my mind" in html


# ------------------------------------------------------------------ with the real pipeline
PAIRS = [
    {"prompt": "What is 2+2?", "chosen": "2+2 is 4.", "rejected": "2+2 is 5, famously."},
    {"prompt": "Say hi", "chosen": "Hello there, friend!", "rejected": "Hello there, friend!"},
    {"prompt": "Name a colour.", "chosen": "Blue is a colour.", "rejected": "Seven is a colour."},
    {"prompt": "What is 2+2?", "chosen": "2+2 is 4.", "rejected": "2+2 is 5, famously."},
    {"prompt": "Capital of Italy?", "chosen": "Rome is the capital.", "rejected": "Milan, surely."},
    {"prompt": "Best pet?", "chosen": "Cats are independent.", "rejected": "Dogs are loyal companions."},
]
ONLY = ["malformed_record", "identical_pair", "duplicate_pair"]


def _write_source(path: Path, pairs: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
    return path


def _clean(out: Path) -> list[dict[str, str]]:
    return [json.loads(x) for x in (out / "clean.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.skipif(not HAVE_PIPELINE, reason="pairaudit.pipeline not built yet")
def test_decide_apply_rescan_apply(tmp_path: Path) -> None:
    import pairaudit

    src = _write_source(tmp_path / "pairs.jsonl", PAIRS)
    out = tmp_path / "out"
    audit = pairaudit.scan(src, out=out, only=ONLY, log=lambda m: None)
    dropped_rows = set(audit.findings.filter(pl.col("action") == "drop")["row"])
    assert dropped_rows == {1, 3}  # identical pair, duplicate of row 0
    before = _clean(out)
    assert len(before) == 4

    rv = Review(out)
    rv.decide(1, "keep", note="fine")
    rv.decide(2, "drop", note="nonsense rejected")
    rv.decide(5, "flip", note="labels swapped")
    rv.apply()
    first = (out / "clean.jsonl").read_bytes()
    clean = _clean(out)
    assert PAIRS[1] in clean  # kept despite identical_pair
    assert PAIRS[2] not in clean  # dropped by review
    flipped = {**PAIRS[5], "chosen": PAIRS[5]["rejected"], "rejected": PAIRS[5]["chosen"]}
    assert flipped in clean and PAIRS[5] not in clean
    dropped = [json.loads(x) for x in (out / "dropped.jsonl").read_text(encoding="utf-8").splitlines()]
    reasons = {d["row"]: d["reasons"] for d in dropped}
    assert "review" in reasons[2] and 1 not in reasons
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["decisions"]["applied"] == 3 and report["decisions"]["ignored"] == []
    assert report["totals"]["kept"] + report["totals"]["dropped"] == len(PAIRS)
    assert "Review decisions applied" in (out / "report.html").read_text(encoding="utf-8")

    # a rescan keeps decisions.jsonl and applies it; applying again changes nothing
    pairaudit.scan(src, out=out, only=ONLY, log=lambda m: None)
    assert (out / "clean.jsonl").read_bytes() == first
    Review(out).apply()
    assert (out / "clean.jsonl").read_bytes() == first

    # the source row behind a decision changes: that decision is ignored, the others still apply
    changed = [dict(p) for p in PAIRS]
    changed[5]["chosen"] = "Cats, obviously."
    _write_source(src, changed)
    pairaudit.scan(src, out=out, only=ONLY, log=lambda m: None)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert [i["row"] for i in report["decisions"]["ignored"]] == [5]
    assert changed[5] in _clean(out) and PAIRS[2] not in _clean(out)


# ------------------------------------------------------------------ queues: reviewing many rows
def test_queue_walks_unreviewed_rows_most_severe_first(tmp_path: Path) -> None:
    rv = Review(write_out(tmp_path))
    q = rv.queue()
    # rows the scan drops first, then by the scan's check order, then score; malformed_record (cannot be
    # kept) is left out: identical_pair 1, duplicate_pair 3 (drops), then encoding_error 2,
    # near_identical_pair 7, length_outlier 6, contradictory_pair 0 and 4 (flags)
    assert q.rows == [1, 3, 2, 7, 6, 0, 4] and (q.total, q.reviewed, q.remaining) == (7, 0, 7)
    assert q.next().row == 1 and q.current == 1
    q.decide(q.current, "keep", note="fine")
    assert q.next().row == 3
    q.skip()  # row 3 goes to the end for this session
    assert q.next().row == 2 and q.pending()[-1] == 3
    rv.decide(3, "drop")  # decisions made elsewhere count too
    assert q.reviewed == 2 and len(q) == 5 and "2/7 reviewed" in repr(q)
    assert [v.row for v in q] == [2, 7, 6, 0, 4]
    flags = rv.queue(check="contradictory_pair", action="flag")
    assert flags.rows == [0, 4] and flags.reviewed == 0
    prog = {r["check"]: (r["rows"], r["reviewed"], r["remaining"]) for r in rv.progress().iter_rows(named=True)}
    assert prog["contradictory_pair"] == (2, 0, 2) and prog["duplicate_pair"] == (1, 1, 0)
    assert prog["(all but malformed_record)"] == (7, 2, 5)


def test_queue_filters_add_up(tmp_path: Path) -> None:
    rv = Review(write_out(tmp_path))
    assert rv.queue(action="flag").rows == [2, 7, 6, 0, 4]
    assert rv.queue(action="flag").filter(min_score=0.9).rows == [7, 6]
    assert rv.queue(min_score=0.9).filter(check="length_outlier").rows == [6]
    assert rv.queue(action="drop").rows == [1, 3]
    assert rv.queue(text="FRANCE").rows == [3, 0, 4]  # case-insensitive, in the pair's texts
    assert rv.queue(text="carrot").rows == [6]
    assert rv.queue(action="flag", text="france").rows == [0, 4]
    assert rv.queue(text="no such text anywhere").rows == []
    table = rv.queue(action="flag").table()
    assert table["row"].to_list() == [2, 7, 6, 0, 4] and table["decision"].null_count() == 5


def test_decide_many_is_one_validated_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    out = write_out(tmp_path)
    rv = Review(out)
    fsyncs: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (fsyncs.append(fd), real(fd))[1])
    with pytest.raises(InputError, match=r"row\(s\) \[99\]"):
        rv.decide_many([1, 99], "drop")
    assert not (out / "decisions.jsonl").exists()  # nothing written when one row is wrong
    done = rv.queue().decide_rest("flip", note="bulk")
    # the guard: rows the scan drops (identical_pair 1, duplicate_pair 3) are not flipped back in
    assert len(done) == 5 and len(fsyncs) == 1
    assert done.held == {"identical_pair": [1], "duplicate_pair": [3]} and "force=True" in repr(done)
    lines = [json.loads(x) for x in (out / "decisions.jsonl").read_text(encoding="utf-8").splitlines()]
    hashes = dict(pl.read_parquet(out / "scores.parquet").select("row", "pair_hash").iter_rows())
    assert [x["row"] for x in lines] == [0, 2, 4, 6, 7]
    assert all(x["pair_hash"] == hashes[x["row"]] and x["note"] == "bulk" for x in lines)
    assert rv.queue().pending() == [1, 3]
    # force for one check lets that check's rows through, not the other's
    some = rv.queue().decide_rest("flip", force=["identical_pair"])
    assert [d.row for d in some] == [1] and some.held == {"duplicate_pair": [3]}
    assert [d.row for d in rv.queue().decide_rest("drop")] == [3]  # drop needs no force
    assert rv.queue().next() is None and rv.queue().remaining == 0


def test_queue_widget_records_and_moves_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ipywidgets")
    rv = Review(write_out(tmp_path))
    q = rv.queue(check="contradictory_pair")
    box = q.widget()
    filters, _, status, pair_html, controls, key_row = box.children
    buttons = {b.description: b for b in controls.children if hasattr(b, "on_click")}
    note = [c for c in controls.children if not hasattr(c, "on_click")][0]
    keys, message = key_row.children
    assert "0 of 2 reviewed · row 0" in status.value and "row 0" in pair_html.value
    note.value = "checked by hand"
    buttons["flip"].click()
    assert rv.decisions()[0].decision == "flip" and rv.decisions()[0].note == "checked by hand"
    assert "1 of 2 reviewed · row 4" in status.value and note.value == ""
    buttons["skip"].click()
    assert "row 4" in status.value  # the only row left comes back
    buttons["drop"].click()
    assert "every row of this queue has a decision" in pair_html.value and buttons["keep"].disabled
    buttons["undo"].click()  # row 4's drop taken back: it is current again
    assert 4 not in rv.decisions() and "1 of 2 reviewed · row 4" in status.value
    keys.value = "k"  # keyboard: k keep
    assert rv.decisions()[4].decision == "keep" and keys.value == ""
    keys.value = "u"
    assert 4 not in rv.decisions()
    keys.value = "x"
    assert "unknown key" in message.value
    check, action = filters.children  # the check filter rebuilds the queue
    check.value = "length_outlier"
    assert box.queue.rows == [6] and "row 6" in status.value
    action.value = "drop"
    assert box.queue.rows == [] and "every row of this queue has a decision" in pair_html.value
    # a pair shown with widgets: its static HTML is an output of its own (static viewers show it), the
    # buttons a second output, a widget without the pair
    shown: list[object] = []
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: shown.append(a[0]))
    rv.pair(7)._ipython_display_()
    assert 'class="pa-sides"' in shown[0]["text/html"]
    assert "application/vnd.jupyter.widget-view+json" not in shown[0]
    import ipywidgets

    assert isinstance(shown[1], ipywidgets.VBox) and not any(isinstance(c, ipywidgets.HTML) and "pa-sides" in c.value
                                                              for c in shown[1].children)


@pytest.mark.skipif(not HAVE_PIPELINE, reason="pairaudit.pipeline not built yet")
@pytest.mark.parametrize("limits", [{}, {"max_length": 64}])
def test_apply_without_decisions_changes_nothing_and_keeps_provenance(tmp_path: Path, limits: dict) -> None:
    from conftest import output_files
    from typer.testing import CliRunner

    import pairaudit
    from pairaudit.cli import app

    src = _write_source(tmp_path / "pairs.jsonl", PAIRS)
    out = tmp_path / "out"
    pairaudit.scan(src, out=out, only=ONLY, log=lambda m: None, progress=False, **limits)
    before = output_files(out)
    res = CliRunner().invoke(app, ["apply", str(out)])
    assert res.exit_code == 2 and "no review decisions" in res.output and "nothing changed" in res.output
    assert output_files(out) == before  # byte for byte
    with pytest.raises(InputError, match="nothing to apply"):
        Review(out).apply()
    # with a decision: the trainer provenance in report.json stays as the scan recorded it
    Review(out).decide(2, "drop")
    assert CliRunner().invoke(app, ["apply", str(out), "-q"]).exit_code == 0
    old, new = (json.loads(b) for b in (before["report.json"], (out / "report.json").read_bytes()))
    assert new["assumptions"] == old["assumptions"] and new["config"] == old["config"]
    assert old["assumptions"]["trainer"]["from_profile_defaults"] == sorted(
        {"max_length", "max_prompt_length", "max_completion_length", "truncation_mode"} - set(limits))
    assert new["totals"]["dropped"] == old["totals"]["dropped"] + 1

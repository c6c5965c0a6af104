"""report.html's table of flagged rows in real headless Chromium, for a scan of real HH rows with over
1,000 flagged rows: picking a check or an action, searching, sorting by score and paging change the rows
shown, and they are the rows findings.parquet says; no console error, no network request."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from conftest import CHEAP, HH, write_jsonl
from support.browser import Browser, chromium

pairaudit = pytest.importorskip("pairaudit.api")
pytest.importorskip("jinja2")

ROWS_JS = """Array.from(document.querySelectorAll('#pa-rows-body tr')).map(tr => {
  const td = tr.querySelectorAll('td');
  return {row: Number(tr.dataset.row), action: td[1].textContent,
          checks: Array.from(td[2].querySelectorAll('.pa-tag')).map(s => s.textContent.split(' ')[0]),
          score: td[3].textContent === '' ? null : Number(td[3].textContent), detail: td[4].textContent};
})"""


def pick(b: Browser, select_id: str, label: str) -> None:
    """Choose the option shown as ``label`` in a <select>, as a user does (fires 'change')."""
    ok = b.js(f"""(() => {{ const s = document.getElementById({json.dumps(select_id)});
      const o = Array.from(s.options).find(o => o.textContent === {json.dumps(label)});
      if (!o) return false; s.value = o.value; s.dispatchEvent(new Event('change', {{bubbles: true}})); return true; }})()""")
    assert ok, (select_id, label)


def recs_prompt(out: Path, row: int) -> str:
    from pairaudit.review import Review

    return Review(out)._folder.pairs([row])[row].prompt or ""


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not HH.exists():
        pytest.skip("real data not present")
    root = tmp_path_factory.mktemp("browser")
    recs = [json.loads(line) for line in HH.read_text(encoding="utf-8").splitlines()[:1400]]
    recs[5]["rejected"] = recs[5]["chosen"]  # one planted identical pair (a drop)
    src = write_jsonl(root / "hh.jsonl", recs)
    out = root / "out"
    pairaudit.scan(src, out=out, only=CHEAP, max_length=96, log=lambda m: None, progress=False)
    return out


def test_filter_sort_search_page_1000_flagged_rows(scanned: Path) -> None:
    exe = chromium()
    if exe is None:
        pytest.fail("headless Chromium is not installed; run scripts/install_browser.sh — CI installs it")
    f = pl.read_parquet(scanned / "findings.parquet")
    flagged = f["row"].n_unique()
    assert flagged >= 1000, flagged
    page = scanned / "report.html"
    assert page.stat().st_size < 1_000_000
    b = Browser(exe)
    try:
        b.open(page)
        assert b.js("document.getElementById('pa-controls').hidden") is False  # the script ran
        rows = b.js(ROWS_JS)
        assert len(rows) == 50 and f"of {flagged} (" in b.js("document.getElementById('pa-count').textContent")
        n_drop = f.filter(pl.col("action") == "drop")["row"].n_unique()
        assert [r["action"] for r in rows[:n_drop]] == ["drop"] * n_drop and rows[n_drop]["action"] == "flag"

        # pick a check: only its rows, as many as findings.parquet has
        pick(b, "pa-f-check", "length_outlier")
        lo = f.filter(pl.col("check") == "length_outlier")
        shown = b.js(ROWS_JS)
        assert shown and all("length_outlier" in r["checks"] for r in shown)
        assert f"of {lo['row'].n_unique()} (" in b.js("document.getElementById('pa-count').textContent") or \
            lo["row"].n_unique() <= 50 and len(shown) == lo["row"].n_unique()

        # sort by score: highest length_outlier score first, descending
        pick(b, "pa-sort", "score, highest first")
        shown = b.js(ROWS_JS)
        scores = [r["score"] for r in shown]
        assert scores == sorted(scores, reverse=True)
        assert shown[0]["row"] in lo.filter(pl.col("score") == lo["score"].max())["row"].to_list()

        # action drop over every check: exactly the rows some check drops
        pick(b, "pa-f-check", "every check")
        pick(b, "pa-f-action", "drop")
        drops = set(f.filter(pl.col("action") == "drop")["row"].to_list())
        shown = b.js(ROWS_JS)
        assert {r["row"] for r in shown} == drops and all(r["action"] == "drop" for r in shown)

        # search: a word of one row's prompt finds that row
        pick(b, "pa-f-action", "drop and flag")
        b.js("(() => { const q = document.getElementById('pa-q'); q.value = 'row 5 missing'; "
             "q.dispatchEvent(new Event('input')); })()")
        assert b.js(ROWS_JS) == []
        b.js("(() => { const q = document.getElementById('pa-q'); q.value = 'identical_pair'; "
             "q.dispatchEvent(new Event('input')); })()")
        ident = set(f.filter(pl.col("check") == "identical_pair")["row"].to_list())
        found = b.js(ROWS_JS)  # identical_pair and near_identical_pair rows
        assert 5 in ident and ident <= {r["row"] for r in found}
        assert all(any(c.endswith("identical_pair") for c in r["checks"]) for r in found)
        words = " ".join(recs_prompt(scanned, 700).split()[1:4])  # words of a real prompt (in its snippet)
        b.js(f"(() => {{ const q = document.getElementById('pa-q'); q.value = {json.dumps(words)}; "
             "q.dispatchEvent(new Event('input')); })()")
        found = b.js(ROWS_JS)
        assert 700 in [r["row"] for r in found] or 700 not in f["row"].to_list()
        assert found and all(words.lower() in r["detail"].lower() for r in found)
        b.js("(() => { const q = document.getElementById('pa-q'); q.value = ''; q.dispatchEvent(new Event('input')); })()")

        # paging: the next page shows the next 50 rows in the same order
        pick(b, "pa-sort", "row number")
        first = [r["row"] for r in b.js(ROWS_JS)]
        b.js("document.getElementById('pa-next').click()")
        second = [r["row"] for r in b.js(ROWS_JS)]
        every = sorted(f["row"].unique().to_list())
        assert first == every[:50] and second == every[50:100]
        assert "page 2 of" in b.js("document.getElementById('pa-page').textContent")

        # a check section's link opens the table on that check
        b.js("location.hash = '#rows=identical_pair'")
        __import__("time").sleep(0.3)
        assert [r["row"] for r in b.js(ROWS_JS)] == sorted(ident)
        assert b.console_errors() == [] and b.requests() == []
    finally:
        b.close()

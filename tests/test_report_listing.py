"""report.html reaches every flagged row (the embedded table, paged and filtered in the browser: see
test_report_browser.py) within a text budget, and shows pairs as the trainer sees them after truncation."""

from __future__ import annotations

import html as htmlmod
import json
import re
from pathlib import Path

import polars as pl
import pytest
from conftest import write_jsonl
from support.report_fixtures import write_out

import pairaudit
from pairaudit.outputs.reader import OutputFolder
from pairaudit.report import render_report, table


def _data(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="pa-data">(.*?)</script>', page, re.S)
    assert m, "the page embeds the table of flagged rows"
    return json.loads(m.group(1))


def test_every_flagged_row_is_in_the_table(tmp_path: Path) -> None:
    out = write_out(tmp_path)
    page = render_report(out).read_text(encoding="utf-8")
    data = _data(page)
    findings = pl.read_parquet(out / "findings.parquet")
    table = {(data["checks"][r[1][i]], r[0]) for r in data["rows"] for i in range(0, len(r[1]), 3)}
    assert table == set(findings.select("check", "row").unique().iter_rows())
    # most severe first: rows a check drops, then by the scan's check order, then score
    assert [r[0] for r in data["rows"]] == [5, 1, 3, 2, 7, 6, 0, 4]
    assert "Rows with findings (8)" in page and 'href="#rows=contradictory_pair"' in page
    # the first page is also plain HTML (viewers without scripts); the payload stays escaped in the JSON
    assert page.count('<tr data-row="') == 8
    assert "<script>document.title" not in page.split('id="pa-data">', 1)[1].split("</script>", 1)[0]


def test_text_budget_keeps_large_tables_small(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [{"prompt": f"Question {i}? " + "context " * 40, "chosen": f"Same answer {i}. " + "word " * 80,
             "rejected": f"Same answer {i}. " + "word " * 80} for i in range(230)]
    rows.insert(7, {"prompt": "Unique?", "chosen": "Yes, unique.", "rejected": "No."})
    src = write_jsonl(tmp_path / "p.jsonl", rows)
    audit = pairaudit.scan(src, out=tmp_path / "out", only=["identical_pair"], log=lambda m: None)
    flagged = audit.findings["row"].unique().sort().to_list()
    assert len(flagged) == 230 and 7 not in flagged
    data = _data((tmp_path / "out" / "report.html").read_text(encoding="utf-8"))
    assert sorted(r[0] for r in data["rows"]) == flagged
    assert data["snippet"] == table.SNIPPET_MAX and "Question 140?" in next(r[3] for r in data["rows"] if r[0] == 141)
    # with a small budget each row keeps less detail and text, and below the minimum no text
    monkeypatch.setattr(table, "TEXT_BUDGET", 230 * 100)
    data = table.table_data(OutputFolder.open(tmp_path / "out"))
    detail = len(data["details"][0])
    assert len(data["details"]) == 1 and 0 < detail <= table.DETAIL_MAX  # one detail text, interned
    assert data["snippet"] == 100 - detail and all(len(r[3]) <= 100 - detail for r in data["rows"])
    monkeypatch.setattr(table, "TEXT_BUDGET", 230 * 10)
    data = table.table_data(OutputFolder.open(tmp_path / "out"))
    assert data["snippet"] == 0 and all(r[3] == "" for r in data["rows"])
    assert all(len(d) <= table.DETAIL_MIN for d in data["details"])
    assert len(table.data_json(data)) < 230 * 60


def test_trainer_view_shows_what_survives_truncation(tmp_path: Path) -> None:
    long_prompt = " ".join(f"word{i}" for i in range(120))
    rows = [{"prompt": long_prompt + " END", "chosen": "The chosen answer.", "rejected": "The rejected answer."},
            {"prompt": "Short?", "chosen": "Fine.", "rejected": "Also fine, but longer."}]
    src = write_jsonl(tmp_path / "p.jsonl", rows)
    audit = pairaudit.scan(src, out=tmp_path / "out", only=["too_long", "identical_pair"], max_length=32,
                           log=lambda m: None)
    assert audit.findings.filter(pl.col("check") == "too_long")["row"].unique().to_list() == [0]
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    # what the trainer keeps, computed with the public tokenize API and the scan's own settings
    from pairaudit.report.trainer_view import trainer_tokenizer
    from pairaudit.review import Review
    from pairaudit.trainer.truncation import kept_sequence

    rv = Review(tmp_path / "out")
    tok, note = trainer_tokenizer(rv.report)
    assert tok is not None, note
    pair = rv.pair(0).pair
    enc = tok.encode_pairs([pair])[0]
    prompt_ids, chosen_ids = kept_sequence(enc.prompt_ids, enc.chosen_ids, enc.chosen_kept, tok.truncation_mode)
    assert len(prompt_ids) + len(chosen_ids) <= 32 < len(enc.prompt_ids) + len(enc.chosen_ids)
    kept_prompt = tok.tok.decode(prompt_ids, skip_special_tokens=False)
    cut = len(enc.prompt_ids) - len(prompt_ids)
    block = page[page.index("as the trainer sees it: truncated"):]
    block = block[:block.index("</details>")]
    assert f"prompt {len(enc.prompt_ids)} → {len(prompt_ids)}" in block
    assert f"[… {cut} tokens cut …]" in block
    assert htmlmod.escape(kept_prompt, quote=False) in block
    # the review shows the same view
    assert "as the trainer sees it: truncated" in rv.pair(0)._repr_html_()


def _reference_rows(path: Path, cidx: dict, limit: int) -> tuple[list, int]:
    """The table's rows as the previous implementation chose them (every finding as Python objects, a heap of
    the most severe): the oracle ``table._most_severe`` + ``table._items_of`` must agree with."""
    import heapq
    import itertools

    import pyarrow.parquet as pq

    def rows_of():
        t = pq.read_table(path, columns=["row", "check", "action", "score", "detail"]).to_pylist()
        for row, group in itertools.groupby(t, key=lambda f: f["row"]):  # findings are in row order
            yield row, [(f["check"], f["action"], f["score"], f["detail"]) for f in group]

    heap, n = [], 0
    for row, items in rows_of():
        n += 1
        items.sort(key=lambda t: (t[1] != "drop", cidx[t[0]], -(t[2] if t[2] is not None else float("-inf"))))
        fs = []
        for check, action, score, _ in items:
            fs.extend([cidx[check], 0 if action == "drop" else 1, None if score is None else float(f"{score:.3g}")])
        key = (fs[1], fs[0], -(fs[2] if fs[2] is not None else -1e300), row)
        entry = (tuple(-x for x in key), [row, fs, items[0][3] or ""])
        if len(heap) < limit:
            heapq.heappush(heap, entry)
        elif entry[0] > heap[0][0]:
            heapq.heapreplace(heap, entry)
    return sorted(e for _, e in heap), n


@pytest.mark.parametrize(("seed", "limit", "batch"), [(0, 50, 37), (1, 400, 64), (2, 10_000, 1000), (3, 1, 5)])
def test_most_severe_rows_are_chosen_in_batches_as_by_the_heap(tmp_path: Path, seed: int, limit: int, batch: int,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The table picks its rows from numeric columns a batch at a time (a 1M-row scan's 119k flagged rows held
    as Python objects cost the cluster driver ~150 MB): the same rows, findings order, scores (rounded to 3
    digits, ties across rounding included) and details as the heap over every finding, with rows whose
    findings straddle batches, null scores and null actions."""
    import numpy as np

    rng = np.random.default_rng(seed)
    checks = ["empty_response", "identical_pair", "duplicate_pair", "too_long", "split_word"]
    recs = []
    for row in np.sort(rng.choice(5000, 1500, replace=False)).tolist():
        for _ in range(int(rng.integers(1, 5))):
            score = None if rng.random() < 0.15 else float(rng.choice([0.12345, 0.12349, 0.9, 1.0, rng.random()]))
            action = None if rng.random() < 0.05 else str(rng.choice(["drop", "flag"]))
            recs.append({"row": row, "check": str(rng.choice(checks)), "action": action, "field": None,
                         "score": score, "group": None, "detail": f"d{row}-{len(recs)}"})
    path = tmp_path / "findings.parquet"
    pl.DataFrame(recs, schema={"row": pl.Int64, "check": pl.Utf8, "action": pl.Utf8, "field": pl.Utf8,
                               "score": pl.Float64, "group": pl.Int64, "detail": pl.Utf8}).write_parquet(path)
    cidx = {c: i for i, c in enumerate(checks)}
    want, n = _reference_rows(path, cidx, limit)
    monkeypatch.setattr(table, "BATCH_ROWS", batch)
    rows, n_rows = table._most_severe(path, checks, limit)
    assert n_rows == n == 1500 and len(rows) == min(limit, 1500)
    got = []
    for row, items in table._items_of(path, rows):
        items.sort(key=lambda t: (t[1] != "drop", cidx[t[0]], -(t[2] if t[2] is not None else float("-inf"))))
        fs = [x for c, a, s, _ in items for x in (cidx[c], 0 if a == "drop" else 1,
                                                  None if s is None else float(f"{s:.3g}"))]
        got.append([row, fs, items[0][3] or ""])
    assert got == want


def test_severity_ties_after_rounding_go_to_the_lower_row(tmp_path: Path) -> None:
    """The table ranks by the score it shows (3 digits): 0.12349 and 0.12345 tie, and the lower row wins, as
    with the heap (``_reference_rows``), although the raw score of row 2 is higher."""
    path = tmp_path / "findings.parquet"
    pl.DataFrame({"row": [1, 2, 3], "check": ["split_word"] * 3, "action": ["flag"] * 3, "field": [None] * 3,
                  "score": [0.12345, 0.12349, 0.1], "group": [None] * 3, "detail": ["a", "b", "c"]},
                 schema_overrides={"field": pl.Utf8, "group": pl.Int64}).write_parquet(path)
    want, _ = _reference_rows(path, {"split_word": 0}, 1)
    assert [r[0] for r in want] == [1]
    assert table._most_severe(path, ["split_word"], 1)[0].tolist() == [1]

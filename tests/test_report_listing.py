"""report.html reaches every flagged row (paged listings per check) and shows pairs as the trainer sees
them after truncation; the page stays self-contained and escaped."""

from __future__ import annotations

import html as htmlmod
import re
from pathlib import Path

import polars as pl
import pytest
from conftest import write_jsonl
from report_fixtures import write_out

import pairaudit
from pairaudit.report import html as report_html
from pairaudit.report import render_report


def _ids(page: str) -> set[str]:
    return set(re.findall(r'id="([^"]+)"', page))


def test_every_flagged_row_has_an_entry(tmp_path: Path) -> None:
    out = write_out(tmp_path)
    page = render_report(out).read_text(encoding="utf-8")
    ids = _ids(page)
    findings = pl.read_parquet(out / "findings.parquet")
    for check, row in findings.select("check", "row").unique().iter_rows():
        assert f"{check}-row-{row}" in ids, (check, row)
    assert "<script" not in page.replace("&lt;script", "")
    assert "All 2 flagged rows" in page  # contradictory_pair: rows 0 and 4


def test_pages_and_rows_beyond_the_text_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [{"prompt": f"Question {i}?", "chosen": f"Same answer {i}.", "rejected": f"Same answer {i}."}
            for i in range(230)]
    rows.insert(7, {"prompt": "Unique?", "chosen": "Yes, unique.", "rejected": "No."})
    monkeypatch.setattr(report_html, "FULL_ROWS", 150)
    src = write_jsonl(tmp_path / "p.jsonl", rows)
    audit = pairaudit.scan(src, out=tmp_path / "out", only=["identical_pair"], log=lambda m: None)
    flagged = audit.findings["row"].unique().sort().to_list()
    assert len(flagged) == 230 and 7 not in flagged
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    ids = _ids(page)
    assert all(f"identical_pair-row-{r}" in ids for r in flagged)
    assert {f"rows-identical_pair-{k}" for k in (1, 2, 3)} <= ids and "rows-identical_pair-4" not in ids
    assert "1–100 of 230: rows 0 … 100" in page and "201–230 of 230: rows 201 … 230" in page
    # the first 150 listed rows carry their pair; later ones say how to see it
    assert "Same answer 140." in page
    assert "Same answer 200." not in page and "pairaudit show OUT 201" in page


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
    from pairaudit.trainer.tokenizer import kept_sequence

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

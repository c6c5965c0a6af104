"""Python in, Python out: pairaudit.scan on datasets objects, DataFrames and dicts; audit.clean keeps the
source row, audit.keep_mask / scores.kept say what was kept; scores hold null (never NaN) where nothing
was computed."""

from __future__ import annotations

import json
import math
from pathlib import Path

import datasets
import numpy as np
import pandas as pd
import polars as pl
import pytest
from conftest import write_jsonl

import pairaudit
from pairaudit.audit import ROW_COLUMN
from pairaudit.errors import ConfigError, InputError

ONLY = ["malformed_record", "identical_pair", "duplicate_pair", "empty_response", "too_long"]
PAIRS = [
    {"prompt": "What is 2+2?", "chosen": "2+2 is 4.", "rejected": "2+2 is 5, famously.", "id": 10},
    {"prompt": "Say hi", "chosen": "Hello there, friend!", "rejected": "Hello there, friend!", "id": 11},
    {"prompt": "Name a colour.", "chosen": "Blue is a colour.", "rejected": "Seven is a colour.", "id": 12},
    {"prompt": "What is 2+2?", "chosen": "2+2 is 4.", "rejected": "2+2 is 5, famously.", "id": 13},
    {"prompt": "Best pet?", "chosen": "Cats are independent.", "rejected": "   ", "id": 14},
    {"prompt": "Capital of Italy?", "chosen": "Rome is the capital.", "rejected": "Milan, surely.", "id": 15},
]
DROPPED = {1: ["identical_pair"], 3: ["duplicate_pair"], 4: ["empty_response"]}


def _quiet(msg: str) -> None:
    return None


def _gen():
    yield from (dict(p) for p in PAIRS)


MAKERS = {
    "list": (lambda: [dict(p) for p in PAIRS], "clean.jsonl"),
    "generator": (_gen, "clean.jsonl"),
    "dataset": (lambda: datasets.Dataset.from_list(PAIRS), "clean"),
    "iterable_dataset": (lambda: datasets.Dataset.from_list(PAIRS).to_iterable_dataset(num_shards=2), "clean.parquet"),
    "polars": (lambda: pl.DataFrame(PAIRS), "clean.parquet"),
    "pandas": (lambda: pd.DataFrame(PAIRS), "clean.parquet"),
}


@pytest.fixture(scope="module")
def reference_findings(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    tmp = tmp_path_factory.mktemp("ref")
    audit = pairaudit.scan(write_jsonl(tmp / "p.jsonl", PAIRS), out=tmp / "out", only=ONLY, log=_quiet)
    return audit.findings


@pytest.mark.parametrize("kind", list(MAKERS))
def test_python_objects_in_datasets_out(kind: str, tmp_path: Path, reference_findings: pl.DataFrame) -> None:
    make, clean_name = MAKERS[kind]
    audit = pairaudit.scan(make(), out=tmp_path / "out", only=ONLY, log=_quiet)
    # same findings as the same records read from a JSONL file (rows = positions)
    assert audit.findings.equals(reference_findings)
    assert audit.totals == {"input": 6, "kept": 3, "dropped": 3, "flagged": 0, "malformed": 0}
    assert (tmp_path / "out" / clean_name).exists()
    assert audit.report["source"]["path"] is None and audit.report["source"]["kind"]
    # a way back to the source rows, and the keep mask
    assert audit.keep_mask.tolist() == [r not in DROPPED for r in range(6)]
    scores = audit.scores
    assert scores["kept"].to_list() == audit.keep_mask.tolist()
    clean = audit.clean
    assert clean[ROW_COLUMN] == [0, 2, 5]
    assert clean["id"] == [10, 12, 15]  # the source schema is untouched apart from the row column
    assert [c for c in clean.column_names if c != ROW_COLUMN] == list(PAIRS[0])
    dropped = audit.dropped.to_list()
    assert {d["row"]: d["reasons"] for d in dropped} == DROPPED
    assert [d["record"]["id"] for d in dropped] == [11, 13, 14]
    # the report and the review read the texts back from the outputs (the object is not on disk)
    from pairaudit.review import Review

    rv = Review(tmp_path / "out")
    assert rv.pair(1).pair.chosen == "Hello there, friend!" and rv.pair(5).pair.chosen == "Rome is the capital."
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "Hello there, friend!" in html


def test_keep_mask_filters_the_caller_s_own_frame(tmp_path: Path) -> None:
    df = pl.DataFrame(PAIRS)
    audit = pairaudit.scan(df, out=tmp_path / "out", only=ONLY, log=_quiet)
    assert df.filter(audit.keep_mask)["id"].to_list() == [10, 12, 15]
    assert audit.kept_rows.tolist() == [0, 2, 5]
    ds = datasets.Dataset.from_list(PAIRS)
    assert ds.select(np.flatnonzero(audit.keep_mask))["id"] == [10, 12, 15]


def test_bad_items_and_unsupported_objects(tmp_path: Path) -> None:
    items = [dict(PAIRS[0]), "not a record", 42, dict(PAIRS[5])]
    audit = pairaudit.scan(items, out=tmp_path / "out", only=ONLY, log=_quiet)
    bad = audit.findings.filter(pl.col("check") == "malformed_record")
    assert bad["row"].to_list() == [1, 2]
    assert "is a str, expected a dict" in bad["detail"][0]
    assert audit.clean[ROW_COLUMN] == [0, 3]
    dropped = [json.loads(x) for x in (tmp_path / "out" / "dropped.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [d["row"] for d in dropped] == [1, 2] and dropped[0]["raw"] == '"not a record"'
    for obj, match in ((3.5, "cannot scan a float"), (PAIRS[0], "single dict was passed"),
                       (pl.DataFrame(PAIRS).lazy(), "LazyFrame")):
        with pytest.raises(InputError, match=match):
            pairaudit.scan(obj, out=tmp_path / "bad", only=ONLY, log=_quiet)


def test_non_json_values_are_written_faithfully(tmp_path: Path) -> None:
    import datetime

    recs = [{**p, "when": datetime.date(2024, 1, 2), "vec": np.arange(3)} for p in PAIRS[:3]]
    audit = pairaudit.scan(recs, out=tmp_path / "out", only=ONLY, log=_quiet)
    lines = [json.loads(x) for x in (tmp_path / "out" / "clean.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines[0]["when"] == "2024-01-02" and lines[0]["vec"] == [0, 1, 2]
    assert audit.totals["kept"] == 2


def test_iterable_dataset_streams_batch_by_batch(tmp_path: Path) -> None:
    produced = [0]

    def gen():
        for i in range(1200):
            produced[0] += 1
            yield {"prompt": f"Question {i}?", "chosen": f"Answer {i}.", "rejected": f"No answer {i}."}

    seen: list[tuple[int, int]] = []  # (rows reported, items the generator had produced by then)

    def progress(phase: str, done: int, total: int | None) -> None:
        if phase == "read":
            seen.append((done, produced[0]))

    stream = datasets.IterableDataset.from_generator(gen)
    audit = pairaudit.scan(stream, out=tmp_path / "out", only=ONLY, batch_size=200, progress=progress, log=_quiet)
    assert audit.totals["input"] == 1200 and audit.totals["kept"] == 1200
    first_done, first_produced = seen[0]
    assert first_done <= 200 and first_produced <= 400  # read one batch at a time, not all up front
    assert pl.read_parquet(tmp_path / "out" / "clean.parquet").height == 1200  # read a second time to write
    assert audit.clean[ROW_COLUMN][-1] == 1199


def test_row_column_clash_and_another_name(tmp_path: Path) -> None:
    first = pairaudit.scan(datasets.Dataset.from_list(PAIRS), out=tmp_path / "a", only=ONLY, log=_quiet)
    again = pairaudit.scan(first.clean, out=tmp_path / "b", only=ONLY, log=_quiet)  # a column named __pairaudit_row__
    with pytest.raises(ConfigError, match="already has a column '__pairaudit_row__'"):
        _ = again.clean
    second = again.load_clean(row_column="row_in_first_clean")
    assert second[ROW_COLUMN] == [0, 2, 5] and second["row_in_first_clean"] == [0, 1, 2]  # old column untouched


def test_apply_decisions_needs_the_in_memory_source_again(tmp_path: Path) -> None:
    from pairaudit.review import Review

    data = [dict(p) for p in PAIRS]
    pairaudit.scan(data, out=tmp_path / "out", only=ONLY, log=_quiet)
    rv = Review(tmp_path / "out")
    rv.decide(1, "keep", note="fine")
    rv.decide(5, "flip")
    with pytest.raises(InputError, match="in-memory list"):
        rv.apply()
    after = rv.apply(source=data)
    assert after.keep_mask.tolist() == [True, True, True, False, False, True]
    flipped = after.clean.to_list()[-1]
    assert (flipped["chosen"], flipped["rejected"]) == (PAIRS[5]["rejected"], PAIRS[5]["chosen"])


def test_scores_hold_null_not_nan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stage that leaves NaN for rows it did not score (and inf for an overflow) gives null and inf."""
    from pairaudit.stages.lengths import LengthStage

    original = LengthStage.finalize

    def finalize(self):
        res = original(self)
        n = len(res.rows)
        col = np.full(n, np.nan)
        col[0], col[1] = 0.5, np.inf
        res.scores["model_margin"] = col
        return res

    monkeypatch.setattr(LengthStage, "finalize", finalize)
    src = write_jsonl(tmp_path / "p.jsonl", PAIRS)
    pairaudit.scan(src, out=tmp_path / "out", only=["length_outlier", "identical_pair"], log=_quiet)
    scores = pl.read_parquet(tmp_path / "out" / "scores.parquet")
    for name, dtype in scores.schema.items():
        if dtype in (pl.Float32, pl.Float64):
            assert scores[name].is_nan().sum() == 0, name
    margin = scores.sort("row")["model_margin"].to_list()
    assert margin[0] == 0.5 and math.isinf(margin[2]) and margin[3] is None  # row 1 dropped before the stage

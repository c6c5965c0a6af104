"""Several splits of a DatasetDict in one output (--split all / a list), row numbering across splits, and
the split_leakage check (exact, swapped, and near through the near-duplicate stage's findings)."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import polars as pl
import pytest
from typer.testing import CliRunner

import pairaudit
from pairaudit.cli import app
from pairaudit.errors import ConfigError, InputError
from pairaudit.io.hf import parse_split

runner = CliRunner()
ONLY = "malformed_record,identical_pair,duplicate_pair,split_leakage"

TRAIN = [
    {"prompt": "How do I bake sourdough bread at home?",
     "chosen": "Feed your starter, mix flour and water, let it rise overnight, shape it and bake at 230 C.",
     "rejected": "Buy it from a store."},
    {"prompt": "What is the capital of Australia?", "chosen": "Canberra is the capital of Australia.",
     "rejected": "Sydney is the capital."},
    {"prompt": "Give me a tip for learning Python.", "chosen": "Write small programs every day and read code.",
     "rejected": "Just watch videos."},
    {"prompt": "Explain photosynthesis briefly.", "chosen": "Plants turn light, water and CO2 into sugar.",
     "rejected": "Plants eat dirt."},
]
TEST = [
    dict(TRAIN[1]),  # exact leak
    {"prompt": "How do I bake sourdough bread at home?",  # near leak: two characters differ
     "chosen": "Feed your starter, mix flour and water, let it rise overnight, shape it and bake at 230C.",
     "rejected": "Buy it from a store!"},
    {"prompt": "What is the tallest mountain on Earth?", "chosen": "Mount Everest, 8,849 m.",
     "rejected": "K2 is the tallest."},
    {"prompt": TRAIN[2]["prompt"], "chosen": TRAIN[2]["rejected"], "rejected": TRAIN[2]["chosen"]},  # swapped
]
VALID = [{"prompt": "Say hi", "chosen": "Hello there!", "rejected": "Hello there!"},
         {"prompt": "Spell cat.", "chosen": "C-A-T.", "rejected": "K-A-T."}]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dd") / "dd"
    datasets.DatasetDict({"train": datasets.Dataset.from_list(TRAIN), "test": datasets.Dataset.from_list(TEST),
                          "validation": datasets.Dataset.from_list(VALID)}).save_to_disk(str(path))
    return path


@pytest.mark.parametrize(("text", "expected"), [
    (None, None), ("", None), ("all", "all"), ("ALL", "all"), ("train", ["train"]), ("train,test", ["train", "test"]),
    ("train+test", ["train", "test"]), (" train , test ", ["train", "test"]), (["test", "train"], ["test", "train"]),
    ("train[:10%]", ["train[:10%]"]),
])
def test_parse_split(text: object, expected: object) -> None:
    assert parse_split(text) == expected


def test_split_named_twice_is_an_error() -> None:
    with pytest.raises(ConfigError, match="names a split twice"):
        parse_split("train,train")


@pytest.mark.parametrize("split", ["train,test", "train+test"])
def test_two_splits_into_one_output(saved: Path, tmp_path: Path, split: str) -> None:
    out = tmp_path / "out"
    res = runner.invoke(app, ["scan", str(saved), "--out", str(out), "--split", split, "--only", ONLY])
    assert res.exit_code == 0, res.output
    assert "scanning splits train (4 rows), test (4 rows)" in res.output
    scores = pl.read_parquet(out / "scores.parquet").sort("row")
    # row = position over the splits in order; split and split_row say where it came from
    assert scores["row"].to_list() == list(range(8))
    assert scores["split"].to_list() == ["train"] * 4 + ["test"] * 4
    assert scores["split_row"].to_list() == [0, 1, 2, 3, 0, 1, 2, 3]
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["source"]["splits"] == {"train": 4, "test": 4} and report["totals"]["input"] == 8
    leak = pl.read_parquet(out / "findings.parquet").filter(pl.col("check") == "split_leakage").sort("row")
    assert leak["row"].to_list() == [4, 7]  # the exact copy and the swapped copy (no near search here)
    assert leak["group"].to_list() == [1, 2] and leak["action"].to_list() == ["drop", "drop"]
    assert "chosen and rejected swapped" in leak["detail"][1]
    assert report["stats"]["split_leakage"]["near"].startswith("not checked")
    # clean: a DatasetDict of the kept rows per split; dropped: records with their split
    clean = datasets.load_from_disk(str(out / "clean"))
    assert list(clean) == ["train", "test"]
    assert clean["train"].to_list() == TRAIN and clean["test"].to_list() == [TEST[1], TEST[2]]
    dropped = {d["row"]: d for d in datasets.load_from_disk(str(out / "dropped")).to_list()}
    assert set(dropped) == {4, 7}
    assert dropped[7]["split"] == "test" and dropped[7]["split_row"] == 3 and dropped[7]["record"] == TEST[3]
    assert "split_leakage" in dropped[4]["reasons"] and "duplicate_pair" in dropped[4]["reasons"]
    # the report and `show` read the pairs back from both splits
    res = runner.invoke(app, ["show", str(out), "6"])
    assert res.exit_code == 0 and "Everest" in res.output
    audit_clean = pairaudit.audit.Audit(out, report, pl.DataFrame()).clean
    assert audit_clean["test"]["__pairaudit_row__"] == [5, 6]


def test_all_splits_in_the_dataset_order(saved: Path, tmp_path: Path) -> None:
    audit = pairaudit.scan(str(saved), out=tmp_path / "out", split="all", only=ONLY.split(","), log=lambda m: None)
    assert audit.report["source"]["splits"] == {"train": 4, "test": 4, "validation": 2}
    scores = audit.scores
    assert scores.filter(pl.col("split") == "validation")["row"].to_list() == [8, 9]
    assert audit.findings.filter(pl.col("check") == "identical_pair")["row"].to_list() == [8]
    assert sorted(audit.findings.filter(pl.col("check") == "split_leakage")["row"].to_list()) == [4, 7]
    # row 8 (identical pair) is dropped by a per-pair check before whole-dataset stages see it
    assert audit.report["stats"]["split_leakage"]["eval_rows"] == 5


def test_default_split_says_what_else_is_there(saved: Path, tmp_path: Path) -> None:
    msgs: list[str] = []
    # default checks (split_leakage among them) but no embeddings: quick
    audit = pairaudit.scan(str(saved), out=tmp_path / "out", skip=["near_duplicate_pair"], log=msgs.append)
    assert audit.totals["input"] == 4
    assert any("scanning split 'train'; the dataset also has ['test', 'validation']" in m for m in msgs)
    assert audit.report["source"]["other_splits"] == ["test", "validation"]
    info = audit.report["checks"]["split_leakage"]
    assert info["status"] == "off" and "two or more splits" in info["reason"]
    assert "split" not in audit.scores.columns


def test_split_errors(saved: Path, tmp_path: Path) -> None:
    res = runner.invoke(app, ["scan", str(saved), "--out", str(tmp_path / "o"), "--split", "train,dev"])
    assert res.exit_code == 2 and "'dev' is not one of them" in res.output
    no_train = tmp_path / "no_train"
    datasets.DatasetDict({"a": datasets.Dataset.from_list(TRAIN), "b": datasets.Dataset.from_list(TEST)}).save_to_disk(
        str(no_train))
    with pytest.raises(InputError, match="none is 'train'"):
        pairaudit.scan(str(no_train), out=tmp_path / "o2", log=lambda m: None)
    # asking for split_leakage by name on one split is a usage error, not a silent no-op
    res = runner.invoke(app, ["scan", str(saved), "--out", str(tmp_path / "o3"), "--only", "split_leakage"])
    assert res.exit_code == 2 and "split_leakage cannot run" in res.output
    # no split named like train_split: off, with the reason
    audit = pairaudit.scan(str(no_train), out=tmp_path / "o4", split="all", only=ONLY.split(",")[:3],
                           log=lambda m: None)
    assert audit.report["checks"]["split_leakage"]["status"] == "off"
    audit = pairaudit.scan(str(no_train), out=tmp_path / "o5", split="all", log=lambda m: None,
                           only=["duplicate_pair", "split_leakage"], thresholds={"split_leakage": {"train_split": "a"}})
    assert audit.findings.filter(pl.col("check") == "split_leakage")["row"].to_list() == [4, 7]


def test_in_memory_dataset_dict_and_list_of_splits(tmp_path: Path) -> None:
    dd = datasets.DatasetDict({"train": datasets.Dataset.from_list(TRAIN), "test": datasets.Dataset.from_list(TEST)})
    audit = pairaudit.scan(dd, out=tmp_path / "out", split=["test", "train"], only=ONLY.split(","),
                           log=lambda m: None)
    assert audit.scores["split"].to_list()[:1] == ["test"]
    # test comes first here: its rows are 0..3, train rows 4..7; leakage is still flagged on the eval split
    leak = audit.findings.filter(pl.col("check") == "split_leakage").sort("row")
    assert leak["row"].to_list() == [0, 3] and leak["group"].to_list() == [5, 6]
    clean = audit.clean
    assert list(clean) == ["test", "train"] and clean["test"]["__pairaudit_row__"] == [1, 2]


def test_streaming_dict_with_two_splits_is_refused(tmp_path: Path) -> None:
    dd = datasets.IterableDatasetDict({"train": datasets.Dataset.from_list(TRAIN).to_iterable_dataset(),
                                       "test": datasets.Dataset.from_list(TEST).to_iterable_dataset()})
    with pytest.raises(ConfigError, match="streaming"):
        pairaudit.scan(dd, out=tmp_path / "o", split="all", log=lambda m: None)
    audit = pairaudit.scan(dd, out=tmp_path / "o2", split="test", only=ONLY.split(",")[:3], log=lambda m: None)
    assert audit.totals["input"] == 4 and audit.report["source"]["kind"] == "iterable_dataset"


def test_near_leakage_from_the_near_duplicate_stage(saved: Path, tmp_path: Path) -> None:
    """With the embed extra: a test pair two characters away from a train pair is flagged, group = train row."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("faiss")
    audit = pairaudit.scan(str(saved), out=tmp_path / "out", split="train,test", log=lambda m: None,
                           only=["duplicate_pair", "near_duplicate_pair", "split_leakage"])
    leak = audit.findings.filter(pl.col("check") == "split_leakage").sort("row")
    assert leak["row"].to_list() == [4, 5, 7]
    near = leak.filter(pl.col("row") == 5)
    assert near["group"].item() == 0 and 0.9 < near["score"].item() < 1.0
    assert "near duplicate of train row 0" in near["detail"].item()
    assert audit.report["stats"]["split_leakage"]["near"] == 1
    scores = audit.scores.sort("row")["split_leakage_score"].to_list()
    assert scores[:4] == [None] * 4 and scores[6] == 0.0 and scores[4] == 1.0


def test_hub_loads_only_the_chosen_splits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hub id: split names are looked up first, only the chosen splits are downloaded."""
    parts = {"train": TRAIN, "test": TEST, "validation": VALID}
    loaded: list[str] = []

    def fake_load(name: str, subset: str | None = None, split: str | None = None) -> datasets.Dataset:
        assert name == "org/prefs" and split in parts
        loaded.append(split)
        return datasets.Dataset.from_list(parts[split])

    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    monkeypatch.setattr(datasets, "get_dataset_split_names", lambda name, subset=None: list(parts))
    quiet = {"only": ONLY.split(",")[:3], "log": lambda m: None}
    audit = pairaudit.scan("org/prefs", out=tmp_path / "a", **quiet)
    assert loaded == ["train"] and audit.report["source"]["other_splits"] == ["test", "validation"]
    loaded.clear()
    audit = pairaudit.scan("org/prefs", out=tmp_path / "b", split="test,train", **quiet)
    assert loaded[:2] == ["test", "train"] and set(loaded) == {"test", "train"}  # (the report reopens it)
    assert audit.report["source"]["splits"] == {"test": 4, "train": 4}
    with pytest.raises(InputError, match="'dev' is not one of them"):
        pairaudit.scan("org/prefs", out=tmp_path / "c", split="train,dev", **quiet)

"""``pairaudit trace`` on the runs people have: real TRL ``DPOTrainer`` runs (CPU, a tiny Llama built from a config,
a word-level tokenizer, 200 real UltraFeedback rows scanned with the training tokenizer) trained on
{the source, ``audit.clean``, the clean file} x {poisoned row, learning-rate blow-up, large beta, clean run},
each traced {with, without} the recording callback's record.

Every cell gives the right step, exactly the rows the trainer used (in source numbers; the ground truth is the
record's trainer indices mapped through a ``truth_row`` column the trainer carried) and the right top cause, or
"unreliable" with no rows; none gives a wrong row with exit 0. The learning-rate blow-up is found at step 2 with
``learning_rate`` first; the printed fix command, run as printed, keeps the trained rows minus the culprit.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from conftest import SHARED, write_jsonl  # noqa: E402
from support.trace_helpers import read_records, trace_settings  # noqa: E402
from support.trace_matrix import BASE, ML, SCENARIOS, TRAP, save_init, train  # noqa: E402

from pairaudit.trace import dataset, order, record, rows  # noqa: E402
from pairaudit.trace.run import trace  # noqa: E402

UF = SHARED / "ultrafeedback-1k" / "train_clean.jsonl"
KINDS = ("source", "audit_clean", "clean_file")
TOP = {"poisoned": "data", "lr": "learning_rate", "beta": "amplifier"}


@pytest.fixture(scope="module", autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)


def _first_rows(s: Any, cand: np.ndarray, steps: int) -> set[int]:
    table = order.reconstruct(s, len(cand), last_step=steps)[0].with_rows(cand)
    return {int(r) for r in table.data["row"]}


def _plan(data: Path, audit: Path, tok: Path, seed: int) -> int | None:
    """A row the scan keeps that both the source run and the clean run meet in their first 5 steps."""
    s = trace_settings(trainer="trl-dpo", max_length=ML, train_batch_size=2, gradient_accumulation_steps=2,
                       max_steps=BASE["max_steps"], seed=seed, tokenizer=str(tok))
    src = rows.trainer_rows(data, s)
    clean = src[np.isin(src, dataset.kept_rows(audit))]
    both = sorted(_first_rows(s, src, 5) & _first_rows(s, clean, 5))
    return both[0] if both else None


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    import pairaudit

    root = tmp_path_factory.mktemp("matrix")
    recs = read_records(UF, 200)
    data = write_jsonl(root / "uf200.jsonl", recs)
    init = save_init(root / "init", recs, poison=False)
    quiet = {"progress": False, "log": lambda m: None, "skip": ["near_duplicate_pair"]}
    pairaudit.scan(str(data), out=str(root / "audit"), tokenizer=str(init), max_length=ML, **quiet)
    seed, planted = next((sd, p) for sd in range(11, 60) if (p := _plan(data, root / "audit", init, sd)) is not None)
    recs[planted]["chosen"] = f" {TRAP} {recs[planted]['chosen']}"  # TRL joins prompt + chosen: a space keeps it a word
    write_jsonl(data, recs)
    audit = pairaudit.scan(str(data), out=str(root / "audit"), tokenizer=str(init), max_length=ML, **quiet)
    bad = save_init(root / "init-poisoned", recs, poison=True)
    return {"root": root, "data": data, "audit": audit, "init": init, "bad": bad, "planted": planted, "seed": seed}


def _train_set(w: dict[str, Any], kind: str) -> Any:
    import datasets

    from pairaudit.audit import ROW_COLUMN

    if kind == "audit_clean":
        ds = w["audit"].clean
        return ds.add_column("truth_row", ds[ROW_COLUMN])
    path = w["data"] if kind == "source" else w["audit"].out_dir / "clean.jsonl"
    ds = datasets.load_dataset("json", data_files=str(path), split="train")
    truth = list(range(len(ds))) if kind == "source" else w["audit"].kept_rows.tolist()
    return ds.add_column("truth_row", truth)


@pytest.fixture(scope="module")
def runs(world: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    out = {}
    for scenario, args in SCENARIOS.items():
        init = world["bad"] if scenario == "poisoned" else world["init"]
        for kind in KINDS:
            run = world["root"] / f"run-{scenario}-{kind}"
            trainer = train(run, _train_set(world, kind), init, seed=world["seed"], **args)
            truth = np.asarray(trainer.train_dataset["truth_row"], dtype=np.int64)
            table, _ = record.read_record(run / record.RECORD_DIR)
            d = table.data.copy()
            d["row"] = truth[d["index"]]
            out[(scenario, kind)] = {"run": run, "init": init, "truth": record.StepTable(d), "trained": truth}
    return out


def _trace(w: dict[str, Any], r: dict[str, Any], kind: str, use_record: bool, out: Path) -> Any:
    data = w["audit"].out_dir / "clean.jsonl" if kind == "clean_file" else w["data"]
    audit = w["audit"].out_dir if kind == "audit_clean" else None
    if kind == "source":
        audit = w["audit"].out_dir  # the user passes the scan they have; trace tells which set the run used
    return trace(r["run"], data, audit=audit, use_record=use_record, reference=str(r["init"]), out=out,
                 render_html=False, log=lambda m: None)


@pytest.mark.parametrize("use_record", [True, False], ids=["callback", "none"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_matrix_cell(world: dict[str, Any], runs: dict[tuple[str, str], dict[str, Any]], scenario: str, kind: str,
                     use_record: bool, tmp_path: Path) -> None:
    r = runs[(scenario, kind)]
    doc = _trace(world, r, kind, use_record, tmp_path / "t").doc
    if scenario == "clean":
        assert doc["status"] == "no_failure", doc["summary"]
        return
    assert doc["status"] in ("found", "unreliable"), doc["summary"]
    if doc["status"] == "unreliable":  # allowed, but never with rows
        assert doc["rows"] == [] and doc["culprits"] == [] and doc["reliability"]["problems"]
        pytest.fail(f"unreliable where the run's logs should pin the order: {doc['summary']}")
    truth = r["truth"]
    first, last = doc["window"]["first_step"], doc["window"]["last_step"]
    assert doc["window"]["rows"] == sorted({int(x) for x in truth.select(first, last).data["row"]})
    assert doc["order"]["trainer_rows"] == len(r["trained"])
    assert doc["order"]["trainer_dataset"] == ("source" if kind == "source" else "clean")
    if not use_record:
        assert {c["check"]: c["result"] for c in doc["order"]["verification"]}["num_tokens"] == "passed"
    diag = doc["diagnosis"]
    assert diag["top"] == TOP[scenario], diag["summary"]
    if scenario == "poisoned":
        steps = sorted({int(s) for s, x in zip(truth.data["step"], truth.data["row"]) if x == world["planted"]})
        assert last == steps[0] and doc["culprits"] == [world["planted"]]
    if scenario == "lr":
        assert last == 2 and diag["fixes"][0].startswith("learning_rate=5e-06 (was 1000")
        assert "10^8 x the usual DPO range" in diag["causes"][0]["for"][0]
    if scenario == "beta":
        assert any(f.startswith("beta=0.1 (was 50000)") for f in diag["fixes"])
    verdicts = {c["cause"]: c["verdict"] for c in diag["causes"]}
    assert len(verdicts) == len(diag["causes"])  # one verdict per cause, never two


def test_trained_on_audit_clean_traced_against_the_source_alone_is_unreliable(
        world: dict[str, Any], runs: dict[tuple[str, str], dict[str, Any]], tmp_path: Path) -> None:
    """The issue's case: trained on audit.clean (156 rows), traced with --data SOURCE and no --audit (157): the
    per-step token counts disagree, so the answer is "unreliable" (exit 6), never a wrong row."""
    from typer.testing import CliRunner

    from pairaudit.cli import app

    r = runs[("poisoned", "audit_clean")]
    res = CliRunner().invoke(app, ["trace", str(r["run"]), "--data", str(world["data"]), "--no-record",
                                   "--out", str(tmp_path / "t"), "-q"])
    assert res.exit_code == 6, res.output
    doc = json.loads((tmp_path / "t" / "trace.json").read_text())
    assert doc["status"] == "unreliable" and doc["rows"] == [] and doc["culprits"] == []
    failed = {c["check"] for c in doc["order"]["verification"] if c["result"] == "failed"}
    assert "num_tokens" in failed  # (with 167 rows against 166 the epochs disagree too)
    assert doc["order"]["trainer_rows"] == len(r["trained"]) + 1


def test_the_printed_fix_command_keeps_the_trained_rows_minus_the_culprit(
        world: dict[str, Any], runs: dict[tuple[str, str], dict[str, Any]], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from pairaudit.cli import app

    r = runs[("poisoned", "audit_clean")]
    doc = _trace(world, r, "audit_clean", False, world["audit"].out_dir).doc
    cmd = doc["diagnosis"]["fixes"][0].split("   #")[0]
    words = shlex.split(cmd.replace("CLEAN_DIR", str(tmp_path / "fixed")))
    assert words[:3] == ["pairaudit", "scan", str(world["data"])]
    assert ["--tokenizer", str(world["init"])] == words[words.index("--tokenizer"):words.index("--tokenizer") + 2]
    assert ["--max-length", str(ML)] == words[words.index("--max-length"):words.index("--max-length") + 2]
    res = CliRunner().invoke(app, words[1:] + ["-q"])
    assert res.exit_code in (0, 3), res.output
    kept = json.loads((tmp_path / "fixed" / "report.json").read_text())["totals"]["kept"]
    import polars as pl

    rows_kept = pl.read_parquet(tmp_path / "fixed" / "scores.parquet").filter(pl.col("kept"))["row"].to_list()
    assert kept == len(r["trained"]) - 1
    assert sorted(rows_kept) == sorted(set(r["trained"].tolist()) - {world["planted"]})

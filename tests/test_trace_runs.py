"""``pairaudit trace`` on ordinary TRL ``DPOTrainer`` runs (CPU, tiny random Llama models from a config): no --set,
no --trust-pickle, the settings read from ``training_args.bin`` without running code.

- a run with gradient accumulation 2, seed 777, ``max_length`` 40, crashed at step 5 and resumed from
  checkpoint-4, with one row planted to go non-finite at step 7: trace names exactly the rows the trainer used
  at that step (the recording callback is the ground truth) and that row as the culprit; the diagnosis says
  data, with the cleaned-dataset command; without the arguments the trace is unreliable (exit 6), never found;
- a run whose checkpoint-8 holds non-finite weights, resumed from it: the diagnosis says broken weights and
  names checkpoint-4;
- a run whose learning rate is too high for it once warmup ends (SGD, 6 warmup steps): the diagnosis says
  learning rate, with a lower rate and a longer warmup.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from conftest import HH, SHARED, write_jsonl  # noqa: E402
from support.trace_helpers import (  # noqa: E402
    read_records,
    save_init,
    tokenizer,
    trace_settings,
    train_dpo,
    unused_word_token,
)

from pairaudit.trace import order, record, rows  # noqa: E402
from pairaudit.trace.run import trace  # noqa: E402

UF = SHARED / "ultrafeedback-1k" / "train_clean.jsonl"
ML, SEED, PLANT = 40, 777, 7
ARGS = dict(per_device_train_batch_size=2, gradient_accumulation_steps=2, num_train_epochs=1, seed=SEED,
            save_steps=4, logging_steps=1)


@pytest.fixture(scope="module", autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)


@pytest.fixture(scope="module")
def resumed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("resumed")
    recs = read_records(UF, 120)
    trap, word = unused_word_token(tokenizer(), recs)
    data = write_jsonl(root / "uf120.jsonl", recs)
    s = trace_settings(trainer="trl-dpo", max_length=ML, train_batch_size=2, gradient_accumulation_steps=2,
                       num_train_epochs=1, seed=SEED)
    kept = rows.trainer_rows(data, s)
    planted = order.reconstruct(s, len(kept))[0].with_rows(kept).per_step()[PLANT][0][1][0]  # where to plant
    recs[planted]["chosen"] = word + " " + recs[planted]["chosen"]
    write_jsonl(data, recs)
    init = save_init(root / "init", tie=False, trap_token=trap)
    run = root / "run"
    kw = dict(max_length=ML, callback_kwargs={"on_nonfinite": "continue"}, max_steps=10, **ARGS)
    train_dpo(run, data, init, crash_at=5, **kw)
    assert (run / "checkpoint-4").is_dir() and not (run / "checkpoint-8").exists()
    train_dpo(run, data, init, resume=str(run / "checkpoint-4"), **kw)
    return {"run": run, "data": data, "init": init, "planted": planted}


def test_resumed_dpo_run_is_traced_exactly_without_settings(resumed: dict[str, Any], tmp_path: Path) -> None:
    run, planted = resumed["run"], resumed["planted"]
    table, meta = record.read_record(run / record.RECORD_DIR)
    assert [x["start_step"] for x in meta["sessions"]] == [0, 4]
    res = trace(run, resumed["data"], use_record=False, reference=str(resumed["init"]), skip=["near_duplicate_pair"],
                out=tmp_path / "t", log=lambda m: None)
    doc = res.doc
    assert res.found and doc["order"]["source"] == "reconstructed" and doc["reliability"]["reliable"]
    vals = doc["settings"]["values"]
    assert (vals["seed"], vals["gradient_accumulation_steps"], vals["max_length"]) == (SEED, 2, ML)
    assert (doc["event"]["first_step"], doc["event"]["last_step"]) == (PLANT, PLANT)
    truth = table.select(PLANT, PLANT)
    assert doc["window"]["steps"] == {str(PLANT): truth.per_step()[PLANT]}
    assert doc["window"]["rows"] == sorted(set(truth.data["row"].tolist()))
    assert res.culprits == [planted] and doc["suspects"] == []
    diag = doc["diagnosis"]
    assert diag["top"] == "data" and diag["causes"][0]["rows"] == [planted]
    fix = diag["fixes"][0]  # the scan trace ran, reproduced: its tokenizer, max_length, trainer profile, checks
    assert fix.startswith(f"pairaudit scan {resumed['data']} --format standard ") and f"--max-length {ML} " in fix
    assert "--skip near_duplicate_pair " in fix and f" --decisions {tmp_path / 't' / 'trace-drop.jsonl'} " in fix
    drop = [json.loads(x) for x in (tmp_path / "t" / "trace-drop.jsonl").read_text().splitlines()]
    assert [(d["row"], d["decision"]) for d in drop] == [(planted, "drop")]
    assert any(f.startswith(f"resume_from_checkpoint={run / 'checkpoint-4'}") for f in diag["fixes"])


def test_without_the_run_arguments_the_trace_is_unreliable(resumed: dict[str, Any], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from pairaudit.cli import app

    bare = tmp_path / "run"
    shutil.copytree(resumed["run"], bare, ignore=shutil.ignore_patterns("training_args.bin", record.RECORD_DIR,
                                                                         "*.safetensors", "optimizer.pt"))
    res = CliRunner().invoke(app, ["trace", str(bare), "--data", str(resumed["data"]), "--out", str(tmp_path / "t")])
    assert res.exit_code == 6, res.output
    first = " ".join(res.output.split("\npairaudit trace ")[0].split())  # the summary, before the header line
    assert first.startswith("unreliable: the rows of step 7 (") and "--set seed=..." in first and "--set gradient_accumulation_steps=..." in first
    assert "add_pairaudit_callback" in first
    doc = json.loads((tmp_path / "t" / "trace.json").read_text())
    assert doc["status"] == "unreliable" and doc["culprits"] == [] and doc["rows"] == []
    # a wrong value given by hand is caught by the epochs the run logged
    res = trace(resumed["run"], resumed["data"], use_record=False, assignments={"gradient_accumulation_steps": 3},
                out=tmp_path / "t2", log=lambda m: None)
    assert res.doc["status"] == "unreliable" and "logged epoch" in res.doc["summary"]


def test_checkpoint_with_broken_weights_is_diagnosed(tmp_path: Path) -> None:
    from safetensors.torch import load_file, save_file

    data = write_jsonl(tmp_path / "hh60.jsonl", read_records(HH, 60))
    init = save_init(tmp_path / "init", tie=False)
    run = tmp_path / "run"
    kw = dict(max_length=ML, record=False, max_steps=12, **ARGS)
    train_dpo(run, data, init, crash_at=9, **kw)
    weights = run / "checkpoint-8" / "model.safetensors"
    tensors = load_file(str(weights))
    name = sorted(k for k in tensors if "mlp" in k)[0]
    tensors[name][0, 0] = float("nan")  # broken in the checkpoint the run goes on from
    save_file(tensors, str(weights), metadata={"format": "pt"})
    train_dpo(run, data, init, resume=str(run / "checkpoint-8"), **kw)
    state = json.loads((run / "checkpoint-12" / "trainer_state.json").read_text())
    assert all(e["grad_norm"] != e["grad_norm"] for e in state["log_history"] if e.get("step", 0) > 8
               and "grad_norm" in e)
    res = trace(run, data, reference=str(init), skip=["near_duplicate_pair"], out=tmp_path / "t", log=lambda m: None)
    diag = res.doc["diagnosis"]
    assert res.doc["event"]["first_step"] == 9 and diag["top"] == "broken_weights"
    assert diag["causes"][0]["for"][0].startswith("checkpoint-8 holds non-finite weights (1 of ")
    assert diag["fixes"][0].startswith(f"resume_from_checkpoint={run / 'checkpoint-4'}")
    assert next(c for c in diag["causes"] if c["cause"] == "data")["verdict"] != "supported"


def test_learning_rate_too_high_once_warmup_ends_is_diagnosed(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "hh60.jsonl", read_records(HH, 60))
    init = save_init(tmp_path / "init", tie=False)
    run = tmp_path / "run"
    # plain SGD ramped over 6 steps to a rate this tiny model cannot take: stable during warmup, the loss jumps
    # by orders of magnitude at the step warmup ends
    train_dpo(run, data, init, record=False, max_length=ML, max_steps=12, warmup_steps=6, learning_rate=250.0,
              lr_scheduler_type="constant_with_warmup", optim="sgd", **{**ARGS, "save_steps": 12})
    res = trace(run, data, reference=str(init), skip=["near_duplicate_pair"], out=tmp_path / "t", log=lambda m: None)
    doc, diag = res.doc, res.doc["diagnosis"]
    assert doc["event"]["kind"] == "jump" and doc["event"]["last_step"] == 6
    lr = diag["causes"][0]
    assert diag["top"] == "learning_rate" and lr["for"][0].startswith("the failure (step 6) comes right at the end of "
                                                                       "warmup (warmup ends at step 6)")
    assert diag["fixes"][0].startswith("learning_rate=100 (the peak was 250")
    assert "warmup_steps=12 (was 6)" in diag["fixes"]
    assert {c["cause"]: c["verdict"] for c in diag["causes"]}["broken_weights"] == "ruled_out"

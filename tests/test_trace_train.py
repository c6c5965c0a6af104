"""``pairaudit trace`` against real training runs on CPU: tiny random Llama models built from a config, the bundled
SmolLM2 tokenizer, real HH / UltraFeedback rows, ``transformers.Trainer`` and TRL's ``DPOTrainer`` with the
recording callback (the ground truth of which rows each step saw).

- a Trainer run that crashes at step 13 and resumes from checkpoint-10: every recorded step equals the
  reconstruction (seeded sampler, gradient accumulation 2, 2 epochs, resume skipping);
- a DPOTrainer run whose ``max_length`` makes TRL drop rows, with one row planted so that its loss is non-finite
  (its only rare token has an infinite input embedding): the record equals the reconstruction, and ``trace``
  names that row as the culprit of the first failing step, with and without the record;
- ``on_nonfinite="stop"``: training stops at the failing step with the weights of the step before;
- two processes (``torchrun --nproc_per_node 2``, gloo): both processes' rows are reproduced.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("trl")

from conftest import HH, SHARED, write_jsonl  # noqa: E402
from support.trace_helpers import (  # noqa: E402
    read_records,
    save_init,
    tokenizer,
    trace_settings,
    train_dpo,
    train_sft,
    unused_word_token,
)

from pairaudit.trace import order, record, rows  # noqa: E402
from pairaudit.trace.run import trace  # noqa: E402

UF = SHARED / "ultrafeedback-1k" / "train_clean.jsonl"
ROOT = Path(__file__).resolve().parent.parent
COLS = ["step", "rank", "micro", "index", "row", "epoch"]
DPO_ML = 32
PLANT_STEP = 6


@pytest.fixture(scope="module", autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)


def _assert_same(recorded: record.StepTable, rebuilt: record.StepTable) -> None:
    a, b = recorded.data[COLS], rebuilt.data[COLS]
    assert len(a) == len(b) and len(a) > 0
    for st in np.unique(a["step"]):
        assert (a[a["step"] == st] == b[b["step"] == st]).all(), f"step {st} differs"


# -- transformers.Trainer: crash, resume, every step --------------------------------------------------
@pytest.fixture(scope="module")
def sft_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("sft")
    data = write_jsonl(root / "hh60.jsonl", read_records(HH, 60))
    run = root / "run"
    train_sft(run, data, crash_at=13)  # checkpoint-10 is saved, the crash loses steps 11-13
    assert (run / "checkpoint-10").is_dir() and not (run / "checkpoint-20").exists()
    train_sft(run, data, resume=str(run / "checkpoint-10"))
    return run, data


def test_trainer_record_equals_reconstruction_after_resume(sft_run: tuple[Path, Path]) -> None:
    run, data = sft_run
    table, meta = record.read_record(run / record.RECORD_DIR)
    assert [s["start_step"] for s in meta["sessions"]] == [0, 10] and meta["settings"]["resumed_at"] == [10]
    assert table.steps.tolist() == list(range(1, 31))  # 60 rows / batch 2 = 30 micro-batches = 15 steps an epoch
    # the resumed process saw steps 11-13 exactly as the crashed one did
    raw = np.concatenate([np.frombuffer(p.read_bytes(), dtype=record.STEP_DTYPE) for p in (run / record.RECORD_DIR).glob("rank-*.bin")])
    for st in (11, 12, 13):
        first, second = raw[(raw["step"] == st) & (raw["session"] == 0)], raw[(raw["step"] == st) & (raw["session"] == 1)]
        assert len(first) == 4 and (first[COLS] == second[COLS]).all()
    s = trace_settings(trainer="transformers", train_batch_size=2, gradient_accumulation_steps=2, num_train_epochs=2,
                  seed=1234, resumed_at=[10])
    source_rows = rows.trainer_rows(data, s)
    rebuilt, sched = order.reconstruct(s, len(source_rows))
    _assert_same(table, rebuilt.with_rows(source_rows))
    assert sched.max_steps == 30
    # the same through `trace` itself (reconstructing), and a wrong setting caught by the run's logged epochs
    known = {"gradient_accumulation_steps": 2, "seed": 1234, "resumed_at": [10]}
    res = trace(run, data, step=20, use_record=False, assignments=known, skip=["near_duplicate_pair"],
                out=run / "t", render_html=False, log=lambda m: None)
    assert res.doc["order"]["source"] == "reconstructed" and res.doc["order"]["checks"] == []
    assert res.doc["window"]["steps"]["20"] == table.per_step()[20]
    assert res.doc["contrast"]["steps"]["19"] == table.per_step()[19]
    res = trace(run, data, step=20, use_record=False, assignments={**known, "gradient_accumulation_steps": 3},
                skip=["near_duplicate_pair"], out=run / "t", render_html=False, log=lambda m: None)
    epochs = next(c for c in res.doc["order"]["verification"] if c["check"] == "epochs")
    assert epochs["result"] == "failed" and "logged epoch" in epochs["detail"] and res.doc["status"] == "unreliable"


# -- DPOTrainer: TRL's filter, a planted non-finite row, trace ------------------------------------------
@pytest.fixture(scope="module")
def dpo_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("dpo")
    recs = read_records(UF, 220)
    tok = tokenizer()
    trap, word = unused_word_token(tok, recs)
    data = write_jsonl(root / "uf220.jsonl", recs)
    s = trace_settings(trainer="trl-dpo", max_length=DPO_ML, train_batch_size=2, gradient_accumulation_steps=2,
                  num_train_epochs=2, seed=4321)
    kept = rows.trainer_rows(data, s)
    plan = order.reconstruct(s, len(kept))[0].with_rows(kept).per_step()
    planted = plan[PLANT_STEP][0][1][0]  # planned only to land after checkpoint-4; trace finds it on its own
    recs[planted]["chosen"] = word + " " + recs[planted]["chosen"]
    write_jsonl(data, recs)
    init = save_init(root / "init", tie=False, trap_token=trap)
    run = root / "run"
    trainer = train_dpo(run, data, init, max_length=DPO_ML, save_steps=4, logging_steps=2,
                        callback_kwargs={"on_nonfinite": "continue"})
    return {"run": run, "data": data, "init": init, "planted": planted, "trainer": trainer, "settings": s,
            "n": len(recs)}


def test_dpo_trl_filter_and_record_equal_reconstruction(dpo_run: dict[str, Any]) -> None:
    trainer, s, data = dpo_run["trainer"], dpo_run["settings"], dpo_run["data"]
    trl_rows = np.asarray(trainer.train_dataset["row"])
    mine = rows.trainer_rows(data, s)
    assert mine.tolist() == trl_rows.tolist() and 0 < len(mine) < dpo_run["n"]  # TRL dropped rows
    table, meta = record.read_record(dpo_run["run"] / record.RECORD_DIR)
    assert meta["rows"] == "source" and meta["settings"]["max_length"] == DPO_ML
    assert 30 <= len(table.steps) <= 60
    rebuilt, _ = order.reconstruct(s, len(mine))
    _assert_same(table, rebuilt.with_rows(mine))


def test_trace_names_the_planted_row_from_log_history(dpo_run: dict[str, Any], tmp_path: Path) -> None:
    run, planted = dpo_run["run"], dpo_run["planted"]
    state = json.loads((run / "checkpoint-8" / "trainer_state.json").read_text())
    logged = {e["step"]: e for e in state["log_history"] if "grad_norm" in e}
    assert math.isfinite(logged[4]["grad_norm"]) and math.isnan(logged[PLANT_STEP]["grad_norm"])
    # without the record and without --set / --trust-pickle: seed 4321, accumulation 2 and max_length 32 come
    # from training_args.bin, read without running code
    res = trace(run, dpo_run["data"], use_record=False, reference=str(dpo_run["init"]), skip=["near_duplicate_pair"],
                out=tmp_path / "t", log=lambda m: None)
    doc = res.doc
    assert res.found and doc["order"]["source"] == "reconstructed" and not doc["order"]["checks"]
    assert doc["reliability"]["reliable"] and doc["reliability"]["assumed"] == []
    assert doc["settings"]["assumed"] == ["resumed_at"]  # needed only with ignore_data_skip
    assert doc["settings"]["values"]["trainer"] == "trl-dpo"  # inferred from the DPO metrics in log_history
    assert doc["settings"]["values"]["train_batch_size"] == 2  # from trainer_state.json
    vals, src = doc["settings"]["values"], doc["settings"]["sources"]
    assert (vals["seed"], vals["gradient_accumulation_steps"], vals["max_length"]) == (4321, 2, DPO_ML)
    assert "training_args.bin" in src["seed"] and "training_args.bin" in src["world_size"]
    assert doc["window"]["steps"] == {str(k): v for k, v in record.read_record(run / record.RECORD_DIR)[0]
                                      .select(PLANT_STEP - 1, PLANT_STEP).per_step().items()}
    assert (doc["event"]["first_step"], doc["event"]["last_step"]) == (PLANT_STEP - 1, PLANT_STEP)
    assert planted in doc["window"]["rows"] and res.culprits == [planted]
    assert doc["policy"]["computed"] and doc["policy"]["policy"].endswith("checkpoint-4")
    top = doc["rows"][0]
    assert top["row"] == planted and top["evidence"] == 4 and top["dpo"]["limits"][0].startswith("non-finite")
    others = [r for r in doc["rows"] if r["row"] != planted]
    assert others and all(isinstance((r.get("dpo") or {}).get("logit"), float) for r in others)
    assert doc["contrast"]["first_step"] == PLANT_STEP - 3 and doc["comparison"]["contrast"]["nonfinite_dpo"] == 0
    assert all(r["tokens"]["kept_by_trainer"] for r in doc["rows"])
    html = (tmp_path / "t" / "report.html").read_text()
    assert "Training run trace" in html and f"<td class=\"num\">{planted}</td>" in html
    on_disk = json.loads((tmp_path / "t" / "trace.json").read_text())
    assert on_disk["culprits"] == [planted]


def test_trace_uses_the_record_for_the_exact_step_and_row(dpo_run: dict[str, Any], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from pairaudit.cli import app

    run, planted = dpo_run["run"], dpo_run["planted"]
    incident = json.loads((run / record.RECORD_DIR / "incident-rank-00000.json").read_text())
    assert incident["first_step"] == PLANT_STEP and planted in incident["rows"]
    flagged = [s for e in incident["events"] if e["kind"] == "output" for s in e["sequences"]]
    assert {s["row"] for s in flagged} == {planted} and {s["side"] for s in flagged} == {"chosen"}
    assert str(planted) in incident["explained"]["rows"]
    res = CliRunner().invoke(app, ["trace", str(run), "--data", str(dpo_run["data"]), "--reference",
                                   str(dpo_run["init"]), "--skip", "near_duplicate_pair", "--out", str(tmp_path / "t"),
                                   "--quiet"])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "t" / "trace.json").read_text())
    assert doc["event"]["source"] == "recording callback"
    assert (doc["event"]["first_step"], doc["event"]["last_step"]) == (PLANT_STEP, PLANT_STEP)
    assert doc["order"]["source"] == "recorded by PairauditCallback" and doc["culprits"] == [planted]
    assert doc["rows"][0]["recorded"] == [{"side": "chosen", "step": PLANT_STEP}]
    res = CliRunner().invoke(app, ["trace", str(run), "--data", str(dpo_run["data"]), "--reference",
                                   str(dpo_run["init"]), "--skip", "near_duplicate_pair", "--out", str(tmp_path / "t")])
    assert res.exit_code == 0 and f"culprit row(s): {planted}" in " ".join(res.output.split())


def test_callback_stops_at_the_first_nonfinite_step(tmp_path: Path) -> None:
    recs = read_records(HH, 40)
    tok = tokenizer()
    trap, word = unused_word_token(tok, [{"chosen": r["chosen"]} for r in recs])
    s = trace_settings(trainer="transformers", train_batch_size=2, gradient_accumulation_steps=2, num_train_epochs=2,
                  seed=1234)
    plan = order.reconstruct(s, len(recs))[0].per_step()
    planted = plan[4][0][0][1]
    recs[planted]["chosen"] = word + " " + recs[planted]["chosen"]
    data = write_jsonl(tmp_path / "hh40.jsonl", recs)
    trainer = train_sft(tmp_path / "run", data, trap_token=trap, save_strategy="no")
    assert trainer.state.global_step == 4  # stopped right after the failing step
    emb = trainer.model.get_input_embeddings().weight.detach().clone()
    emb[trap] = 0.0
    others = [p for n, p in trainer.model.named_parameters() if "embed_tokens" not in n]
    assert torch.isfinite(emb).all() and all(torch.isfinite(p).all() for p in others)  # that step's update was dropped
    folder = tmp_path / "run" / record.RECORD_DIR
    incident = json.loads((folder / "incident-rank-00000.json").read_text())
    assert incident["first_step"] == 4 and planted in incident["rows"]
    assert {e["kind"] for e in incident["events"]} == {"output", "grad"}
    table, _ = record.read_record(folder)
    assert table.steps.tolist() == [1, 2, 3, 4]


def test_two_process_run_is_reproduced(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "hh50.jsonl", read_records(HH, 50))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           str(ROOT / "tests" / "support" / "trace_helpers.py"), "sft", str(tmp_path / "run"), str(data)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    table, meta = record.read_record(tmp_path / "run" / record.RECORD_DIR)
    assert meta["settings"]["world_size"] == 2 and set(table.data["rank"].tolist()) == {0, 1}
    s = trace_settings(trainer="transformers", train_batch_size=3, gradient_accumulation_steps=2, num_train_epochs=2,
                  seed=1234, world_size=2)
    source_rows = rows.trainer_rows(data, s)
    rebuilt, sched = order.reconstruct(s, len(source_rows))
    _assert_same(table, rebuilt.with_rows(source_rows))
    # 50 rows, batch 3, 2 processes: 17 batches, the last one padded from the start (even_batches), 9 per process
    assert sched.steps_in_epoch == 9 and len(table.data) == 2 * 2 * 9 * 3

"""The diagnosis of ``pairaudit trace`` on run-folder fixtures (no training): fp16 / loss-scale patterns, a large
beta with clipping off, a schedule restart, a failure right after warmup, a clean run and a run that says nothing.
The causes that can be produced on a CPU are diagnosed from real runs in test_trace_train.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pairaudit.trace.diagnose import _nice_down, diagnose

torch = pytest.importorskip("torch")


def _run(tmp: Path, *, args: dict[str, Any], log: list[dict[str, Any]], scales: dict[int, float] | None = None,
         max_steps: int = 1000) -> dict[str, Any]:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "training_args.json").write_text(json.dumps(args))
    for step, scale in (scales or {}).items():
        ck = tmp / f"checkpoint-{step}"
        ck.mkdir()
        # what transformers saves: GradScaler.state_dict() (plain numbers)
        torch.save({"scale": scale, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000,
                    "_growth_tracker": 17}, str(ck / "scaler.pt"))
    return {"log_history": log, "max_steps": max_steps, "global_step": log[-1]["step"]}


def _log(n: int, every: int, *, fail: int, lr: Any = 1e-5, gn: Any = 1.0) -> list[dict[str, Any]]:
    out = []
    for s in range(every, n + 1, every):
        bad = s >= fail
        out.append({"step": s, "epoch": s / n, "loss": 0.6, "learning_rate": lr(s) if callable(lr) else lr,
                    "grad_norm": float("nan") if bad else (gn(s) if callable(gn) else gn)})
    return out


def _diag(tmp: Path, state: dict[str, Any], window: tuple[int, int] | None, *, max_logit: float | None = None,
          args: dict[str, Any] | None = None) -> dict[str, Any]:
    doc = {"status": "found", "rows": [], "culprits": [], "suspects": [], "policy": {},
           "comparison": {"failing": {"max_abs_logit": max_logit}}}
    if args is None:
        args = json.loads((tmp / "training_args.json").read_text())
    return diagnose(run_dir=tmp, state=state, args=args, args_source="training_args.json", window=window,
                    trace_doc=doc, data="pairs.jsonl", out_dir=tmp / "t")


BASE = {"learning_rate": 1e-5, "warmup_steps": 10, "lr_scheduler_type": "linear", "max_grad_norm": 1.0,
        "beta": 0.1, "gradient_accumulation_steps": 4, "fp16": False, "bf16": False}


def test_fp16_with_a_growing_loss_scale_is_precision(tmp_path: Path) -> None:
    args = {**BASE, "fp16": True}
    state = _run(tmp_path, args=args, log=_log(400, 50, fail=400), scales={100: 2.0 ** 16, 200: 2.0 ** 18,
                                                                           300: 2.0 ** 21})
    d = _diag(tmp_path, state, (351, 400))
    assert d["top"] == "precision" and d["fixes"][0].startswith("bf16=True, fp16=False")
    prec = d["causes"][0]
    assert any("loss scale grew" in x and "2.09715e+06 at checkpoint-300" in x for x in prec["for"])
    assert {c["cause"]: c["verdict"] for c in d["causes"]}["learning_rate"] == "ruled_out"


def test_fp16_with_a_steady_loss_scale_and_small_logits_is_weak(tmp_path: Path) -> None:
    args = {**BASE, "fp16": True, "gradient_accumulation_steps": 1}
    state = _run(tmp_path, args=args, log=_log(400, 50, fail=400), scales={100: 65536.0, 300: 65536.0})
    d = _diag(tmp_path, state, (351, 400), max_logit=2.0)
    prec = next(c for c in d["causes"] if c["cause"] == "precision")
    assert prec["score"] == 0.3 and any("did not grow" in x for x in prec["against"])
    assert any("within fp16's range" in x for x in prec["against"])


def test_fp16_logits_beyond_range_then_beta(tmp_path: Path) -> None:
    state = _run(tmp_path, args={**BASE, "fp16": True}, log=_log(400, 50, fail=400))
    d = _diag(tmp_path, state, (351, 400), max_logit=14.0)
    assert [c["cause"] for c in d["causes"][:2]] == ["precision", "amplifier"]
    assert d["fixes"][:2] == ["bf16=True, fp16=False (on hardware with bf16: Ampere or newer GPUs, TPUs, recent CPUs)",
                              "beta=0.05 (was 0.1: keeps that logit at 7.0)"]


def test_bf16_large_beta_and_no_clipping_is_the_amplifier(tmp_path: Path) -> None:
    args = {**BASE, "bf16": True, "beta": 0.5, "max_grad_norm": 0.0}
    state = _run(tmp_path, args=args, log=_log(400, 50, fail=400))
    d = _diag(tmp_path, state, (351, 400), max_logit=40.0)
    assert d["top"] == "amplifier" and d["fixes"][:2] == ["beta=0.1 (was 0.5: keeps that logit at 8.0)",
                                                          "max_grad_norm=1.0"]
    assert not any(f.startswith("bf16") for f in d["fixes"])  # already bf16: no precision fix to offer


def test_failure_right_after_warmup_with_climbing_grad_norm_is_the_learning_rate(tmp_path: Path) -> None:
    args = {**BASE, "warmup_steps": 100, "learning_rate": 3e-5}
    log = _log(300, 10, fail=110, lr=lambda s: 3e-5 * min(1.0, s / 100), gn=lambda s: 1.0 if s < 80 else 2.0 ** (s // 10 - 6))
    d = _diag(tmp_path, _run(tmp_path, args=args, log=log), (101, 110))
    lr = d["causes"][0]
    assert d["top"] == "learning_rate" and any("end of warmup" in x for x in lr["for"])
    assert any(x.startswith("grad_norm climbed") for x in lr["for"])
    assert d["fixes"][:2] == ["learning_rate=1e-05 (the peak was 3e-05; 3e-05 at the last step before the failure)",
                              "warmup_steps=200 (was 100)"]


def test_failure_at_a_schedule_restart_is_the_learning_rate(tmp_path: Path) -> None:
    args = {**BASE, "lr_scheduler_type": "cosine_with_restarts", "warmup_steps": 0}
    log = _log(600, 10, fail=410, lr=lambda s: 1e-5 * (1 - (s % 200) / 200))  # restarts at 200 and 400
    d = _diag(tmp_path, _run(tmp_path, args=args, log=log), (401, 410))
    assert d["top"] == "learning_rate"
    assert any("rose again at step 400" in x for x in d["causes"][0]["for"])


def test_a_run_that_says_nothing_gets_unsupported_causes(tmp_path: Path) -> None:
    d = diagnose(run_dir=tmp_path, state={"log_history": []}, args={}, args_source=None, window=(5, 6),
                 trace_doc={"status": "found", "rows": []}, data="d", out_dir=tmp_path)
    assert d["top"] is None and d["fixes"] == [] and d["summary"].startswith("no cause is supported")
    assert {c["verdict"] for c in d["causes"]} == {"unsupported"}
    assert "arguments were not read" in next(c for c in d["causes"] if c["cause"] == "precision")["note"]


def test_no_failure_is_no_failure(tmp_path: Path) -> None:
    d = diagnose(run_dir=tmp_path, state={"log_history": []}, args={}, args_source=None, window=None,
                 trace_doc={"status": "no_failure"}, data="d", out_dir=tmp_path)
    assert d["status"] == "no_failure" and d["summary"].startswith("no failure")


@pytest.mark.parametrize("x,expected", [(0.057, 0.05), (0.1, 0.1), (0.00048, 0.0003), (3.2e-5, 3e-5), (0.19, 0.1)])
def test_nice_down(x: float, expected: float) -> None:
    assert _nice_down(x) == expected


def test_diagnosis_in_the_report_section_and_terminal_is_escaped(tmp_path: Path) -> None:
    from rich.console import Console

    from pairaudit.report.trace_section import trace_section
    from pairaudit.trace.render import diagnosis_lines, print_diagnosis

    state = _run(tmp_path, args={**BASE, "fp16": True}, log=_log(400, 50, fail=400))
    diag = _diag(tmp_path, state, (351, 400), max_logit=14.0)
    diag["causes"][0]["for"].append("<script>x</script>")
    html = trace_section({"status": "unreliable", "summary": "unreliable: pass --set seed=...", "diagnosis": diag})
    assert "<h3>Diagnosis</h3>" in html and "&lt;script&gt;" in html and "<script>" not in html
    assert "<li><code>beta=0.05 (was 0.1: keeps that logit at 7.0)</code></li>" in html
    lines = diagnosis_lines(diag)
    assert lines[0].startswith("diagnosis: most likely cause: precision") and "  1. precision: supported" in lines[1]
    console = Console(record=True, width=200)
    print_diagnosis(diag, console)
    assert "fixes, in the order to try them:" in console.export_text()


def test_finite_blow_up_and_collapse_are_failures() -> None:
    """The issue's learning-rate blow-up, as TRL logged it: loss 0.69 -> 1.46e8 and grad_norm 5.8 -> 1.35e9 at step
    2, then grad_norm exactly 0, logits 0 and entropy at ln(vocabulary) (a collapse after the spike)."""
    import math

    from pairaudit.trace.history import analyse

    v = 49152
    log = [{"step": 1, "epoch": 0.01, "loss": 0.6931, "grad_norm": 5.8, "entropy": 9.1, "logits/chosen": -0.1,
            "logits/rejected": -0.2, "rewards/chosen": 0.0, "rewards/rejected": 0.0},
           {"step": 2, "epoch": 0.02, "loss": 1.46e8, "grad_norm": 1.35e9, "entropy": 3.0, "logits/chosen": 5e5,
            "logits/rejected": 4e5, "rewards/chosen": -1e6, "rewards/rejected": -2e6}]
    log += [{"step": s, "epoch": s / 100, "loss": 0.6931, "grad_norm": 0.0, "entropy": math.log(v),
             "logits/chosen": 0.0, "logits/rejected": 0.0, "rewards/chosen": 0.0, "rewards/rejected": 0.0}
            for s in range(3, 13)]
    h = analyse(log, vocab_size=v)
    assert h.event is not None and (h.event.kind, h.event.first_step, h.event.step) == ("jump", 2, 2)
    assert "x its running median: a jump by orders of magnitude" in h.event.detail
    assert h.first_collapse is not None and h.first_collapse.step == 3
    assert all(w in h.first_collapse.detail for w in ("grad_norm exactly 0", "logits/chosen and logits/rejected",
                                                      "ln(vocabulary 49152)", "pinned at ln 2"))
    # the spike averaged away (logging_steps > 1): the collapse alone is the failure
    h = analyse([log[0]] + log[2:], vocab_size=v)
    assert h.event is not None and (h.event.kind, h.event.step) == ("collapse", 3)
    # a run that starts at ln 2 with zero rewards (policy == reference) has not collapsed
    assert analyse([log[0], {**log[0], "step": 2, "loss": 0.6925}], vocab_size=v).event is None


def test_learning_rate_far_above_the_usual_range_is_the_top_cause(tmp_path: Path) -> None:
    args = {**BASE, "learning_rate": 1000.0, "warmup_steps": 0, "warmup_ratio": 0.0}
    log = [{"step": 1, "epoch": 0.01, "loss": 0.69, "grad_norm": 5.8, "learning_rate": 1000.0},
           {"step": 2, "epoch": 0.02, "loss": 1.46e8, "grad_norm": 1.35e9, "learning_rate": 1000.0}]
    state = _run(tmp_path, args=args, log=log, max_steps=12)
    doc = {"status": "found", "rows": [], "culprits": [], "suspects": [], "policy": {}, "comparison": {"failing": {}},
           "settings": {"values": {"trainer": "trl-dpo"}}}
    d = diagnose(run_dir=tmp_path, state=state, args=args, args_source="training_args.json", window=(2, 2),
                 trace_doc=doc, data="pairs.jsonl", out_dir=tmp_path / "t")
    lr = d["causes"][0]
    assert d["top"] == "learning_rate" and lr["for"][0] == ("learning_rate 1000: about 10^8 x the usual DPO range "
                                                            "5e-07..5e-06, peak reached at step 1 with no warmup")
    assert d["fixes"][0].startswith("learning_rate=5e-06 (was 1000")
    assert "supported" in d["summary"] or d["summary"].startswith("most likely cause: learning rate")
    weak = diagnose(run_dir=tmp_path, state=state, args={**args, "learning_rate": 5e-6}, args_source="x",
                    window=(2, 2), trace_doc=doc, data="pairs.jsonl", out_dir=tmp_path / "t")
    assert ": supported" not in weak["summary"]  # never "no cause is supported ...: X: supported"


def test_an_absent_max_grad_norm_is_the_installed_trainers_default_never_off(tmp_path: Path) -> None:
    """Issue 38 (9): training_args.json without max_grad_norm: the trainer clipped at its default (1.0)."""
    import transformers

    from pairaudit.trace.diagnose import trainer_defaults

    args = {k: v for k, v in {**BASE, "bf16": True}.items() if k != "max_grad_norm"}
    state = _run(tmp_path, args=args, log=_log(400, 50, fail=400))
    d = _diag(tmp_path, state, (351, 400), max_logit=2.0)
    amp = next(c for c in d["causes"] if c["cause"] == "amplifier")
    expected = transformers.TrainingArguments.__dataclass_fields__["max_grad_norm"].default
    assert expected == trainer_defaults()[0]["max_grad_norm"] == 1.0
    assert not any("clipping is off" in x for x in amp["for"]) and "max_grad_norm=1.0" not in d["fixes"]
    assert any("gradients were clipped (max_grad_norm=1)" in x and "absent" in x and "default of the installed" in x
               for x in amp["against"])
    assert amp["verdict"] == "ruled_out"


@pytest.mark.parametrize(("given", "bf16"), [({}, True), ({"fp16": True}, False), ({"fp16": False}, True)])
def test_an_absent_bf16_is_what_the_installed_trainer_resolves_it_to(given: dict, bf16: bool) -> None:
    """B7 (issue 38's checker): an absent bf16 was read as fp32, but the installed DPOConfig resolves bf16=None to
    ``not fp16``; the default comes from building the installed config with the run's own values."""
    from trl import DPOConfig

    from pairaudit.trace.diagnose import with_defaults

    args = {"learning_rate": 5e-7, "max_grad_norm": 1.0, **given}
    resolved, defaulted = with_defaults(args)
    truth = DPOConfig(output_dir="unused", use_cpu=True, **given).bf16
    assert resolved["bf16"] is truth is bf16 and "bf16" in defaulted and "installed trl" in defaulted["bf16"]


def test_a_plain_transformers_run_gets_training_arguments_defaults_not_dpo_configs() -> None:
    """helper-35's B2: a run the trace settled as `transformers` had its absent bf16 filled from TRL's DPOConfig
    (True: "bf16 training"); TrainingArguments' own default is what that trainer used."""
    import transformers

    from pairaudit.trace.diagnose import with_defaults

    resolved, defaulted = with_defaults({"learning_rate": 5e-7, "fp16": False}, "transformers")
    truth = transformers.TrainingArguments(output_dir="unused", use_cpu=True).bf16
    assert resolved["bf16"] == truth and "TrainingArguments" in defaulted["bf16"] and "DPOConfig" not in defaulted["bf16"]


def test_weights_non_finite_from_the_start_need_the_starting_model(tmp_path: Path) -> None:
    """Independent tester's case: an inf embedding in the model the run started from is in every checkpoint. Without
    --reference that is a lead (pass --reference), never "training went on from broken weights"; with the starting
    model it is the model's, not the run's."""
    from safetensors.torch import save_file

    def weights(folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        emb = torch.zeros(4, 2)
        emb[3, 0] = float("inf")
        save_file({"embed_tokens.weight": emb, "lm_head.weight": torch.ones(4, 2)}, str(folder / "model.safetensors"),
                  metadata={"format": "pt"})

    state = _run(tmp_path / "run", args=BASE, log=_log(6, 1, fail=4))
    for step in (2, 4):
        weights(tmp_path / "run" / f"checkpoint-{step}")
    doc = {"status": "found", "rows": [], "culprits": [], "suspects": [], "policy": {},
           "comparison": {"failing": {"max_abs_logit": None}}}
    d = diagnose(run_dir=tmp_path / "run", state=state, args=BASE, args_source="training_args.json", window=(4, 4),
                 trace_doc=doc, data="pairs.jsonl", out_dir=tmp_path / "t")
    bw = next(c for c in d["causes"] if c["cause"] == "broken_weights")
    assert bw["score"] == 0.5 and "may have been there from the start" in bw["for"][0]
    assert bw["fixes"][0].startswith("pass --reference with the model the run started from")
    assert "went on from broken weights" not in json.dumps(d)
    weights(tmp_path / "start")
    d = diagnose(run_dir=tmp_path / "run", state=state, args=BASE, args_source="training_args.json", window=(4, 4),
                 trace_doc=doc, data="pairs.jsonl", out_dir=tmp_path / "t", reference=str(tmp_path / "start"))
    bw = next(c for c in d["causes"] if c["cause"] == "broken_weights")
    assert bw["verdict"] == "ruled_out" and "the starting model did not already have" in bw["against"][0]

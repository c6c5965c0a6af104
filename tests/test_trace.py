"""``pairaudit trace`` without training: TRL's row filter against TRL's own preprocessing on real rows, the
data order against hand-computed batches and torch's own permutation, log_history analysis, settings and
their sources (training_args.bin read without running code), the record format, explanation ranking and the report
section. The real training runs are in test_trace_train.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import HH, SHARED, write_jsonl
from support.trace_helpers import read_records, trace_settings

from pairaudit.errors import ConfigError
from pairaudit.trace import explain, history, order, record, rows, settings

UF = SHARED / "ultrafeedback-1k" / "train_clean.jsonl"


# -- TRL's preprocessing ------------------------------------------------------------------------------
def test_extract_prompt_matches_trl_on_real_hh_rows() -> None:
    trl_data_utils = pytest.importorskip("trl.data_utils")
    recs = read_records(HH, 400)
    recs += [{"chosen": "same text", "rejected": "same text"}, {"chosen": "Hi there", "rejected": "Hi there!"},
             {"chosen": "Q: a b", "rejected": "Q: a c"}, {"chosen": "x", "rejected": "y"}]
    from pairaudit.trainer.profiles import trl_extract_prompt

    for rec in recs:
        p, c, r = trl_extract_prompt(rec["chosen"], rec["rejected"])
        assert {"prompt": p, "chosen": c, "rejected": r} == trl_data_utils.extract_prompt(dict(rec))


def _trl_prepare(records: list[dict], tok, max_length: int | None, mode: str) -> dict[int, tuple[int, int, int]]:
    """TRL's own DPOTrainer._prepare_dataset on these records -> {row: (prompt, chosen, rejected) token counts}."""
    datasets = pytest.importorskip("datasets")
    trl = pytest.importorskip("trl")
    ds = datasets.Dataset.from_list([{**r, "row": i} for i, r in enumerate(records)])
    args = SimpleNamespace(dataset_num_proc=None, max_length=max_length, truncation_mode=mode)
    out = trl.DPOTrainer._prepare_dataset(SimpleNamespace(_tokenizer=tok), ds, tok, args, "train")
    return {r["row"]: (len(r["prompt_ids"]), len(r["chosen_ids"]), len(r["rejected_ids"])) for r in out}


def _conversational(recs: list[dict]) -> list[dict]:
    return [{"prompt": [{"role": "user", "content": r["prompt"]}],
             "chosen": [{"role": "assistant", "content": r["chosen"]}],
             "rejected": [{"role": "assistant", "content": r["rejected"]}]} for r in recs]


@pytest.mark.parametrize("kind,max_length,mode", [
    ("uf", 96, "keep_start"), ("uf", 64, "keep_end"), ("hh", 128, "keep_start"), ("uf_chat", 128, "keep_start"),
    ("uf", None, "keep_start")])
def test_trl_row_filter_and_lengths_match_trl(tmp_path: Path, kind: str, max_length: int | None, mode: str) -> None:
    from pairaudit.models.tokenizer import load_tokenizer

    tok, _ = load_tokenizer(None)
    recs = read_records(HH, 120) if kind == "hh" else read_records(UF, 120)
    if kind == "uf_chat":
        recs = _conversational(recs)
    path = write_jsonl(tmp_path / "d.jsonl", recs)
    s = trace_settings(trainer="trl-dpo", max_length=max_length, truncation_mode=mode)
    mine = rows.token_lengths(path, s, tokenizer_obj=tok)
    theirs = _trl_prepare(recs, tok, max_length, mode)
    assert mine.rows[mine.kept].tolist() == sorted(theirs)
    assert rows.trainer_rows(path, s, tokenizer_obj=tok).tolist() == sorted(theirs)
    for r, lens in theirs.items():
        assert (int(mine.prompt[r]), int(mine.chosen[r]), int(mine.rejected[r])) == lens
    if max_length is not None and mode == "keep_start":
        assert 0 < len(theirs) < len(recs)  # the slice really exercises the filter
        dropped = set(range(len(recs))) - set(theirs)
        assert all(mine.prompt[r] >= max_length for r in dropped)
    else:
        assert len(theirs) == len(recs)


def test_filter_boundary_prompt_of_exactly_max_length_is_dropped(tmp_path: Path) -> None:
    from pairaudit.models.tokenizer import load_tokenizer

    tok, _ = load_tokenizer(None)
    recs = read_records(UF, 60)
    path = write_jsonl(tmp_path / "d.jsonl", recs)
    lens = rows.token_lengths(path, trace_settings(trainer="trl-dpo", max_length=None), tokenizer_obj=tok)
    ml = int(lens.prompt[0])  # a max_length equal to row 0's prompt length: TRL drops row 0 (>=), keeps shorter
    theirs = _trl_prepare(recs, tok, ml, "keep_start")
    assert 0 not in theirs
    s = trace_settings(trainer="trl-dpo", max_length=ml)
    assert rows.trainer_rows(path, s, tokenizer_obj=tok).tolist() == sorted(theirs)
    assert rows.trainer_rows(path, trace_settings(trainer="trl-dpo", max_length=ml + 1), tokenizer_obj=tok)[0] == 0


def test_transformers_trainer_rows_are_physical_lines(tmp_path: Path) -> None:
    recs = read_records(UF, 5)
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join([json.dumps(recs[0]), "", json.dumps(recs[1]), "  ", json.dumps(recs[2])]) + "\n")
    assert rows.trainer_rows(path, trace_settings(trainer="transformers")).tolist() == [0, 2, 4]


@pytest.mark.parametrize("p,c,ml,mode,expected", [
    (10, 5, None, "keep_start", (10, 5)), (10, 5, 20, "keep_start", (10, 5)), (10, 15, 20, "keep_start", (10, 10)),
    (25, 5, 20, "keep_start", (20, 0)), (10, 15, 20, "keep_end", (5, 15)), (3, 30, 20, "keep_end", (0, 20))])
def test_kept_lengths(p: int, c: int, ml: int | None, mode: str, expected: tuple[int, int]) -> None:
    assert rows.kept_lengths(p, c, ml, mode) == expected


# -- order ---------------------------------------------------------------------------------------------
def test_order_sequential_two_processes_by_hand() -> None:
    """10 rows, batch 2, 2 processes, GA 2, sequential: batches [0,1] [2,3] [4,5] [6,7] [8,9] dealt to processes in
    turn; even_batches pads the odd batch out with the first rows; each process has 3 micro-batches, so an epoch
    is 2 optimizer steps, the second one a partial accumulation window of 1 micro-batch."""
    s = trace_settings(train_sampling_strategy="sequential", train_batch_size=2, world_size=2,
                  gradient_accumulation_steps=2, num_train_epochs=1)
    table, sched = order.reconstruct(s, 10)
    assert sched.to_json() == {"steps_in_epoch": 3, "update_steps_per_epoch": 2, "max_steps": 2, "num_epochs": 1}
    assert table.per_step() == {1: [[[0, 1], [4, 5]], [[2, 3], [6, 7]]], 2: [[[8, 9]], [[0, 1]]]}
    s.set("dataloader_drop_last", True, "test")
    table, _ = order.reconstruct(s, 10)
    assert table.per_step() == {1: [[[0, 1], [4, 5]], [[2, 3], [6, 7]]]}
    s = trace_settings(train_sampling_strategy="sequential", train_batch_size=4, world_size=2, split_batches=True,
                  num_train_epochs=1)
    table, _ = order.reconstruct(s, 8)
    assert table.per_step() == {1: [[[0, 1]], [[2, 3]]], 2: [[[4, 5]], [[6, 7]]]}


@pytest.mark.parametrize("data_seed", [None, 99])
def test_order_random_is_torch_randperm_reseeded_each_epoch(data_seed: int | None) -> None:
    torch = pytest.importorskip("torch")
    n, bs, seed = 23, 4, 7
    s = trace_settings(train_batch_size=bs, seed=seed, data_seed=data_seed, num_train_epochs=3, gradient_accumulation_steps=3)
    table, sched = order.reconstruct(s, n)
    base = data_seed if data_seed is not None else seed
    expected = []
    for epoch in range(3):
        perm = torch.randperm(n, generator=torch.Generator().manual_seed(base + epoch)).tolist()
        expected.append(perm)
    got = [table.data["index"][table.data["epoch"] == e].tolist() for e in range(3)]
    assert got == expected
    assert sched.update_steps_per_epoch == 2  # 6 micro-batches of 4 (last of 3): 2 steps of 3
    assert sched.epoch_at_step[2] == pytest.approx(1.0) and sched.epoch_at_step[1] == pytest.approx(0.5)


def test_order_resume_skips_the_batches_already_trained() -> None:
    s = trace_settings(train_batch_size=3, seed=5, num_train_epochs=2, gradient_accumulation_steps=2)
    full, _ = order.reconstruct(s, 40)
    for g in (3, 7, 9):
        s.set("resumed_at", [g], "test")
        resumed, _ = order.reconstruct(s, 40)
        assert resumed.per_step() == full.per_step()
        assert set(resumed.data["session"][resumed.data["step"] > g].tolist()) == {1}
    s.set("max_steps", 5, "test")
    assert max(order.reconstruct(s, 40)[0].per_step()) == 5


@pytest.mark.parametrize("key,value,why", [("dispatch_batches", True, "dispatch_batches"),
                                           ("train_sampling_strategy", "group_by_length", "by length"),
                                           ("use_seedable_sampler", False, "global torch RNG")])
def test_order_refuses_what_it_cannot_reproduce(key: str, value: object, why: str) -> None:
    with pytest.raises(ConfigError, match=why):
        order.reconstruct(trace_settings(**{key: value}), 10)


# -- log_history -----------------------------------------------------------------------------------------
def _log(n: int, bad_at: int | None = None, every: int = 2, jump_at: int | None = None) -> list[dict]:
    out = []
    for step in range(every, n + 1, every):
        e = {"step": step, "epoch": step / n, "loss": 0.69 - 0.001 * step, "grad_norm": 1.0 + 0.01 * (step % 3),
             "learning_rate": 1e-4, "rewards/margins": 0.01 * step}
        if bad_at is not None and step >= bad_at:
            e.update(grad_norm=float("nan"), **{"rewards/margins": float("nan")})
        if jump_at is not None and step == jump_at:
            e["grad_norm"] = 50.0
        out.append(e)
        if step % 10 == 0:
            out.append({"step": step, "epoch": step / n, "eval_loss": float("nan")})  # ignored: evaluation
    out.append({"step": n, "train_runtime": 1.0, "train_loss": float("nan")})  # ignored: summary
    return out


def test_history_first_nonfinite_window_and_the_one_before() -> None:
    h = history.analyse(_log(40, bad_at=17))
    assert h.event is not None and h.event.kind == "nonfinite"
    assert (h.event.first_step, h.event.step) == (17, 18)
    assert set(h.event.metrics) == {"grad_norm", "rewards/margins"}
    assert h.previous_window(17) == (15, 16)
    assert h.window_of(5) == (5, 6)


def test_history_jump_and_quiet_run() -> None:
    h = history.analyse(_log(40, jump_at=24))
    assert h.event is not None and h.event.kind == "jump" and h.event.step == 24 and "grad_norm" in h.event.metrics
    assert history.analyse(_log(40)).event is None
    both = history.analyse(_log(40, bad_at=30, jump_at=24))
    assert both.event.step == 24 and both.first_nonfinite.step == 30


def test_find_state_reads_the_longest_history_with_nan_literals(tmp_path: Path) -> None:
    for step, bad in ((4, None), (12, 9)):
        d = tmp_path / f"checkpoint-{step}"
        d.mkdir()
        (d / "trainer_state.json").write_text(json.dumps({"global_step": step, "log_history": _log(step, bad_at=bad)}))
    assert "NaN" in (tmp_path / "checkpoint-12" / "trainer_state.json").read_text()
    state, path = history.find_state(tmp_path)
    assert path.parent.name == "checkpoint-12" and state["global_step"] == 12


# -- settings ----------------------------------------------------------------------------------------------
def test_settings_priority_and_assumed(tmp_path: Path) -> None:
    (tmp_path / "training_args.json").write_text(json.dumps(
        {"seed": 3, "gradient_accumulation_steps": 4, "per_device_train_batch_size": 2, "max_steps": -1,
         "accelerator_config": {"even_batches": False}}))
    f = tmp_path / "s.toml"
    f.write_text("world_size = 2\nmax_length = 512\n")
    s = settings.resolve(tmp_path, meta={"settings": {"seed": 11}}, state={"train_batch_size": 8, "logging_steps": 5},
                         state_path=tmp_path / "trainer_state.json", settings_file=f,
                         assignments=settings.parse_assignments(["gradient_accumulation_steps=8", "resumed_at=4,9"]),
                         trust_pickle=False)
    assert (s.seed, s.train_batch_size, s.gradient_accumulation_steps, s.world_size, s.even_batches) == (11, 8, 8, 2, False)
    assert s.resumed_at == [4, 9] and s.max_length == 512 and s.logging_steps == 5
    assert s.sources["seed"].startswith("recording callback") and s.sources["gradient_accumulation_steps"] == "--set"
    assert "data_seed" in s.assumed and "seed" not in s.assumed
    with pytest.raises(ConfigError, match="unknown trace setting"):
        s.update(settings.parse_assignments(["nope=1"]), "--set")
    with pytest.raises(ConfigError, match=r"world_size = 'two' \(str\)\n\s*expected: a whole number"):
        s.set("world_size", "two", "--set")


class _Boom:
    def __reduce__(self):  # what a malicious training_args.bin would do when unpickled
        return (Path.write_text, (Path(_Boom.target), "pwned"))


def test_training_args_bin_payload_never_runs(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    _Boom.target = str(tmp_path / "pwned.txt")
    torch.save(_Boom(), str(tmp_path / "training_args.bin"))
    s = settings.resolve(tmp_path, meta=None, state=None, state_path=None, settings_file=None, assignments={},
                         trust_pickle=False)
    assert not (tmp_path / "pwned.txt").exists()
    assert any("--trust-pickle" in n for n in s.notes)
    # a genuine one is read by the restricted reader (more in test_trace_args.py)
    args = transformers.TrainingArguments(str(tmp_path / "o"), seed=77, gradient_accumulation_steps=3, report_to=[],
                                          use_cpu=True)
    torch.save(args, str(tmp_path / "training_args.bin"))
    s = settings.resolve(tmp_path, meta=None, state=None, state_path=None, settings_file=None, assignments={},
                         trust_pickle=False)
    assert (s.seed, s.gradient_accumulation_steps) == (77, 3) and "training_args.bin" in s.sources["seed"]


# -- record -----------------------------------------------------------------------------------------------------
def test_record_latest_session_per_step_and_torn_write(tmp_path: Path) -> None:
    def recs(steps: range, session: int, rank: int, offset: int) -> np.ndarray:
        a = np.zeros(2 * len(steps), dtype=record.STEP_DTYPE)
        a["step"] = np.repeat(list(steps), 2)
        a["rank"], a["session"] = rank, session
        a["index"] = np.arange(len(a)) + offset
        a["row"] = -1
        return a

    with open(record.rank_file(tmp_path, 0), "wb") as fh:
        fh.write(recs(range(1, 6), 0, 0, 0).tobytes() + recs(range(4, 8), 1, 0, 100).tobytes() + b"\x01\x02\x03")
    with open(record.rank_file(tmp_path, 1), "wb") as fh:
        fh.write(recs(range(1, 8), 0, 1, 500).tobytes())
    table, meta = record.read_record(tmp_path)
    assert meta == {}
    d = table.data
    assert sorted(set(d["step"].tolist())) == list(range(1, 8))
    assert set(d["session"][(d["rank"] == 0) & (d["step"] >= 4)].tolist()) == {1}
    assert set(d["session"][d["rank"] == 1].tolist()) == {0}
    assert len(d) == 2 * 7 * 2
    mapped = table.with_rows(np.arange(1000) * 10)
    assert (mapped.data["row"] == mapped.data["index"] * 10).all()


# -- explanation and rendering -------------------------------------------------------------------------------
def test_limits_and_ranking() -> None:
    assert explain.limits(12.0, [-10.0, -20.0], 0.1)[0].startswith("|logit| 12.00 >= ln(65504)")
    assert explain.limits(float("nan"), [float("nan"), -3.0], 0.1)[0].startswith("non-finite")
    assert explain.limits(0.5, [-70000.0, -69000.0], 0.1) != []
    assert explain.limits(0.5, [-100.0, -90.0], 0.1) == []
    info = {1: {"findings": [{"check": "too_long", "action": "flag"}], "dpo": {"logit": 0.3, "limits": []}},
            2: {"findings": [{"check": "identical_pair", "action": "drop"}], "dpo": {"logit": -2.0, "limits": []}},
            3: {"findings": [], "dpo": {"logit": "nan", "limits": ["non-finite: x"]}},
            4: {"findings": [], "dpo": {"logit": 15.0, "limits": ["|logit| 15.00 >= ln(65504)"]}},
            5: {"findings": [], "recorded": [{"step": 3, "side": "chosen"}]}}
    assert [(r, lv) for r, lv, _ in explain.rank_rows(info)] == [(3, 4), (5, 4), (4, 3), (2, 1), (1, 0)]


def test_report_section_escapes_dataset_text(tmp_path: Path) -> None:
    from pairaudit.report.trace_section import add_trace_section

    doc = {"status": "found", "run_dir": "r", "data": "d", "summary": "first failure <b>", "culprits": [7],
           "event": {"first_step": 3, "last_step": 4, "source": "log_history", "detail": "nan"},
           "settings": {"values": {"trainer": "trl-dpo"}, "assumed": ["seed"], "notes": []}, "order": {},
           "policy": {"computed": False, "reason": "no checkpoint"},
           "rows": [{"row": 7, "window": "failing", "steps": [3], "evidence": 4, "reasons": ["non-finite"],
                     "findings": [{"check": "encoding_error", "action": "drop", "field": "chosen"}],
                     "text": {"chosen": "<script>alert(1)</script>"}}]}
    (tmp_path / "trace.json").write_text(json.dumps(doc))
    page = add_trace_section("<html><nav>x</nav><div>\n</div>\n</body></html>", tmp_path)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>" not in page
    assert 'href="#trace"' in page and "pa-trace-culprit" in page and "first failure &lt;b&gt;" in page


def test_importing_trace_and_pairaudit_stays_light() -> None:
    code = ("import sys, pairaudit, pairaudit.trace.run, pairaudit.cli; "
            "bad = [m for m in ('torch', 'transformers', 'trl', 'accelerate') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parent.parent)


def test_cli_trace_errors_name_the_problem(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from pairaudit.cli import app

    res = CliRunner().invoke(app, ["trace", str(tmp_path / "missing"), "--data", str(UF)])
    assert res.exit_code == 2 and "does not exist" in res.output
    (tmp_path / "run").mkdir()
    res = CliRunner().invoke(app, ["trace", str(tmp_path / "run"), "--data", str(UF)])
    assert res.exit_code == 2 and "trainer_state.json" in res.output


def test_trace_of_a_clean_run_says_there_is_nothing_to_trace(tmp_path: Path) -> None:
    from pairaudit.trace.run import trace

    run = tmp_path / "run" / "checkpoint-40"
    run.mkdir(parents=True)
    (run / "trainer_state.json").write_text(json.dumps({"global_step": 40, "log_history": _log(40)}))
    data = write_jsonl(tmp_path / "d.jsonl", read_records(UF, 3))
    res = trace(tmp_path / "run", data, log=lambda m: None)
    assert not res.found and res.doc["status"] == "no_failure" and "ends at step 40" in res.doc["summary"]
    on_disk = json.loads((tmp_path / "run" / "pairaudit-trace" / "trace.json").read_text())
    assert on_disk["status"] == "no_failure" and on_disk["diagnosis"]["status"] == "no_failure"
    assert on_disk["diagnosis"]["summary"].startswith("no failure") and on_disk["diagnosis"]["fixes"] == []


def test_a_second_trace_into_the_same_folder_replaces_the_report_section(tmp_path: Path) -> None:
    """report.html shows the trace.json beside it: a later trace that finds nothing (or is unreliable) must not
    leave the earlier trace's culprit rows on the page."""
    from support.checks import scan_cheap

    from pairaudit.report.html import render_report
    from pairaudit.trace.render import write_outputs
    from pairaudit.trace.run import trace

    recs = read_records(UF, 3)
    scan_cheap(tmp_path, recs)
    audit = tmp_path / "out"
    stale = {"status": "found", "summary": "first failure: STALE-CULPRIT-7", "culprits": [7], "rows": []}
    write_outputs(stale, audit)
    assert "STALE-CULPRIT-7" in (audit / "report.html").read_text()
    run = tmp_path / "run" / "checkpoint-40"
    run.mkdir(parents=True)
    (run / "trainer_state.json").write_text(json.dumps({"global_step": 40, "log_history": _log(40)}))
    res = trace(tmp_path / "run", tmp_path / "pairs.jsonl", audit=audit, log=lambda m: None)
    assert res.doc["status"] == "no_failure" and res.out_dir == audit
    page = (audit / "report.html").read_text()
    assert "STALE-CULPRIT-7" not in page and "ends at step 40" in page
    render_report(audit)  # and a later re-render keeps what trace.json says
    assert "ends at step 40" in (audit / "report.html").read_text()


def test_pretokenized_rows_get_their_token_counts(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "ids.jsonl", [
        {"prompt_input_ids": [1, 2, 3], "chosen_input_ids": [4, 5], "rejected_input_ids": [6, 7, 8, 9]},
        {"prompt_input_ids": list(range(10, 50)), "chosen_input_ids": [4], "rejected_input_ids": [6]}])
    s = trace_settings(trainer="trl-dpo", max_length=32)
    lengths = rows.token_lengths(data, s)
    assert lengths.lookup(0) == {"prompt": 3, "chosen": 2, "rejected": 4, "kept_by_trainer": True, "prompt_kept": 3,
                                 "chosen_kept": 2, "rejected_kept": 4, "truncated": False}
    assert (lengths.lookup(1)["prompt"], lengths.lookup(1)["kept_by_trainer"]) == (40, False)  # prompt >= max_length
    assert rows.trainer_rows(data, s, lengths=lengths).tolist() == [0]

"""Issue 38: hostile input and faults. Each case is the issue's reproduction: no traceback, nothing lost
(input = kept + dropped), the documented exit code, and a message whose fix works when it is run."""

from __future__ import annotations

import gzip
import json
import shlex
import subprocess
from pathlib import Path

import datasets
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import EXAMPLE, output_files
from typer.testing import CliRunner

import pairaudit
from pairaudit.cli import app
from pairaudit.errors import PairauditError

ONLY = ["identical_pair", "empty_response"]


def _bad_utf8_table() -> pa.Table:
    """The issue's table: one chosen cell holds the bytes b'bad \\xff', viewed as a string column."""
    chosen = pa.array([b"ok one", b"bad \xff", b"ok three"], pa.binary()).view(pa.string())
    return pa.table({"prompt": ["a", "b", "c"], "chosen": chosen, "rejected": ["x", "y", "z"]})


def _cli(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output, res.output
    return res.exit_code, res.output


def _totals(out: Path) -> dict[str, int]:
    return json.loads((out / "report.json").read_text())["totals"]


# ------------------------------------------------------------------ 1. invalid UTF-8 in Arrow containers
def _parquet(tmp: Path) -> Path:
    pq.write_table(_bad_utf8_table(), tmp / "u.parquet")
    return tmp / "u.parquet"


def _save_to_disk(tmp: Path) -> Path:
    datasets.Dataset(datasets.table.InMemoryTable(_bad_utf8_table())).save_to_disk(str(tmp / "u_hf"))
    return tmp / "u_hf"


@pytest.mark.parametrize("make", [_parquet, _save_to_disk])
def test_invalid_utf8_in_a_string_column_is_one_dropped_row(tmp_path: Path, make) -> None:  # noqa: ANN001
    src = make(tmp_path)
    code, output = _cli("scan", str(src), "--out", str(tmp_path / "out"), "-q", "--only", ",".join(ONLY))
    assert code == 0, output
    t = _totals(tmp_path / "out")
    assert (t["input"], t["kept"], t["dropped"], t["malformed"]) == (3, 2, 1, 1)
    import polars as pl

    f = pl.read_parquet(tmp_path / "out" / "findings.parquet").filter(pl.col("check") == "malformed_record")
    assert f["row"].to_list() == [1] and f["field"].to_list() == ["chosen"]
    assert "invalid UTF-8 in column 'chosen' at byte 4 (0xff)" in f["detail"][0]
    code, shown = _cli("show", str(tmp_path / "out"), "1")  # the dropped row reads back
    assert code == 0 and "invalid UTF-8" in shown


def test_invalid_utf8_bytes_reach_dropped_parquet_readable_and_as_read(tmp_path: Path) -> None:
    import pandas as pd

    audit = pairaudit.scan(_bad_utf8_table(), tmp_path / "out", only=ONLY)
    assert audit.exit_code == 0 and audit.report["totals"]["dropped"] == 1
    dropped = pq.read_table(tmp_path / "out" / "dropped.parquet")
    # every reader reads it (the record's text with U+FFFD), and the bad cell's bytes are kept as read
    assert dropped.to_pylist() == [{"row": 1, "reasons": ["malformed_record"],
                                    "record": {"prompt": "b", "chosen": "bad \ufffd", "rejected": "y"},
                                    "raw_cells": [{"column": "chosen", "bytes": b"bad \xff"}]}]
    assert pd.read_parquet(tmp_path / "out" / "dropped.parquet")["row"].tolist() == [1]
    assert pq.read_table(tmp_path / "out" / "clean.parquet").column("chosen").to_pylist() == ["ok one", "ok three"]


@pytest.mark.parametrize("container", ["dictionary", "dictionary int8", "dictionary uint16", "string_view"])
@pytest.mark.parametrize("via", ["parquet", "api"])
def test_invalid_utf8_in_dictionary_and_view_columns(tmp_path: Path, container: str, via: str) -> None:
    """Found by the issue-38 checker: a dictionary-encoded or string_view column with the bad cell gave a
    UnicodeDecodeError / ArrowNotImplementedError traceback; it reads as a plain string column (one path). A
    dictionary with other indices than int32 (pandas writes int8 for a Categorical) failed in the Parquet
    reader itself (ArrowInvalid) until it read such columns with Parquet's own int32 indices."""
    table = _bad_utf8_table()
    col = table.column("chosen").combine_chunks()
    if container.startswith("dictionary"):
        col = col.dictionary_encode()
        if " " in container:
            index = getattr(pa, container.split()[1])()
            col = pa.DictionaryArray.from_arrays(col.indices.cast(index), col.dictionary)
    else:
        col = col.cast(pa.string_view())
    table = table.set_column(1, "chosen", col)
    src: object = table
    if via == "parquet":
        pq.write_table(table, tmp_path / "u.parquet")
        assert pq.read_schema(tmp_path / "u.parquet").field("chosen").type == col.type
        src = tmp_path / "u.parquet"
    audit = pairaudit.scan(src, tmp_path / "out", only=ONLY)
    t = audit.report["totals"]
    assert (t["input"], t["kept"], t["dropped"], t["malformed"]) == (3, 2, 1, 1)
    dropped = pq.read_table(tmp_path / "out" / "dropped.parquet")
    assert dropped.column("raw_cells").to_pylist() == [[{"column": "chosen", "bytes": b"bad \xff"}]]
    assert pq.read_table(tmp_path / "out" / "clean.parquet").column("chosen").to_pylist() == ["ok one", "ok three"]


def test_invalid_utf8_in_a_save_to_disk_source_reads_back_with_datasets(tmp_path: Path) -> None:
    src = _save_to_disk(tmp_path)
    code, output = _cli("scan", str(src), "--out", str(tmp_path / "out"), "-q", "--only", ",".join(ONLY))
    assert code == 0, output
    rows = datasets.load_from_disk(str(tmp_path / "out" / "dropped")).to_list()
    assert rows == [{"row": 1, "reasons": ["malformed_record"],
                     "record": {"prompt": "b", "chosen": "bad \ufffd", "rejected": "y"},
                     "raw_cells": [{"column": "chosen", "bytes": b"bad \xff"}]}]


def test_invalid_utf8_in_one_split_of_several(tmp_path: Path) -> None:
    ds = datasets.Dataset(datasets.table.InMemoryTable(_bad_utf8_table()))
    datasets.DatasetDict({"train": ds, "test": ds}).save_to_disk(str(tmp_path / "dd"))
    code, output = _cli("scan", str(tmp_path / "dd"), "--split", "all", "--out", str(tmp_path / "out"), "-q",
                        "--only", ",".join(ONLY))
    assert code == 0, output
    t = _totals(tmp_path / "out")
    assert (t["input"], t["kept"] + t["dropped"], t["malformed"]) == (6, 6, 2)


# ---------------------------------------------------------------- 2. a gzip member and trailing bytes
@pytest.mark.parametrize("tail", [b"GARBAGE", b"\0" * 100, b"x" * 70_000])
def test_gzip_with_trailing_bytes_reads_what_gzip_dc_reads(tmp_path: Path, tail: bytes) -> None:
    lines = EXAMPLE.read_bytes().splitlines(keepends=True)[:10]
    src = tmp_path / "g.jsonl.gz"
    src.write_bytes(gzip.compress(b"".join(lines[:6])) + gzip.compress(b"".join(lines[6:])) + tail)
    expected = subprocess.run(["gzip", "-dc", str(src)], capture_output=True).stdout
    assert expected.count(b"\n") == 10
    code, output = _cli("scan", str(src), "--out", str(tmp_path / "out"), "--only", ",".join(ONLY))
    assert code == 0, output
    assert _totals(tmp_path / "out")["input"] == 10
    assert (tmp_path / "out" / "clean.jsonl").read_bytes() == expected
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["status"] == "ok" and "damage" not in report["source"]
    assert "after the last gzip member were ignored" in " ".join(output.split())
    assert any("after the last gzip member were ignored" in n for n in report["source"]["notes"])


def test_gzip_damaged_after_a_complete_member_keeps_its_rows(tmp_path: Path) -> None:
    lines = EXAMPLE.read_bytes().splitlines(keepends=True)[:10]
    second = bytearray(gzip.compress(b"".join(lines[5:])))
    second[20:40] = b"\xff" * 20  # a second member that starts like gzip and is damaged
    src = tmp_path / "d.jsonl.gz"
    src.write_bytes(gzip.compress(b"".join(lines[:5])) + bytes(second))
    code, output = _cli("scan", str(src), "--out", str(tmp_path / "out"), "--only", ",".join(ONLY))
    assert code == 2, output
    t = _totals(tmp_path / "out")
    assert t["input"] >= 5 and t["input"] == t["kept"] + t["dropped"]


# ----------------------------------------------------------------------- 5. Python objects, raw errors
def _frame(n: int = 6):  # noqa: ANN202
    import pandas as pd

    return pd.DataFrame([{"prompt": f"Question {i}?", "chosen": f"A good answer {i}.", "rejected": f"No {i}."}
                         for i in range(n)])


def _fix_of(exc: BaseException) -> str:
    return str(exc).split("keep the first of each: ", 1)[1].strip()


def test_duplicate_column_names_are_an_error_whose_fix_runs(tmp_path: Path) -> None:
    df = _frame()
    df.insert(3, "chosen", "another chosen column", allow_duplicates=True)
    table = pa.Table.from_pandas(_frame(), preserve_index=False).append_column("rejected", pa.array(["r"] * 6))
    for name, obj in (("df", df), ("table", table)):
        with pytest.raises(PairauditError) as err:
            pairaudit.scan(obj, tmp_path / name, only=ONLY)
        assert err.value.exit_code == 2 and "occurs more than once" in str(err.value)
        scope = {name: obj}
        exec(_fix_of(err.value), scope)  # the suggested fix, run as written
        audit = pairaudit.scan(scope[name], tmp_path / name, only=ONLY)
        assert audit.exit_code == 0 and audit.report["totals"]["input"] == 6


@pytest.mark.parametrize("cell", [5, b"bad \xff bytes", 2.5, ["a", "list"]])
def test_one_mistyped_cell_in_a_pandas_text_column_is_one_malformed_row(tmp_path: Path, cell: object) -> None:
    df = _frame()
    df["chosen"] = df["chosen"].astype(object)
    df.at[2, "chosen"] = cell
    audit = pairaudit.scan(df, tmp_path / "out", only=ONLY)
    t = audit.report["totals"]
    assert audit.exit_code == 0 and (t["input"], t["kept"], t["dropped"], t["malformed"]) == (6, 5, 1, 1)
    assert audit.report["source"]["type"] == "pandas.DataFrame" and "mix types" in audit.report["source"]["notes"][0]
    dropped = [json.loads(x) for x in (tmp_path / "out" / "dropped.jsonl").read_text().splitlines()]
    assert [d["row"] for d in dropped] == [2]
    assert len((tmp_path / "out" / "clean.jsonl").read_text().splitlines()) == 5


def test_bytes_cells_are_text_when_utf8_and_kept_losslessly_when_not(tmp_path: Path) -> None:
    df = _frame()
    df["chosen"] = df["chosen"].astype(object)
    text = df.at[1, "chosen"]
    df.at[1, "chosen"] = text.encode("utf-8")  # text, held as bytes: read as the text it is
    df.at[2, "chosen"] = b"bad \xff"
    audit = pairaudit.scan(df, tmp_path / "out", only=ONLY)
    t = audit.report["totals"]
    assert (t["input"], t["kept"], t["dropped"], t["malformed"]) == (6, 5, 1, 1)
    clean = [json.loads(x) for x in (tmp_path / "out" / "clean.jsonl").read_text().splitlines()]
    assert clean[1]["chosen"] == text  # not "b'...'"
    [dropped] = [json.loads(x) for x in (tmp_path / "out" / "dropped.jsonl").read_text().splitlines()]
    assert dropped["row"] == 2 and dropped["record"]["chosen"] == {"bytes_base64": "YmFkIP8="}
    detail = audit.findings.filter(pl.col("check") == "malformed_record")["detail"][0]
    assert "holds bytes that are not UTF-8 (0xff at byte 4)" in detail and "fix:" in detail


# ---------------------------------------------------------------- 6. row numbers in the Python review API
@pytest.fixture
def scanned(tmp_path: Path) -> Path:
    src = tmp_path / "hh.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:12]))
    assert pairaudit.scan(str(src), tmp_path / "out", only=ONLY).exit_code == 0
    return tmp_path / "out"


BAD_ROWS = [3.7, 8.0, "6", True, float("nan"), float("inf"), -1, None]


def test_review_rejects_every_row_number_the_decisions_file_rejects(scanned: Path) -> None:
    import numpy as np

    from pairaudit.decisions import read_log
    from pairaudit.errors import ConfigError, InputError
    from pairaudit.review import Review

    rv = Review(scanned, reviewer="ana")
    q = rv.queue()
    for bad in BAD_ROWS:
        for call in (lambda b: rv.decide(b, "drop"), lambda b: rv.decide_many([5, b], "drop"),
                     lambda b: q.decide(b, "drop"), lambda b: rv.pair(b)):
            with pytest.raises(ConfigError, match="row") as exc:
                call(bad)
            assert exc.value.fix and ("int" in exc.value.fix or bad is None)  # each error says what to pass
        line = json.dumps({"row": bad, "decision": "drop"}) if bad == bad else '{"row": NaN, "decision": "drop"}'
        (scanned / "other.jsonl").write_text(line + "\n")
        with pytest.raises(InputError):  # the file refuses the same values
            read_log(scanned / "other.jsonl")
    assert not (scanned / "decisions.jsonl").exists()  # nothing was recorded
    for call in (lambda: rv.decide(3, "dorp"), lambda: rv.decide_many([3], "dorp"), lambda: rv.findings("nope"),
                 lambda: rv.decide_many("12", "drop"), lambda: rv.decide_many(12, "drop"),
                 lambda: rv.findings(action="dorp"), lambda: rv.queue().decide(None, "drop")):
        with pytest.raises(ConfigError) as exc:
            call()
        assert exc.value.fix, exc.value  # and what works instead
    assert not (scanned / "decisions.jsonl").exists()
    assert rv.decide(np.int64(3), "drop").row == 3
    rv.decide_many([4, np.int64(5)], "keep")
    assert sorted(rv.decisions()) == [3, 4, 5]


def test_merging_a_decisions_file_that_does_not_exist_is_an_error(scanned: Path) -> None:
    from pairaudit.errors import InputError
    from pairaudit.review import Review

    rv = Review(scanned, reviewer="ana")
    with pytest.raises(InputError, match="does not exist"):
        rv.merge(scanned / "no-such-decisions.jsonl")
    assert repr(rv.merge(Review(scanned, reviewer="bo"))).startswith("Merge: 0 rows added")


# ------------------------------------------------------------------------------ 7. apply's exit codes
@pytest.mark.parametrize("malformed", [0, 2])
def test_apply_exits_5_when_every_row_ends_up_dropped(tmp_path: Path, malformed: int) -> None:
    from pairaudit.review import Review

    lines = EXAMPLE.read_bytes().splitlines(keepends=True)[:3 - malformed] + [b"{not json\n"] * malformed
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(lines))
    out = tmp_path / "out"
    code, output = _cli("scan", str(src), "--out", str(out), "-q", "--only", ",".join(ONLY))
    assert code == 0, output
    Review(out, reviewer="ana").decide_many(range(3 - malformed), "drop")
    code, output = _cli("apply", str(out), "-q")
    t = _totals(out)
    assert code == 5 and (t["input"], t["kept"], t["dropped"]) == (3, 0, 3), output
    assert json.loads((out / "report.json").read_text())["status"] == "empty"
    assert "pass --allow-empty to exit 0" in output  # the message names the option; running it is the fix
    code, output = _cli("apply", str(out), "-q", "--allow-empty")
    assert code == 0, output


# ------------------------------------------------------------------ 8-10. trace: fixes that work when run
TRACE_STATE = {"global_step": 6, "max_steps": 10, "train_batch_size": 2, "logging_steps": 1, "num_train_epochs": 1,
               "log_history": [{"step": 1, "loss": 1.0, "grad_norm": 1.0}, {"step": 2, "loss": 1.1, "grad_norm": 1.2},
                               {"step": 3, "loss": 1.0, "grad_norm": float("nan")}]}


def _trace_run(tmp: Path) -> tuple[Path, Path]:
    run = tmp / "run"
    run.mkdir()
    (run / "trainer_state.json").write_text(json.dumps(TRACE_STATE))
    data = tmp / "d.jsonl"
    data.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:40]))
    return run, data


def _run_fix(fix: str, data: Path) -> tuple[int, str]:
    """Run a suggested shell fix, its `pairaudit trace ...` part through the CLI (DATA / N filled in)."""
    import shlex

    shell, _, command = fix.rpartition(" && ")  # the moves first (one or several), then the trace
    if shell.startswith("mv "):
        subprocess.run(shell, shell=True, check=True)  # noqa: S602 - the message's own command
    else:
        command = fix
    args = shlex.split(command.replace("DATA", str(data)).replace("--step N", "--step 3"))
    assert args[0] == "pairaudit", fix
    return _cli(*args[1:], "--out", str(data.parent / "t-fixed"))


@pytest.mark.parametrize("content", [b"\x00random\xff" * 40, b"\x80\x04\x95" + b"junk" * 20, "pickled-list"])
def test_trust_pickle_on_bytes_it_cannot_read_is_exit_2_with_a_fix_that_works(tmp_path: Path, content) -> None:  # noqa: ANN001
    import pickle

    run, data = _trace_run(tmp_path)
    (run / "training_args.bin").write_bytes(pickle.dumps([1, 2]) if content == "pickled-list" else content)
    code, output = _cli("trace", str(run), "--data", str(data), "--out", str(tmp_path / "t"), "--trust-pickle")
    assert code == 2 and "training_args.bin" in output and "fix: move it aside" in output, output
    mv = " ".join(output.split()).split("fix: move it aside and give the settings another way: ")[1].split(",")[0]
    subprocess.run(mv, shell=True, check=True)  # noqa: S602 - the message's own command
    code, output = _cli("trace", str(run), "--data", str(data), "--out", str(tmp_path / "t"), "--trust-pickle")
    assert code in (0, 6), output


def test_a_damaged_checkpoint_state_does_not_abort_a_trace_whose_top_level_state_is_valid(tmp_path: Path) -> None:
    run, data = _trace_run(tmp_path)
    (run / "checkpoint-2").mkdir()
    (run / "checkpoint-2" / "trainer_state.json").write_text("{corrupt")
    code, output = _cli("trace", str(run), "--data", str(data), "--out", str(tmp_path / "t"))
    assert code in (0, 6), output
    doc = json.loads((tmp_path / "t" / "trace.json").read_text())
    assert "checkpoint-2/trainer_state.json is not readable JSON" in json.dumps(doc) and "--log" not in output


@pytest.mark.parametrize(("folder", "step"), [("checkpoint-4", 99999), ("checkpoint-20", 20)])
def test_a_checkpoint_state_of_another_run_does_not_win_over_the_run_s_own(tmp_path: Path, folder: str,
                                                                            step: int) -> None:
    """BR4 (issue 38's checker): a checkpoint state claiming global_step 99999 (in checkpoint-4), or a stale
    checkpoint-20 of an earlier, longer run beside a run of max_steps 10, was taken as the latest state: the
    trace reported "steps 1-99999" and missed the real NaN at step 3. Such a state is named and left out."""
    run, data = _trace_run(tmp_path)
    code, output = _cli("trace", str(run), "--data", str(data), "--out", str(tmp_path / "ref"))
    want = json.loads((tmp_path / "ref" / "trace.json").read_text())
    (run / folder).mkdir()
    (run / folder / "trainer_state.json").write_text(json.dumps(
        {"global_step": step, "max_steps": step, "log_history": [{"step": step, "loss": float("nan")}]}))
    code2, output = _cli("trace", str(run), "--data", str(data), "--out", str(tmp_path / "t"))
    got = json.loads((tmp_path / "t" / "trace.json").read_text())
    assert code2 == code and got["event"] == want["event"], (got["event"], want["event"])
    assert f"{folder}/trainer_state.json" in json.dumps(got) and str(step) in json.dumps(got), output


def test_a_dpo_config_read_sets_the_dpo_learning_rate_range_without_dpo_logs(tmp_path: Path) -> None:
    """B6 (issue 38's checker): with damaged checkpoint states and no DPO metrics in the log, the diagnosis judged
    the learning rate against the fine-tuning range although a DPOConfig had been read: the arguments name it."""
    run, data = _trace_run(tmp_path)
    (run / "training_args.json").write_text(json.dumps({"learning_rate": 5e-5, "beta": 0.1, "warmup_steps": 0,
                                                        "max_grad_norm": 1.0, "seed": 42}))
    (run / "checkpoint-2").mkdir()
    (run / "checkpoint-2" / "trainer_state.json").write_text("{corrupt")
    code, output = _cli("trace", str(run), "--data", str(data), "--out", str(tmp_path / "t"))
    assert code in (0, 6), output
    doc = json.loads((tmp_path / "t" / "trace.json").read_text())
    assert doc["settings"]["values"]["trainer"] == "trl-dpo"
    lr = next(c for c in doc["diagnosis"]["causes"] if c["cause"] == "learning_rate")
    assert any("the usual DPO range" in x for x in lr["for"]), lr
    assert not any("fine-tuning" in x for x in lr["for"] + lr["against"]), lr


def test_a_scan_record_of_a_default_scan_is_a_config_file(tmp_path: Path) -> None:
    """helper-35's B1: the rescan fix's `--config DIR/.pairaudit/current/.scan.json` failed for every scan run without
    --only (`only = None` refused); an option left at its default is read as left out."""
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:12]))
    out = tmp_path / "out"
    assert _cli("scan", str(src), "--out", str(out), "-q", "--only", ",".join(ONLY), "--max-length", "300")[0] == 0
    record = out / ".pairaudit" / "current" / ".scan.json"
    data = json.loads(record.read_text())
    edited = tmp_path / "default.scan.json"
    edited.write_text(json.dumps({**data, "config": {**data["config"], "only": None}}))
    code, output = _cli("scan", str(src), "--out", str(tmp_path / "again"), "-q", "--config", str(edited),
                        "--only", ",".join(ONLY))
    assert code == 0, output
    assert json.loads((tmp_path / "again" / "report.json").read_text())["config"]["max_length"] == 300


def test_a_damaged_top_level_state_names_a_command_that_works(tmp_path: Path) -> None:
    run, data = _trace_run(tmp_path)
    (run / "trainer_state.json").write_text("{corrupt")
    code, output = _cli("trace", str(run), "--data", str(data), "--out", str(tmp_path / "t"))
    assert code == 2 and "--log" not in output, output
    fix = " ".join(output.split()).split("or move it aside and trace a given step: ")[1]
    code, output = _run_fix(fix, data)
    assert code in (0, 6), output


@pytest.mark.parametrize(("state", "args"), [({}, {"gradient_accumulation_steps": None}),
                                              ({"max_steps": "7"}, {}), ({"train_batch_size": None}, {"seed": None})])
def test_null_or_text_counts_in_a_run_s_files_are_no_value_not_a_traceback(tmp_path: Path, state: dict,
                                                                         args: dict) -> None:
    """Fuzz seed 41 (issue 38's checker): a null gradient_accumulation_steps in training_args.json and a max_steps
    written as text in trainer_state.json crashed the trace (TypeError). A null count is read as not given (the
    trace says so and asks for it when the order needs it), a text count is read as its number."""
    run, data = _trace_run(tmp_path)
    (run / "trainer_state.json").write_text(json.dumps({**TRACE_STATE, **state}))
    (run / "training_args.json").write_text(json.dumps({"per_device_train_batch_size": 2, "seed": 42, **args}))
    code, output = _cli("trace", str(run), "--data", str(data), "--out", str(tmp_path / "t"))
    assert code in (0, 6) and "Traceback" not in output and "internal error" not in output.lower(), output
    doc = json.loads((tmp_path / "t" / "trace.json").read_text())
    nulls = [k for k, v in args.items() if v is None]  # a null in trainer_state.json leaves it to the arguments
    for k in nulls:
        assert any(f"{k} is null" in n for n in doc["settings"]["notes"]), doc["settings"]["notes"]
    code, output = _cli("trace", str(run), "--data", str(data), "--out", str(tmp_path / "t2"), "--set",
                        "gradient_accumulation_steps=null")
    assert code == 2 and "has no value" in output, output


@pytest.mark.parametrize(("key", "value"), [("max_steps", [7]), ("train_batch_size", 0), ("logging_steps", True)])
def test_a_bad_count_in_trainer_state_names_the_file_and_its_set_fix_works(tmp_path: Path, key: str,
                                                                           value: object) -> None:
    """helper-41 (issue 38): "train_batch_size ... must be >= 1" or "max_steps = [7] (list)" named no file and gave
    no fix. The error names trainer_state.json, the key and the value; its --set fix, run, works (the file's
    value of a key --set gives is not read). A count written as text is read as its number, with a note."""
    run, data = _trace_run(tmp_path)
    (run / "trainer_state.json").write_text(json.dumps({**TRACE_STATE, key: value, "train_batch_size": "2"}
                                                      if key != "train_batch_size" else {**TRACE_STATE, key: value}))
    code, output = _cli("trace", str(run), "--data", str(data), "--out", str(tmp_path / "t"))
    flat = " ".join(output.split())
    assert code == 2 and "trainer_state.json" in flat and key in flat and "fix:" in flat, output
    fix = flat.split("or give the run's value with ")[1].split()[:2]
    assert fix == ["--set", f"{key}=N"], fix
    good = {"max_steps": 10, "train_batch_size": 2, "logging_steps": 1}[key]
    code, output = _cli("trace", str(run), "--data", str(data), "--out", str(tmp_path / "t2"), "--set",
                        f"{key}={good}")
    assert code in (0, 6), output
    doc = json.loads((tmp_path / "t2" / "trace.json").read_text())
    assert doc["settings"]["sources"][key] == "--set"
    if key != "train_batch_size":
        assert any("train_batch_size is the text '2'" in n for n in doc["settings"]["notes"]), doc["settings"]


def test_every_damaged_state_is_named_at_once_and_one_command_moves_them_all(tmp_path: Path) -> None:
    """M1 (issue 38's checker): no readable state anywhere: the error names each damaged file (not one per run)
    and its fix moves all of them aside in one command that works."""
    run, data = _trace_run(tmp_path)
    (run / "trainer_state.json").write_text("{corrupt")
    for step in (4, 8):
        (run / f"checkpoint-{step}").mkdir(exist_ok=True)
        (run / f"checkpoint-{step}" / "trainer_state.json").write_text("[1, 2]")
    code, output = _cli("trace", str(run), "--data", str(data), "--out", str(tmp_path / "t"))
    flat = " ".join(output.split())
    assert code == 2 and "also damaged" in flat and flat.count("checkpoint-") >= 4, output
    fix = flat.split("or move them aside and trace a given step: ")[1]
    assert fix.count("mv ") == 3, fix
    code, output = _run_fix(fix, data)
    assert code in (0, 6), output


def test_the_unreliable_trace_fix_chain_ends_when_every_named_setting_is_passed(tmp_path: Path) -> None:
    """A run that logged no epoch: pass what the fix names (the run's true values: the trainer's defaults here),
    round after round; no setting is asked for twice and the trace ends reliable (exit 0)."""
    import re

    run, data = _trace_run(tmp_path)
    passed: dict[str, str] = {}
    for _ in range(4):
        code, output = _cli("trace", str(run), "--data", str(data), "--out", str(tmp_path / "t"),
                            *[a for k, v in passed.items() for a in ("--set", f"{k}={v}")])
        doc = json.loads((tmp_path / "t" / "trace.json").read_text())
        if code == 0:
            break
        assert code == 6, output
        rel = doc["reliability"]
        asked = set(re.findall(r"--set (\w+)=\.\.\.", rel["fix"])) | set(rel["assumed"])
        assert asked and not asked & set(passed), (asked, passed)  # never the same setting twice
        passed.update({k: str(doc["settings"]["values"][k]) for k in asked})
    assert code == 0 and doc["reliability"]["reliable"], output
    assert any(c["check"] == "epochs" and c["result"] == "not_checked" for c in doc["order"]["verification"])


DAMAGE = {"types": {"totals": "x"}, "problems": {"problems": float("nan")}, "remedies": {"remedies": {"a": 1}}}


@pytest.mark.parametrize("damage", ["types", "not-json", "problems", "remedies"])
def test_a_damaged_report_names_a_rescan_that_works(tmp_path: Path, damage: str) -> None:
    """problems / remedies (fuzz seeds 0-60, report.json parts): a NaN problems list made `apply` a TypeError, a
    number for a remedy made `report` a template error; every part the commands read is checked on reading."""
    import shlex

    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:12]))
    out = tmp_path / "out"
    assert _cli("scan", str(src), "--out", str(out), "-q", "--only", ",".join(ONLY))[0] == 0
    report = json.loads((out / "report.json").read_text())
    (out / "report.json").write_text("{oops" if damage == "not-json" else json.dumps({**report, **DAMAGE[damage]}))
    (out / "decisions.jsonl").write_text(json.dumps({"row": 1, "decision": "drop"}) + "\n")
    for command in (["show", str(out), "1"], ["apply", str(out)], ["report", str(out)]):
        code, output = _cli(*command)
        assert code == 2 and "fix: scan again into a new folder: " in output, output
    fix = " ".join(output.split()).split("fix: scan again into a new folder: ")[1].split(" (the same")[0]
    args = shlex.split(fix)
    # the source is named even when report.json cannot be read: the scan's own record (.scan.json) holds it
    assert args[:3] == ["pairaudit", "scan", str(src)] and "SOURCE" not in fix
    code, output = _cli(*args[1:], "-q")  # as printed: the scan's own options come with it (B5: --config)
    assert code == 0, output
    new = Path(args[args.index("--out") + 1])
    assert _totals(new)["input"] == 12
    assert json.loads((new / "report.json").read_text())["config"] == report["config"]
    assert (new / "findings.parquet").read_bytes() == (out / ".pairaudit" / "current" / "findings.parquet").read_bytes()
    code, output = _cli("scan", str(src), "--out", str(out), "-q")  # the old advice: refused, as it says
    assert code == 2 and "changed since pairaudit wrote it" in output


# ------------------------------------------------------------------------------------------- 11. silent
def test_folds_beyond_100_are_refused_and_fewer_folds_used_are_reported_as_used(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:60]))
    code, output = _cli("scan", str(src), "--out", str(tmp_path / "a"), "--only", "likely_flipped",
                        "--set", "likely_flipped.folds=1000000")
    assert code == 2 and "likely_flipped.folds" in output and "at most 100" in output, output
    code, output = _cli("scan", str(src), "--out", str(tmp_path / "b"), "--only", "likely_flipped",
                        "--set", "likely_flipped.folds=50", "--set", "likely_flipped.min_rows=20",
                        "--set", "likely_flipped.use_embedding=false")
    assert code == 0, output
    report = json.loads((tmp_path / "b" / "report.json").read_text())
    check = report["checks"]["likely_flipped"]
    assert report["stats"]["likely_flipped"]["folds"] == 6  # what the fit used, shown wherever folds is shown:
    assert check["thresholds"]["folds"] == 6 and report["config"]["thresholds"]["likely_flipped"]["folds"] == 6
    assert check["clamped"] == {"folds": {"requested": 50, "used": 6, "why": "at most one fold per 10 of the 60 "
                                                                            "scored rows, at least 2"}}, check
    assert "likely_flipped: folds=50 was asked; 6 was used" in " ".join(output.split())
    (tmp_path / "b" / "decisions.jsonl").write_text(json.dumps({"row": 3, "decision": "drop"}) + "\n")
    applied = pairaudit.apply_decisions(tmp_path / "b", rescan=True)  # a rescan asks for what the scan asked for
    assert applied.report["checks"]["likely_flipped"]["clamped"]["folds"]["requested"] == 50
    assert applied.report["totals"]["dropped"] >= 1


def test_nprobe_beyond_the_cells_is_reported_as_the_cells_probed(tmp_path: Path) -> None:
    """The same mechanism for the near-duplicate search: 100 rows in an IVF index have 2 cells, so
    nprobe=1000 probes 2; report.json shows 2 where it shows nprobe, and both values with the reason."""
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:100]))
    code, output = _cli("scan", str(src), "--out", str(tmp_path / "a"), "--only", "near_duplicate_pair",
                        "--set", "near_duplicate_pair.exact_max_rows=1", "--set", "near_duplicate_pair.nprobe=1000")
    assert code == 0, output
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    check, search = report["checks"]["near_duplicate_pair"], report["stats"]["near_duplicates"]
    assert search["index"].startswith("ivf") and search["nprobe"] == search["nlist"] == 2, search
    assert check["thresholds"]["nprobe"] == 2 and report["config"]["thresholds"]["near_duplicate_pair"]["nprobe"] == 2
    assert check["clamped"]["nprobe"]["requested"] == 1000 and "2 cells" in check["clamped"]["nprobe"]["why"]
    assert "clamped" not in search and "nprobe=1000 was asked; 2 was used" in " ".join(output.split())


def test_calibration_floors_out_of_order_are_reported_as_used() -> None:
    """max_response below min_response, min_response_flag above the copy threshold: the calibration runs
    with the cap at the floor and the band floor at the copy threshold; its record and the check's
    thresholds say those, and ``clamped`` both values with the reason (through Context.clamp)."""
    import numpy as np

    from pairaudit.config import Context, ScanConfig, take_clamps
    from pairaudit.stages.near_duplicates.calibrate import calibrate
    from pairaudit.stages.near_duplicates.infos import NEAR_DUPLICATE_INFO

    params = {**NEAR_DUPLICATE_INFO.thresholds, "max_response": 0.5, "min_response_flag": 0.99}
    negatives = np.random.default_rng(0).uniform(0.3, 0.8, 400)
    info = calibrate((negatives, np.zeros(0)), params, "static")
    assert info["cap"] == 0.85 and info["floor_flag"] == info["min_response"] == 0.85, info
    logs: list[str] = []
    ctx = Context(ScanConfig(), log=logs.append)
    take_clamps({"near_duplicates": {"calibration": info}}, ctx)
    assert "clamped" not in info and ctx.clamped["near_duplicate_pair"] == {
        "max_response": {"requested": 0.5, "used": 0.85, "why": "below min_response: the copy threshold is never "
                                                               "below its floor"},
        "min_response_flag": {"requested": 0.99, "used": 0.85, "why": "above the copy threshold (0.85): the unsure "
                                                                      "band starts at the copy threshold"}}
    assert len(logs) == 2 and logs[0].startswith("near_duplicate_pair: max_response=0.5 was asked; 0.85 was used")
    default = calibrate((negatives, np.zeros(0)), dict(NEAR_DUPLICATE_INFO.thresholds), "static")
    assert "clamped" not in default and default["cap"] == 0.98 and default["floor_flag"] == 0.8


@pytest.mark.parametrize("value", ["lots", "Infinity", "0", "-3", ""])
def test_a_length_limit_that_is_a_stray_word_is_a_config_error(value: str) -> None:
    """report.json's config (``apply``) or a config file can hold any string where a length limit goes: a
    ConfigError naming the option (exit 2), never a TypeError from comparing it with 1 (fuzz_inputs seed 21)."""
    from pairaudit.config import ScanConfig, validate_config
    from pairaudit.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        validate_config(ScanConfig(max_length=value))
    assert str(err.value).startswith("option max_length = ") and err.value.exit_code == 2
    for word in ("auto", "none", "None", " 2048 "):  # what trainer.profiles.parse_limit reads
        validate_config(ScanConfig(max_length=word, truncation_mode="keep_end"))  # as a scan resolves it


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_split_on_a_source_without_splits_warns(tmp_path: Path, kind: str) -> None:
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:12]))
    if kind == "parquet":
        import polars as pl

        pl.read_ndjson(src).write_parquet(tmp_path / "s.parquet")
        src = tmp_path / "s.parquet"
    code, output = _cli("scan", str(src), "--split", "test", "--out", str(tmp_path / "out"), "--only", ",".join(ONLY))
    assert code == 0 and "--split test was ignored" in " ".join(output.split()), output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert "--split test was ignored" in report["source"]["notes"][0] and report["totals"]["input"] == 12


def test_subset_on_a_local_source_warns(tmp_path: Path) -> None:
    """B9 (issue 38's checker): `--subset` on a local file was ignored without a word."""
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:12]))
    code, output = _cli("scan", str(src), "--subset", "harmless", "--out", str(tmp_path / "out"),
                        "--only", ",".join(ONLY))
    assert code == 0 and "--subset harmless was ignored" in " ".join(output.split()), output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert any("--subset harmless was ignored" in n for n in report["source"]["notes"])
    assert report["totals"]["input"] == 12


def test_report_after_the_user_removed_report_html_writes_pairaudits_own_page(tmp_path: Path) -> None:
    """B10 (issue 38's checker): `rm OUT/report.html; pairaudit report OUT` wrote a plain file that scan and apply
    then refused as not pairaudit's. The page is re-rendered in the committed generation and its link put back."""
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:12]))
    out = tmp_path / "out"
    assert _cli("scan", str(src), "--out", str(out), "-q", "--only", ",".join(ONLY))[0] == 0
    (out / "report.html").unlink()
    code, output = _cli("report", str(out))
    assert code == 0 and (out / "report.html").is_symlink() and (out / "report.html").read_text().startswith("<!"), output
    (out / "decisions.jsonl").write_text(json.dumps({"row": 1, "decision": "drop"}) + "\n")
    assert _cli("apply", str(out))[0] == 0
    code, output = _cli("scan", str(src), "--out", str(out), "-q", "--only", ",".join(ONLY))
    assert code == 0, output


def test_report_refuses_to_replace_an_edited_report_html_and_its_fix_works(tmp_path: Path) -> None:
    import shlex

    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:12]))
    out = tmp_path / "out"
    assert _cli("scan", str(src), "--out", str(out), "-q", "--only", ",".join(ONLY))[0] == 0
    assert _cli("report", str(out))[0] == 0  # unchanged: re-rendered
    page = out / "report.html"
    page.write_text(page.read_text().replace("</body>", "<p>my notes</p></body>"))
    code, output = _cli("report", str(out))
    assert code == 2 and "report.html changed since pairaudit wrote it" in " ".join(output.split()), output
    assert "my notes" in page.read_text()
    fix = " ".join(output.split()).split("fix: ")[1]
    keep, rescan = fix.split("; scan again into a new folder: ")
    assert "keeps the changed report.html" in rescan  # the file the user changed, not report.json
    subprocess.run(keep.removeprefix("keep your edit with "), shell=True, check=True)  # noqa: S602
    assert "my notes" in (tmp_path / "out-report.html").read_text()
    args = shlex.split(rescan.split(" (the same")[0])
    assert _cli(*args[1:], "-q", "--only", ",".join(ONLY))[0] == 0


def test_an_edit_that_keeps_size_and_mtime_is_seen(tmp_path: Path) -> None:
    import os

    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:12]))
    out = tmp_path / "out"
    assert _cli("scan", str(src), "--out", str(out), "-q", "--only", ",".join(ONLY))[0] == 0
    clean = (out / "clean.jsonl").resolve()
    st = clean.stat()
    data = clean.read_bytes()
    edited = data.replace(b"Human", b"HUMAN", 1)
    assert len(edited) == len(data) and edited != data
    with open(clean, "r+b") as fh:  # in place: same inode, same size
        fh.write(edited)
    os.utime(clean, ns=(st.st_atime_ns, st.st_mtime_ns))  # touch -r
    assert clean.stat().st_mtime_ns == st.st_mtime_ns and clean.stat().st_ino == st.st_ino
    code, output = _cli("scan", str(src), "--out", str(out), "-q", "--only", ",".join(ONLY))
    assert code == 2 and "clean.jsonl changed since pairaudit wrote it" in " ".join(output.split()), output
    assert clean.read_bytes() == edited
    # the printed fix works when run (found by the issue-38 checker: "cp -L" alone left the scan refusing)
    fix = " ".join(output.split()).split("fix: ", 1)[1].split(" (then scan again)")[0]
    subprocess.run(fix, shell=True, check=True, cwd=tmp_path)
    assert (tmp_path / "out-clean.jsonl.saved").read_bytes() == edited
    assert _cli("scan", str(src), "--out", str(out), "-q", "--only", ",".join(ONLY))[0] == 0
    assert (out / "clean.jsonl").read_bytes() == data


def test_apply_works_on_a_byte_identical_copy_and_leaves_the_original_alone(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:12]))
    out, copy = tmp_path / "out", tmp_path / "copy"
    assert _cli("scan", str(src), "--out", str(out), "-q", "--only", ",".join(ONLY))[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    subprocess.run(["cp", "-a", str(out), str(copy)], check=True)  # new inodes, the same bytes
    (copy / "decisions.jsonl").write_text(json.dumps({"row": 3, "decision": "drop"}) + "\n")
    code, output = _cli("apply", str(copy), "-q")
    assert code == 0, output
    assert json.loads((copy / "report.json").read_text())["totals"]["dropped"] == 1
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    clean = (copy / "clean.jsonl").resolve()  # an edit of the copy is still seen
    clean.write_bytes(clean.read_bytes().replace(b"Human", b"HUMAN", 1))
    code, output = _cli("apply", str(copy), "-q")
    assert code == 2 and "clean.jsonl" in output and "changed since pairaudit wrote" in " ".join(output.split())


# -------------------------------------------------------------------------------------------- 4. disk full
def _leftovers(out: Path) -> list[str]:
    """Files a failed run must not leave: temporary manifests, zero-byte files pairaudit names with a dot."""
    meta = out / ".pairaudit"
    return sorted(p.name for p in meta.iterdir() if p.name.startswith(".")) if meta.exists() else []


@pytest.fixture
def tiny_disk(tmp_path: Path):  # noqa: ANN201
    """A 2 MB tmpfs (root only; skipped elsewhere: the simulated cases below run everywhere)."""
    import os

    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)],
                                           capture_output=True).returncode:
        pytest.skip("mounting a tmpfs needs root")
    yield mnt
    subprocess.run(["umount", str(mnt)], check=False)


def _fill(mnt: Path, free_kb: int) -> None:
    import os

    (mnt / "filler").unlink(missing_ok=True)
    st = os.statvfs(mnt)
    avail = st.f_bavail * st.f_frsize // 1024
    with open(mnt / "filler", "wb") as fh:
        fh.write(b"\0" * max(0, avail - free_kb) * 1024)


def test_a_disk_that_fills_at_every_write_is_exit_2_and_leaves_nothing(tiny_disk: Path, tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:20]))
    out = tiny_disk / "out"
    pairaudit.scan(str(src), out, only=ONLY)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    codes = set()
    for free in range(0, 200, 6):  # every point at which the rescan's writes run out of space
        _fill(tiny_disk, free)
        try:
            audit = pairaudit.scan(str(src), out, only=ONLY)
            codes.add(audit.exit_code)
            before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
        except PairauditError as exc:
            assert exc.exit_code == 2 and "[ENOSPC]" in str(exc) and "fix: free space" in str(exc), str(exc)
            codes.add(2)
        assert _leftovers(out) == [], (free, _leftovers(out))
        assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before  # old or new, whole
        assert _totals(out)["input"] == 20
    assert codes == {0, 2}, codes


def test_report_on_a_full_disk_suggests_no_out_and_its_fix_works(tiny_disk: Path, tmp_path: Path) -> None:
    """B3 (issue 38's checker): `pairaudit report` on a full disk suggested --out, which `report` does not have.
    The fix is generated for the command that ran (in place): freeing space, as it says, makes it work."""
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:20]))
    out = tiny_disk / "out"
    pairaudit.scan(str(src), out, only=ONLY)
    before = (out / "report.html").read_bytes()
    _fill(tiny_disk, 0)
    code, output = _cli("report", str(out))
    flat = " ".join(output.split())
    assert code == 2 and "[ENOSPC]" in flat and "--out" not in flat, output
    assert f"fix: free space on the disk of {out}" in flat and "cp -a" in flat, output
    assert (out / "report.html").read_bytes() == before and _leftovers(out) == []
    (tiny_disk / "filler").unlink()  # the fix, followed
    code, output = _cli("report", str(out))
    assert code == 0, output


def test_a_failed_manifest_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import os

    from pairaudit.outputs import folder

    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:12]))
    out = tmp_path / "out"
    pairaudit.scan(str(src), out, only=ONLY)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    real_replace, calls = os.replace, []

    def full(a, b):  # noqa: ANN001, ANN202 - the switch and the manifest's restore both meet a full disk
        calls.append(str(b))
        if str(b).endswith(("current", "manifest.json")) and len(calls) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_replace(a, b)

    monkeypatch.setattr(folder.os, "replace", full)
    with pytest.raises(PairauditError) as err:
        pairaudit.scan(str(src), out, only=ONLY)
    monkeypatch.undo()
    assert err.value.exit_code == 2 and "[ENOSPC]" in str(err.value)
    assert _leftovers(out) == [] and {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_a_polars_error_on_a_full_disk_is_disk_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import polars as pl

    from pairaudit import errors, pipeline

    def cut_short(*_a, **_k) -> None:  # what polars says reading back a file the full disk cut short
        raise pl.exceptions.ComputeError("parquet: File out of specification: The file must end with PAR1")

    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:12]))
    monkeypatch.setattr(pipeline, "write_scores", cut_short)
    monkeypatch.setattr(errors, "disk_full", lambda _p, margin=0: True)
    with pytest.raises(PairauditError) as err:
        pairaudit.scan(str(src), tmp_path / "out", only=ONLY)
    assert err.value.exit_code == 2 and "[ENOSPC]" in str(err.value) and "File out of specification" in str(err.value)
    monkeypatch.setattr(errors, "disk_full", lambda _p, margin=0: False)  # space left: a real bug, not hidden
    with pytest.raises(pl.exceptions.ComputeError):
        pairaudit.scan(str(src), tmp_path / "out2", only=ONLY)


def _cache_leftovers(disk: Path) -> list[str]:
    """Temporary cache entries a failed write must not leave (pairaudit.cache names them .tmp-PID-...)."""
    return sorted(str(p.relative_to(disk)) for p in disk.rglob("*") if ".tmp" in p.name)


def test_a_full_model_cache_runs_the_scan_uncached_and_leaves_nothing(tiny_disk: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """PAIRAUDIT_CACHE on a full disk (the GGUF tokenizer, 3.4 MB, never fits; the embedding shards fail part
    way at the small sizes): exit 0, the same outputs as with a working cache, one warning, report.json
    ``cache`` saying what ran uncached, no temporary entry left; its fix (another PAIRAUDIT_CACHE) works."""
    import os

    from pairaudit.models import tokenizer as tokenizer_module

    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:20]))
    opts = {"only": [*ONLY, "too_long", "near_duplicate_pair"], "embed_mode": "transformer"}
    ref = output_files(pairaudit.scan(str(src), tmp_path / "ref", **opts).out_dir)
    ref_report = json.loads(ref.pop("report.json"))
    ref.pop("report.html"), ref.pop("timings.json")  # run-specific
    monkeypatch.setenv("PAIRAUDIT_CACHE", str(tiny_disk / "cache"))
    for free, fresh_process in ((0, True), (600, True), (20, False), (48, False)):
        _fill(tiny_disk, free)
        if fresh_process:  # the GGUF tokenizer is parsed (and its cache entry written) once per process
            monkeypatch.setattr(tokenizer_module, "_TOKENIZER_CACHE", {})
        logs: list[str] = []
        audit = pairaudit.scan(str(src), tmp_path / f"out{free}", log=logs.append, **opts)
        assert audit.exit_code == 0, audit.report["problems"]
        cache = audit.report["cache"]
        assert "[ENOSPC]" in cache["error"] and cache["folder"] == str(tiny_disk / "cache"), cache
        assert ("the tokenizer parsed from the GGUF file" in cache["uncached"]) == fresh_process, cache
        assert "embedding vectors" in cache["uncached"] and "PAIRAUDIT_CACHE" in cache["fix"], cache
        assert sum("cache: could not write" in m for m in logs) == 1, logs  # warned once
        assert _cache_leftovers(tiny_disk) == [], (free, _cache_leftovers(tiny_disk))
        assert {k: v for k, v in output_files(audit.out_dir).items() if k in ref} == ref  # the same results
        assert {k: v for k, v in audit.report.items() if k != "cache"} == ref_report
    monkeypatch.setenv("PAIRAUDIT_CACHE", str(tmp_path / "elsewhere"))  # the fix it gives, followed
    monkeypatch.setattr(tokenizer_module, "_TOKENIZER_CACHE", {})
    audit = pairaudit.scan(str(src), tmp_path / "fixed", **opts)
    assert audit.exit_code == 0 and "cache" not in audit.report
    assert any(os.scandir(tmp_path / "elsewhere" / "tokenizers")) and output_files(audit.out_dir)["clean.jsonl"] == ref[
        "clean.jsonl"]


def test_a_tokenizer_object_and_a_full_cache_is_exit_2_with_fixes_that_work(tiny_disk: Path, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A tokenizer object is recorded as the cache folder it is saved in: with no room there the scan cannot
    run as asked. Exit 2 before anything is written, nothing left in the cache, and both fixes it names work."""
    from pairaudit.config import default_cache_dir
    from pairaudit.models.tokenizer import load_tokenizer

    tok, _ = load_tokenizer(None, default_cache_dir())  # a real transformers tokenizer object
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:12]))
    monkeypatch.setenv("PAIRAUDIT_CACHE", str(tiny_disk / "cache"))
    _fill(tiny_disk, 300)
    with pytest.raises(PairauditError) as err:
        pairaudit.scan(str(src), tmp_path / "out", tokenizer=tok, only=ONLY)
    text = str(err.value)
    assert err.value.exit_code == 2 and "[ENOSPC]" in text and "PAIRAUDIT_CACHE" in err.value.fix, text
    assert "tok.save_pretrained('DIR'), tokenizer='DIR'" in err.value.fix, text
    assert _cache_leftovers(tiny_disk) == [] and not (tmp_path / "out").exists()
    tok.save_pretrained(str(tmp_path / "tok"))  # fix 1: the tokenizer's own folder
    assert pairaudit.scan(str(src), tmp_path / "out", tokenizer=str(tmp_path / "tok"), only=ONLY).exit_code == 0
    monkeypatch.setenv("PAIRAUDIT_CACHE", str(tmp_path / "elsewhere"))  # fix 2: a cache with room
    assert pairaudit.scan(str(src), tmp_path / "out2", tokenizer=tok, only=ONLY).exit_code == 0


# ------------------------------------------------------------------- the fuzz surfaces, at a CI size
def test_fuzz_surfaces_of_issue_38_at_a_small_size(tmp_path: Path) -> None:
    """scripts/fuzz_edges.py's issue-38 surfaces (one seed, a few cases each; scripts/fuzz_inputs.py runs more): no traceback, an allowed exit
    code, every record in clean or dropped; the Python API cases raise what they should."""
    import random
    import sys

    from conftest import ROOT

    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import fuzz_edges as fe
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    for seed in (0,):
        rng = random.Random(seed)
        work = tmp_path / f"seed{seed}"
        work.mkdir()
        for case in fe.utf8_container_cases(work, rng, 2) + fe.gzip_tail_cases(work, rng, 2):
            code, output = _cli(*case.argv)
            assert code in case.allowed, (case.name, output)
            t = _totals(case.out)
            assert t["input"] == case.records == t["kept"] + t["dropped"], (case.name, t)
        problems = [(name, p) for name, p in fe.api_problems(work, rng, 1) if p is not None]
        assert problems == [], problems


def test_a_deleted_report_json_target_gets_a_fix_that_works(tmp_path: Path) -> None:
    """Found by the issue-38 checker: with report.json's file deleted (its link left), `apply` said "run pairaudit
    scan SOURCE --out DIR first", and that scan refuses (a removed output is a changed one). The fix names the
    recorded source and a new folder, and running it works."""
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:12]))
    out = tmp_path / "out"
    assert _cli("scan", str(src), "--out", str(out), "-q", "--only", ",".join(ONLY))[0] == 0
    (out / "report.json").resolve().unlink()
    for cmd in ("apply", "report"):
        code, output = _cli(cmd, str(out))
        flat = " ".join(output.split())
        assert code == 2 and "holds no report.json" in flat and str(src) in flat, output
    fix = flat.split("fix: scan again into a new folder: ", 1)[1].split(" (the same")[0]
    assert fix.startswith("pairaudit scan ")
    code, output = _cli(*shlex.split(fix)[1:], "-q", "--only", ",".join(ONLY))
    assert code == 0 and (tmp_path / "out-rescan" / "report.json").exists(), output


def test_report_refusing_an_edited_report_html_prints_a_copy_command_that_works_with_spaces(tmp_path: Path) -> None:
    # found attacking the B10 fix: the "cp -L" of the fix was not shell-quoted, so a folder with a space failed
    src = tmp_path / "s p.jsonl"
    src.write_bytes(b"".join(EXAMPLE.read_bytes().splitlines(keepends=True)[:12]))
    out = tmp_path / "o x"
    assert _cli("scan", str(src), "--out", str(out), "-q", "--only", ",".join(ONLY))[0] == 0
    html = out / "report.html"
    edited = html.read_bytes() + b"<!-- my note -->\n"
    html.resolve().write_bytes(edited)
    code, output = _cli("report", str(out))
    assert code == 2 and "report.html changed since pairaudit wrote it" in " ".join(output.split()), output
    copy = " ".join(output.split()).split("keep your edit with ", 1)[1].split("; ", 1)[0]
    subprocess.run(copy, shell=True, check=True, cwd=tmp_path)
    assert (tmp_path / "o x-report.html").read_bytes() == edited
    assert html.read_bytes() == edited

"""The command line: help without torch, scan, checks, policy precedence, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import CHEAP, EXAMPLE, write_jsonl
from typer.testing import CliRunner

from pairaudit.cli import app

runner = CliRunner()
ONLY = ",".join(CHEAP)


def test_help_works_without_torch() -> None:
    """Block torch/sentence-transformers/faiss imports, as in a base install, and ask every command for help."""
    code = (
        "import sys\n"
        "for m in ('torch', 'sentence_transformers', 'faiss', 'sklearn', 'matplotlib'): sys.modules[m] = None\n"
        "from typer.testing import CliRunner\n"
        "from pairaudit.cli import app\n"
        "r = CliRunner()\n"
        "for args in (['--help'], ['scan', '--help'], ['checks', '--help'], ['report', '--help'], "
        "['show', '--help'], ['apply', '--help'], ['checks']):\n"
        "    res = r.invoke(app, args)\n"
        "    assert res.exit_code == 0, (args, res.output, res.exception)\n"
        "assert 'torch' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
        "print('ok')\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr


def test_checks_lists_every_contract_name() -> None:
    res = runner.invoke(app, ["checks", "--json"])
    assert res.exit_code == 0
    data = json.loads(res.output)
    for name in CHEAP + ["malformed_record"]:
        assert name in data and data[name]["default_action"] in ("drop", "flag")


def test_scan_then_show_and_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = runner.invoke(app, ["scan", str(EXAMPLE), "--out", str(out), "--only", ONLY])
    assert res.exit_code == 0, res.output
    assert "kept" in res.output and (out / "report.json").exists()
    row = json.loads((out / "dropped.jsonl").read_text().splitlines()[0])["row"]
    res = runner.invoke(app, ["show", str(out), str(row)])
    assert res.exit_code == 0 and str(row) in res.output
    res = runner.invoke(app, ["report", str(out)])
    assert res.exit_code == 0 and "report.html" in res.output


def test_policy_precedence_flag_over_file_over_default(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "p.jsonl", [
        {"prompt": "Q?", "chosen": "Same text.", "rejected": "Same text."},          # identical: drop by default
        {"prompt": "Q2?", "chosen": "Right answer here.", "rejected": "Wrong answer here, sadly."},
    ])
    cfg = tmp_path / "cfg.toml"
    cfg.write_text('[checks.identical_pair]\naction = "flag"\n\n[checks.too_long]\naction = "drop"\n')

    def kept(*extra: str) -> int:
        out = tmp_path / f"o{len(extra)}"
        res = runner.invoke(app, ["scan", str(src), "--out", str(out), "--only", ONLY, "-q", *extra])
        assert res.exit_code == 0, res.output
        return json.loads((out / "report.json").read_text())["totals"]["kept"]

    assert kept() == 1                                              # default: drop
    assert kept("--config", str(cfg)) == 2                          # file: flag
    assert kept("--config", str(cfg), "--drop", "identical_pair") == 1  # flag beats file
    # file made too_long drop: every row dropped, which exits 5 unless --allow-empty
    assert kept("--config", str(cfg), "--max-length", "4", "--allow-empty") == 0


def test_fail_on_and_input_errors(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = runner.invoke(app, ["scan", str(EXAMPLE), "--out", str(out), "--only", ONLY, "-q", "--max-length", "256",
                              "--fail-on", "too_long>0.1%"])
    assert res.exit_code == 3
    res = runner.invoke(app, ["scan", str(EXAMPLE), "--out", str(out), "--only", ONLY, "-q", "--max-length", "256",
                              "--fail-on", "too_long>50%"])
    assert res.exit_code == 0
    res = runner.invoke(app, ["scan", str(tmp_path / "missing.jsonl"), "--out", str(out)])
    assert res.exit_code == 2 and "does not exist" in res.output
    res = runner.invoke(app, ["scan", str(EXAMPLE), "--out", str(out), "--drop", "no_such_check"])
    assert res.exit_code == 2 and "pairaudit checks" in res.output
    res = runner.invoke(app, ["scan", str(EXAMPLE), "--out", str(out), "--skip", "malformed_record"])
    assert res.exit_code == 2 and "cannot be skipped" in res.output


def _scan_options() -> list[str]:
    import typer

    cmd = typer.main.get_command(app).commands["scan"]
    return [o for p in cmd.params for o in p.opts if o.startswith("--")]


def test_scan_help_at_80_columns_cuts_nothing() -> None:
    res = runner.invoke(app, ["scan", "--help"], env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"})
    assert res.exit_code == 0
    lines = res.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in res.output  # neither an option name nor a help word was cut
    names = _scan_options()
    assert {"--trainer", "--max-prompt-length", "--max-completion-length", "--truncation-mode"} <= set(names)
    for name in names:
        assert any(line.split("│")[1:2] and line.split("│")[1].split()[:1] == [name] for line in lines), name
    for metavar in ("CHECK[,CHECK...]", "N|none", "PATH|ID", "CHECK.PARAM=VALUE", "CHECK>RATE", "DIR", "FILE"):
        assert metavar in res.output, metavar
    assert "<list[str]>" not in res.output and "<int>" not in res.output and "<path>" not in res.output


def test_checks_is_a_compact_list_at_80_columns() -> None:
    from pairaudit.catalog import all_checks

    res = runner.invoke(app, ["checks"], env={"COLUMNS": "80"})
    assert res.exit_code == 0
    lines = res.output.splitlines()
    assert max(len(line) for line in lines) <= 80 and len(lines) <= len(all_checks()) + 12
    for name, info in all_checks().items():  # one line per check, its default action on it
        mine = [line for line in lines if line.split()[:1] == [name]]
        assert len(mine) == 1 and f" {info.default_action} " in mine[0], name
    assert "(embed)" in res.output and "pairaudit[extra]" in res.output  # no markup swallowed
    verbose = runner.invoke(app, ["checks", "--verbose"], env={"COLUMNS": "80"}).output
    assert max(len(line) for line in verbose.splitlines()) <= 80
    assert "min_prompt=0.85" in verbose and "why drop:" in verbose and "dropped_by_trainer" in verbose
    data = json.loads(runner.invoke(app, ["checks", "--json"]).output)
    assert data["dropped_by_trainer"]["default_action"] == "drop" and data["near_duplicate_pair"]["extra"] == "embed"


def test_ray_options_with_the_local_engine_are_a_usage_error(tmp_path: Path) -> None:
    """--ray-shards / --ray-workers / --ray-address with the local engine once ran silently and were recorded in
    report.json's config; now exit 2 naming the options and the fix, and nothing is written. A report.json
    that recorded them (before) still re-applies decisions: they are dropped there."""
    from pairaudit.config import ScanConfig, without_ray_options

    out = tmp_path / "out"
    r = runner.invoke(app, ["scan", str(EXAMPLE), "--out", str(out), "--ray-shards", "3", "--ray-workers", "2"])
    assert r.exit_code == 2, r.output
    assert "--ray-workers, --ray-shards" in r.output and "apply only to the Ray engine" in r.output
    assert "--engine ray" in r.output and not out.exists()
    assert without_ray_options(ScanConfig(ray_shards=3)).ray_shards is None
    assert without_ray_options(ScanConfig(engine="ray", ray_shards=3)).ray_shards == 3


def test_a_reference_folder_that_is_no_model_names_the_option_and_fails_its_checks(tmp_path: Path) -> None:
    """A folder without a model given to --reference: the error named --tokenizer in its fix (the tokenizer is the
    first part loaded) and said only "check that the folder holds a complete model"."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "readme.txt").write_text("not a model\n", encoding="utf-8")
    src = write_jsonl(tmp_path / "p.jsonl", [{"prompt": "Hi?", "chosen": "Hello there.", "rejected": "Go away."}] * 3)
    r = runner.invoke(app, ["scan", str(src), "--out", str(tmp_path / "o"), "--only", "likely_flipped",
                            "--reference", str(notes)])
    assert f"could not load tokenizer from {notes} (--reference)" in r.output, r.output
    # docs/contract.md: a model that cannot load fails its checks, exit 4 with the outputs written (it stopped
    # the scan with nothing written, unlike --embedder, --reward-model or --policy; helper-61)
    assert r.exit_code == 4, r.output
    report = json.loads((tmp_path / "o" / "report.json").read_text(encoding="utf-8"))
    assert report["status"] == "incomplete" and report["checks"]["likely_flipped"]["status"] == "failed"
    said = report["checks"]["likely_flipped"]["reason"]
    assert "(--reference)" in said and "fix: pass --reference a complete model folder or .gguf file" in said, said
    assert "--tokenizer" not in said, said
    assert (tmp_path / "o" / "clean.jsonl").read_text(encoding="utf-8").count("\n") == 3
    # the trainer's tokenizer is needed to read any row: the scan stops before writing anything
    r = runner.invoke(app, ["scan", str(src), "--out", str(tmp_path / "t"), "--tokenizer", str(notes)])
    assert r.exit_code == 4 and not (tmp_path / "t").exists(), r.output
    assert f"could not load tokenizer from {notes} (--tokenizer)" in r.output, r.output

"""The stage/engine contract (docs/layout.md, "Adding a stage"): a stage written as the docs say, registered
through ``PAIRAUDIT_STAGES``, gives the same findings, scores and stats in one process, in the worker pool
(``--workers 2``) and on a multi-node Ray cluster; a stage whose ``observe`` keeps undeclared state fails when
its class is defined; no engine reaches into a stage's or the scanner's private names."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import HH, ROOT
from support.first_word_stage import PATH

import pairaudit
from pairaudit.checks.base import CheckInfo
from pairaudit.datatypes import StageResult
from pairaudit.stages.base import Stage
from pairaudit.stages.contract import StageDeclarationError
from pairaudit.stages.state import Column, Count, Items

N_ROWS = 600
CHECKS = ["lone_opening", "duplicate_pair", "contradictory_pair"]
INFO = CheckInfo("row_counter", "counts rows", "flag", summary="rows counted", kind="global", why="a test")


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """600 real HH-RLHF rows."""
    src = tmp_path_factory.mktemp("contract") / "hh.jsonl"
    with open(HH, encoding="utf-8") as fh:
        src.write_text("".join(next(fh) for _ in range(N_ROWS)), encoding="utf-8")
    return src


def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stage registered as a user would (its package importable, named in PAIRAUDIT_STAGES)."""
    monkeypatch.setenv("PAIRAUDIT_STAGES", PATH)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]))


def _result(out: Path) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return (pl.read_parquet(out / "findings.parquet"), pl.read_parquet(out / "scores.parquet"),
            report["stats"]["lone_opening"])


@pytest.fixture(scope="module")
def in_process(source: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple:
    with pytest.MonkeyPatch.context() as mp:
        _env(mp)
        out = tmp_path_factory.mktemp("one") / "out"
        audit = pairaudit.scan(source, out=out, only=CHECKS, workers=1, progress=False, log=lambda m: None)
    assert audit.report["checks"]["lone_opening"]["status"] == "ran"
    return _result(out)


def test_the_stage_runs_in_one_process(in_process: tuple) -> None:
    findings, scores, stats = in_process
    mine = findings.filter(pl.col("check") == "lone_opening")
    assert stats == {"rows_observed": N_ROWS}
    assert 0 < mine.height < N_ROWS and set(mine["field"]) == {"chosen"}
    uses = scores["lone_opening_score"].to_numpy()
    assert np.array_equal(np.sort(mine["row"].to_numpy()), np.sort(scores["row"].to_numpy()[uses == 1]))


def test_the_worker_pool_gives_the_same(in_process: tuple, source: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from pairaudit.engines import local

    _env(monkeypatch)
    monkeypatch.setattr(local, "POOL_MIN_ROWS", 0)
    logs: list[str] = []
    pairaudit.scan(source, out=tmp_path / "o", only=CHECKS, workers=2, batch_size=97, progress=False,
                   log=logs.append)
    assert not any("every batch runs in this process" in m for m in logs), logs
    got = _result(tmp_path / "o")
    assert got[2] == in_process[2] == {"rows_observed": N_ROWS}
    assert got[0].equals(in_process[0]) and got[1].equals(in_process[1])


def test_a_multi_node_ray_cluster_gives_the_same(in_process: tuple, source: Path, tmp_path: Path) -> None:
    ray = pytest.importorskip("ray", reason="install pairaudit[ray]")
    from ray.cluster_utils import Cluster

    with pytest.MonkeyPatch.context() as mp:
        _env(mp)  # before the nodes start: their workers inherit it
        mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
        store = 80 * 1024 * 1024
        c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "object_store_memory": store,
                                                          "include_dashboard": False})
        try:
            for _ in range(2):
                c.add_node(num_cpus=1, object_store_memory=store)
            c.wait_for_nodes()
            ray.init(address=c.address, log_to_driver=False, configure_logging=False)
            audit = pairaudit.scan(source, out=tmp_path / "r", only=CHECKS, engine="ray", ray_shards=4,
                                   progress=False, log=lambda m: None)
        finally:
            ray.shutdown()
            c.shutdown()
    assert audit.report["stats"]["engine"]["nodes_used"] == 2
    assert audit.report["stats"]["engine"]["distributed"]["driver_finalized"] == ["FirstWordStage"]
    got = _result(tmp_path / "r")
    assert got[2] == in_process[2] == {"rows_observed": N_ROWS}
    assert got[0].equals(in_process[0]) and got[1].equals(in_process[1])


# -- declarations checked when the class is defined ---------------------------------------------------------
def test_undeclared_state_fails_at_definition() -> None:
    with pytest.raises(StageDeclarationError, match=r"observe changes self\.rows_observed, not declared"):
        class Counting(Stage):  # the stage: infos, observe, finalize, and no declared state
            infos = (INFO,)
            state = {"_rows": Column(np.int64)}

            def observe(self, pairs: list, encoded: object) -> None:
                self._rows.append(np.arange(len(pairs)))
                self.rows_observed = getattr(self, "rows_observed", 0) + len(pairs)

            def finalize(self) -> StageResult:
                return StageResult()


def test_state_changed_in_a_helper_method_is_found() -> None:
    with pytest.raises(StageDeclarationError, match=r"self\._seen"):
        class Helper(Stage):
            infos = (INFO,)
            state = {"n": Count()}

            def observe(self, pairs: list, encoded: object) -> None:
                self.n += len(pairs)
                self._remember(pairs)

            def _remember(self, pairs: list) -> None:
                self._seen.setdefault("rows", []).extend(p.row for p in pairs)

            def finalize(self) -> StageResult:
                return StageResult()


@pytest.mark.parametrize(("attrs", "message"), [
    ({}, r"`state` must declare what observe keeps"),
    ({"state": {"n": 0}}, r"`state` must declare"),
    ({"state": {"n": Count()}, "infos": ()}, r"`infos` must be a non-empty tuple"),
    ({"state": {"n": Count()}, "distribute": "shards"}, r"distribute='shards' is not one of"),
    ({"state": {"_rows": Column(np.int64), "notes": Items()}, "distribute": "hash", "partition_key": "_rows"},
     r"\['notes'\] are not per-row columns"),
    ({"state": {"_rows": Column(np.int64)}, "distribute": "hash", "partition_key": "_key"},
     r"needs a partition_key among its state"),
    ({"state": {"_rows": Column(np.int64)}, "distribute": "summary"}, r"needs the methods \['summary', "),
])
def test_bad_declarations_fail_at_definition(attrs: dict, message: str) -> None:
    body = {"infos": (INFO,), **attrs, "observe": lambda self, pairs, enc: None,
            "finalize": lambda self: StageResult()}
    with pytest.raises(StageDeclarationError, match=message):
        type("Bad", (Stage,), body)


def test_declared_state_merges_and_cuts_by_kind() -> None:
    class Two(Stage):
        infos = (INFO,)
        state = {"_rows": Column(np.int64), "n": Count(), "notes": Items()}

        def observe(self, pairs: list, encoded: object) -> None:
            self._rows.append(np.asarray([p for p in pairs], np.int64))
            self.n += len(pairs)
            self.notes.append(f"{len(pairs)} rows")

        def finalize(self) -> StageResult:
            return StageResult()

    a, b = Two(None, set()), Two(None, set())  # type: ignore[arg-type]
    a.observe([0, 1], None)
    b.observe([2, 3, 4], None)
    a.absorb_state(b.export_state())
    assert b.n == 0 and b._rows == [] and a.n == 5 and a.notes == ["2 rows", "3 rows"]
    state = a.export_state()
    assert Two.row_numbers(state).tolist() == [0, 1, 2, 3, 4]
    cut = Two.take_rows(state, np.asarray([1, 3]))
    assert cut["_rows"][0].tolist() == [1, 3] and cut["n"] == 5 and cut["notes"] == ["2 rows", "3 rows"]
    clone = a.with_state(cut)
    assert clone._rows[0].tolist() == [1, 3] and a._rows == [] and clone.ctx is a.ctx


# -- engines use the public contract only -------------------------------------------------------------------
def _private_uses(folder: Path) -> list[str]:
    out = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                out.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                    "getattr", "setattr", "hasattr") and len(node.args) > 1:
                name = node.args[1]
                if isinstance(name, ast.Constant) and str(name.value).startswith("_"):
                    out.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_no_engine_touches_private_names() -> None:
    assert _private_uses(ROOT / "pairaudit" / "engines") == []


def test_the_private_name_scan_can_fail(tmp_path: Path) -> None:
    (tmp_path / "e.py").write_text("def f(stage, scanner):\n    stage._rows = []\n    scanner._stage_failed(1)\n"
                                   "    getattr(stage, '_spill')\n    self._own = 1\n", encoding="utf-8")
    assert sorted(x.split(": ")[1] for x in _private_uses(tmp_path)) == [
        "getattr(stage, '_spill')", "scanner._stage_failed", "stage._rows"]


def test_every_registered_stage_declares_its_models_and_state() -> None:
    from pairaudit.stages.registry import stage_classes

    uses = {c.__name__: c.uses_models for c in stage_classes()}
    assert uses["NearDuplicateStage"] and uses["FlipStage"] and not uses["ExactStage"]
    for cls in stage_classes():
        assert cls.state and cls.rows_attr in cls.state, cls.__name__


def test_an_init_without_super_fails_at_definition() -> None:
    with pytest.raises(StageDeclarationError, match=r"__init__ does not call super\(\).__init__"):
        class NoSuper(Stage):
            infos = (INFO,)
            state = {"n": Count()}

            def __init__(self, ctx: object, enabled: set[str]) -> None:
                self.ctx, self.n = ctx, 0

            def observe(self, pairs: list, encoded: object) -> None:
                self.n += len(pairs)

            def finalize(self) -> StageResult:
                return StageResult()


BAD_STAGE = '''
import numpy as np
from pairaudit.checks.base import CheckInfo
from pairaudit.datatypes import StageResult
from pairaudit.stages.base import Stage
from pairaudit.stages.state import Column

INFO = CheckInfo("bad_stage_check", "a test", "flag", summary="a test", kind="global", why="a test")


class CountingStage(Stage):
    infos = (INFO,)
    state = {"_rows": Column(np.int64)}

    def observe(self, pairs, encoded):
        self._rows.append(np.arange(len(pairs)))
        self.seen = len(pairs)

    def finalize(self):
        return StageResult()
'''


def test_a_registered_stage_declared_wrongly_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From the CLI: exit 2 with what to declare, no traceback; a class name with a typo gets a suggestion."""
    from typer.testing import CliRunner

    from pairaudit.cli import app
    from pairaudit.errors import ConfigError
    from pairaudit.stages.registry import stage_classes

    (tmp_path / "my_bad_stages.py").write_text(BAD_STAGE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PAIRAUDIT_STAGES", "my_bad_stages:CountingStage")
    res = CliRunner().invoke(app, ["scan", str(ROOT / "examples" / "hh-rlhf-helpful-base-500.jsonl"), "--out",
                                   str(tmp_path / "out")])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "self.seen, not declared in `state`" in res.output
    assert not (tmp_path / "out").exists()
    monkeypatch.setenv("PAIRAUDIT_STAGES", "support.first_word_stage:FirstWordstage")
    with pytest.raises(ConfigError, match=r"has no 'FirstWordstage' \(did you mean 'FirstWordStage'\?\)"):
        stage_classes()


def test_the_plan_decides_which_stage_findings_count(source: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A stage that reports a check the user left off (here: it widens its own ``enabled`` and reports
    duplicate_pair findings) adds nothing: the plan decides."""
    from support import first_word_stage

    from pairaudit.stages.exact import DUPLICATE_INFO

    _env(monkeypatch)
    real = first_word_stage.FirstWordStage.finalize

    def widened(self: Stage) -> StageResult:
        self.enabled = self.enabled | {"duplicate_pair"}
        res = real(self)
        res.findings.append(DUPLICATE_INFO.finding(3, None, 1.0, 1, "not asked for"))
        return res

    monkeypatch.setattr(first_word_stage.FirstWordStage, "finalize", widened)
    pairaudit.scan(source, out=tmp_path / "o", only=["lone_opening"], workers=1, progress=False,
                   log=lambda m: None)
    checks = set(pl.read_parquet(tmp_path / "o" / "findings.parquet")["check"])
    assert "lone_opening" in checks and "duplicate_pair" not in checks

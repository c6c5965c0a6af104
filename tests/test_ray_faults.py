"""A Ray worker killed in the middle of a scan (issue 37, docs/scale.md "A lost worker").

An actor's shards (their findings, metrics and stage columns) live in its memory and spill folder, so a killed actor cannot be
restarted with its state: the scan stops with exit 4, naming the lost worker, its shards and the phase, and the
previous output generation is left byte for byte as it was (no new generation, no temp files). Running the scan
again (the error's fix) gives the undisturbed scan's outputs. A shard whose rows go missing between reading and
writing is caught before the commit (input = kept + dropped, per shard)."""

from __future__ import annotations

import json
import os
import random
import signal
import tempfile
from pathlib import Path

import polars as pl
import pytest
from conftest import CHEAP, write_jsonl
from support.compare import same_findings, same_scores
from support.planting import planted_records
from typer.testing import CliRunner

ray = pytest.importorskip("ray", reason="install pairaudit[ray]")

from pairaudit.cli import app  # noqa: E402
from pairaudit.engines import ray_engine  # noqa: E402
from pairaudit.engines.ray_cluster import session_logs  # noqa: E402
from pairaudit.stages.spill import ACTOR_PREFIX  # noqa: E402

SHARDS = 4
runner = CliRunner()


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """300 real rows with planted exact copies and chosen/rejected swaps, and one malformed line."""
    recs = planted_records(37, bad_at=77)
    path = write_jsonl(tmp_path_factory.mktemp("faults") / "pairs.jsonl", recs)
    return path, len(recs)


def _scan(src: Path, out: Path) -> object:
    return runner.invoke(app, ["scan", str(src), "--out", str(out), "--only", ",".join(CHEAP), "--engine", "ray",
                               "--ray-shards", str(SHARDS), "-q"])


@pytest.fixture(scope="module")
def undisturbed(local_ray: None, planted: tuple[Path, int], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("undisturbed") / "out"
    res = _scan(planted[0], out)
    assert res.exit_code == 0, res.output
    return out


def _tree(out: Path) -> dict[str, bytes | str]:
    """Every path under ``out`` (pairaudit's own folder included): a file's bytes, a link's target, a folder."""
    tree: dict[str, bytes | str] = {}
    for p in sorted(out.rglob("*")):
        key = str(p.relative_to(out))
        tree[key] = f"-> {os.readlink(p)}" if p.is_symlink() else p.read_bytes() if p.is_file() else "dir"
    return tree


def _same_outputs(got: Path, want: Path, n_input: int) -> None:
    for name in ("findings", "scores"):
        a, b = pl.read_parquet(got / f"{name}.parquet"), pl.read_parquet(want / f"{name}.parquet")
        (same_findings if name == "findings" else same_scores)(a, b)
    for name in ("clean.jsonl", "dropped.jsonl"):
        assert (got / name).read_bytes() == (want / name).read_bytes(), name
    totals = json.loads((got / "report.json").read_text())["totals"]
    assert totals["input"] == n_input == totals["kept"] + totals["dropped"], totals


class _Killer:
    """Kills one actor's worker process (SIGKILL) on the driver's ``nth`` wait for results in ``phase``: the
    phase's tasks are submitted and running. The victim and the wait are drawn from ``seed``."""

    def __init__(self, phase: str, seed: int) -> None:
        self.phase, self.rng, self.real_get = phase, random.Random(seed), ray.get
        self.nth, self.waits, self.scan, self.killed = self.rng.randint(1, 2), 0, None, None

    def start(self, real_start):
        def start(scan):
            real_start(scan)
            self.scan = scan
            self.pids = self.real_get([a.pid.remote() for a in scan.run.actors])
            self.victim = self.rng.randrange(len(self.pids))
        return start

    def get(self, *args, **kwargs):
        if self.scan is not None and self.killed is None and self.scan.phase == self.phase:
            self.waits += 1
            if self.waits == self.nth:
                os.kill(self.pids[self.victim], signal.SIGKILL)
                self.killed = self.victim
        return self.real_get(*args, **kwargs)


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("phase", "seed"), [("map", 1), ("reduce", 2), ("write", 3)])
def test_a_killed_actor_stops_the_scan_with_exit_4_and_the_previous_generation_intact(
        local_ray: None, planted: tuple[Path, int], undisturbed: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, phase: str, seed: int) -> None:
    src, n_input = planted
    out = tmp_path / "out"
    assert _scan(src, out).exit_code == 0  # the previous generation
    before = _tree(out)
    killer = _Killer(phase, seed)
    with monkeypatch.context() as m:
        m.setattr(ray_engine._RayScan, "start", killer.start(ray_engine._RayScan.start))
        m.setattr(ray, "get", killer.get)
        res = _scan(src, out)
    assert killer.killed is not None, f"no kill during {phase}"
    assert res.exit_code == 4, res.output
    # the shards handed to the victim (the map gives each shard to whichever actor is free: test_ray_balance.py
    # checks this record against what a slowed actor itself holds)
    held = ", ".join(str(s) for s, k in enumerate(killer.scan.run.owners) if k == killer.victim)
    assert f"lost worker ray_actor:{killer.victim} of {len(killer.pids)}" in res.output, res.output
    assert f"during {phase}; it held shard(s) {held} of {SHARDS}" in res.output, res.output
    node = killer.scan.nodes[killer.victim]  # named as the log's node line names it, with its own logs folder
    k_node = sorted(set(killer.scan.nodes)).index(node)
    assert f"on ray_node:{k_node} = {killer.scan.node_ips[node]} (node {node[:12]})" in res.output, res.output
    assert f"Ray logs of that node ({killer.scan.node_ips[node]}: {session_logs(ray, node)})" in res.output
    assert "previous outputs in --out are untouched" in res.output and "fix: run the same scan again" in res.output
    assert _tree(out) == before  # byte-identical, no new generation, no temp parts, no stray links
    left = [p for pid in killer.pids for p in Path(tempfile.gettempdir()).glob(f"{ACTOR_PREFIX}{pid}-*")]
    assert not left, f"spill folders of the lost scan's actors left behind: {left}"  # the killed one's included
    res = _scan(src, out)  # the fix: run it again
    assert res.exit_code == 0, res.output
    _same_outputs(out, undisturbed, n_input)


@pytest.mark.timeout(600)
def test_a_shard_lost_before_the_commit_is_caught_by_conservation(
        local_ray: None, planted: tuple[Path, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shard's writer whose output never arrives: its rows are neither kept nor dropped, and the scan must not
    commit a generation that lost them."""
    src, _ = planted
    out = tmp_path / "out"
    assert _scan(src, out).exit_code == 0
    before = _tree(out)
    real = ray_engine._collect
    monkeypatch.setattr(ray_engine, "_collect", lambda scanner, outs, *a: real(scanner, outs[:-1], *a))
    res = _scan(src, out)
    assert res.exit_code == 4, res.output
    assert f"lost rows of shard {SHARDS - 1} of {SHARDS} during write" in res.output, res.output
    assert _tree(out) == before

"""The Ray engine's map hands shards to whichever actor is free (issue 37, docs/scale.md "How shards are assigned").

One actor is slowed on the shard it reads first (a shard of long rows, a slow disk): the other actor takes the
shards it would have read under a fixed round robin. Who read what must not change the outputs (they equal the
local engine's), and a worker lost after such an uneven map is named with the shards it really holds (asked from
the actor itself, not computed as the driver does)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from conftest import CHEAP, write_jsonl
from support.compare import same_findings, same_scores
from support.planting import planted_records
from typer.testing import CliRunner

ray = pytest.importorskip("ray", reason="install pairaudit[ray]")

import pairaudit  # noqa: E402
from pairaudit.cli import app  # noqa: E402
from pairaudit.engines import ray_engine  # noqa: E402
from pairaudit.engines.ray_actor import ShardActor  # noqa: E402

SHARDS = 8
DELAY_S = 6.0  # the slowed shard's extra seconds: far more than the other shards' reading (~0.2 s each here)
runner = CliRunner()


def _slowed_actor(slow_shard: int, delay: float) -> type:
    """ShardActor whose ``scan`` of ``slow_shard`` sleeps first; ``held``: the shards it holds (its own record).
    Defined in a function so that Ray ships the class itself to the workers (pickled by value)."""

    class SlowedShardActor(ShardActor):
        def scan(self, s: int, spec_json: str, n_parts: int) -> Any:
            if s == slow_shard:
                import time

                time.sleep(delay)
            return super().scan(s, spec_json, n_parts)

        def held(self) -> list[int]:
            return sorted(self.shards)

    return SlowedShardActor


@pytest.fixture
def slowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Ray engine's actors are ``_slowed_actor(0, DELAY_S)``: whoever reads shard 0 is slow."""
    cls, real = _slowed_actor(0, DELAY_S), ray.remote

    def remote(*args: Any, **kwargs: Any) -> Any:
        if not args:  # ``ray.remote(**options)(ShardActor)``, as the engine declares its concurrency groups
            deco = real(**kwargs)
            return lambda c: deco(cls if c is ShardActor else c)
        return real(cls) if args[0] is ShardActor else real(*args, **kwargs)

    monkeypatch.setattr(ray, "remote", remote)


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """320 real rows with planted exact copies and chosen/rejected swaps (found across shards), one malformed line."""
    recs = planted_records(371, bad_at=101)
    path = write_jsonl(tmp_path_factory.mktemp("balance") / "pairs.jsonl", recs)
    return path, len(recs)


def _shards_per_actor(out: Path) -> list[int]:
    timings = json.loads((out / "timings.json").read_text(encoding="utf-8"))
    return [int(v) for k, v in sorted(timings.items()) if k.startswith("ray_actor:") and k.endswith(":shards")]


@pytest.mark.timeout(600)
def test_an_actor_slowed_on_one_shard_reads_fewer_and_the_outputs_are_the_local_engines(
        local_ray: None, slowed: None, planted: tuple[Path, int], tmp_path: Path) -> None:
    src, n_input = planted
    local = pairaudit.scan(src, out=tmp_path / "local", only=CHEAP, log=lambda m: None)
    audit = pairaudit.scan(src, out=tmp_path / "ray", only=CHEAP, engine="ray", ray_workers=2, ray_shards=SHARDS,
                           log=lambda m: None)
    per_actor = _shards_per_actor(tmp_path / "ray")
    assert sum(per_actor) == SHARDS and len(per_actor) == 2, per_actor
    assert min(per_actor) < SHARDS // 2, f"no uneven assignment: {per_actor} (a round robin gives 4 / 4)"
    assert {"duplicate_pair", "contradictory_pair", "malformed_record"} <= set(
        pl.read_parquet(tmp_path / "local" / "findings.parquet")["check"])
    for name in ("findings", "scores"):
        got, want = (pl.read_parquet(tmp_path / d / f"{name}.parquet") for d in ("ray", "local"))
        (same_findings if name == "findings" else same_scores)(got, want)
    for name in ("clean.jsonl", "dropped.jsonl"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name
    assert audit.totals == local.totals and audit.totals["input"] == n_input


@pytest.mark.timeout(600)
def test_a_worker_lost_after_an_uneven_map_is_named_with_the_shards_it_read(
        local_ray: None, slowed: None, planted: tuple[Path, int], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The slowed actor (fewer shards) is killed as the reduce starts; the error names the shards that actor says
    it holds, not those a round robin would have given it."""
    src, _ = planted
    seen: dict[str, Any] = {}
    real_reduce = ray_engine._RayScan.reduce

    def reduce(scan: Any) -> Any:
        actors = scan.run.actors
        held = ray.get([a.held.remote() for a in actors])
        pids = ray.get([a.pid.remote() for a in actors])
        victim = min(range(len(actors)), key=lambda k: len(held[k]))
        seen.update(victim=victim, held=held[victim], n=len(actors))
        os.kill(pids[victim], signal.SIGKILL)
        return real_reduce(scan)

    monkeypatch.setattr(ray_engine._RayScan, "reduce", reduce)
    res = runner.invoke(app, ["scan", str(src), "--out", str(tmp_path / "out"), "--only", ",".join(CHEAP),
                              "--engine", "ray", "--ray-workers", "2", "--ray-shards", str(SHARDS), "-q"])
    assert res.exit_code == 4, res.output
    victim, held, n = seen["victim"], seen["held"], seen["n"]
    round_robin = [s for s in range(SHARDS) if s % n == victim]
    assert held and held != round_robin, f"the assignment was a round robin: {held}"
    assert f"lost worker ray_actor:{victim} of {n}" in res.output, res.output
    assert f"during reduce; it held shard(s) {', '.join(map(str, held))} of {SHARDS}" in res.output, res.output


@pytest.mark.timeout(600)
def test_one_parquet_file_cut_by_row_groups_gives_the_local_engines_outputs(
        local_ray: None, slowed: None, planted: tuple[Path, int], tmp_path: Path) -> None:
    """One Parquet file of 16 row groups is read as several shards by whichever actor is free (one slowed)."""
    import pyarrow.parquet as pq

    src, _ = planted
    parquet = tmp_path / "pairs.parquet"
    lines = [x for x in src.read_text(encoding="utf-8").splitlines() if x.startswith("{\"")]  # not the malformed one
    pq.write_table(pl.DataFrame([json.loads(x) for x in lines]).to_arrow(), parquet, row_group_size=20)
    assert pq.ParquetFile(parquet).metadata.num_row_groups >= 15
    local = pairaudit.scan(parquet, out=tmp_path / "local", only=CHEAP, log=lambda m: None)
    audit = pairaudit.scan(parquet, out=tmp_path / "ray", only=CHEAP, engine="ray", ray_workers=2, ray_shards=SHARDS,
                           log=lambda m: None)
    assert audit.report["stats"]["engine"]["shards"] == SHARDS  # one file, 8 runs of row groups
    assert min(_shards_per_actor(tmp_path / "ray")) < SHARDS // 2
    for name in ("findings", "scores", "clean", "dropped"):
        got, want = (pl.read_parquet(tmp_path / d / f"{name}.parquet") for d in ("ray", "local"))
        if name == "findings":
            same_findings(got, want)
        elif name == "scores":
            same_scores(got, want)
        else:
            assert got.equals(want), name
    assert audit.totals == local.totals

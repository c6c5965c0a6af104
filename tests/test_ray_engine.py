"""The Ray engine gives the local engine's results: same findings, scores and cleaned output."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from conftest import CHEAP, HH, write_jsonl

import pairaudit

ray = pytest.importorskip("ray", reason="install pairaudit[ray]")


@pytest.fixture(scope="module")
def local_ray():  # noqa: ANN201
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             object_store_memory=200 * 1024 * 1024)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def fixture_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lines = HH.read_text(encoding="utf-8").splitlines()[:240]
    recs: list[object] = [json.loads(x) for x in lines]
    recs += [recs[3], recs[10]]                                                   # exact duplicates
    recs.append({"chosen": recs[20]["rejected"], "rejected": recs[20]["chosen"]})  # contradiction
    recs.insert(50, "{not json")                                                  # malformed lines
    recs.insert(120, json.dumps({"chosen": 5, "rejected": "x"}))
    path = tmp_path_factory.mktemp("ray") / "pairs.jsonl"
    write_jsonl(path, recs)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n\n")  # trailing blank lines
    return path


def _outputs(out: Path) -> tuple[pl.DataFrame, pl.DataFrame, bytes, bytes]:
    return (pl.read_parquet(out / "findings.parquet"), pl.read_parquet(out / "scores.parquet"),
            (out / "clean.jsonl").read_bytes(), (out / "dropped.jsonl").read_bytes())


@pytest.mark.timeout(900)
def test_ray_matches_local_for_1_and_4_blocks_twice(local_ray: None, fixture_file: Path, tmp_path: Path) -> None:
    local = pairaudit.scan(fixture_file, out=tmp_path / "local", only=CHEAP, log=lambda m: None)
    want = _outputs(tmp_path / "local")
    assert set(want[0]["check"]) >= {"duplicate_pair", "contradictory_pair", "malformed_record"}
    for shards in (1, 4):
        for attempt in range(2):
            out = tmp_path / f"ray-{shards}-{attempt}"
            audit = pairaudit.scan(fixture_file, out=out, only=CHEAP, engine="ray", ray_shards=shards,
                                   log=lambda m: None)
            got = _outputs(out)
            assert got[0].equals(want[0]) and got[1].equals(want[1]), (shards, attempt)
            assert got[2:] == want[2:]
            assert audit.totals == local.totals
            assert audit.report["stats"]["engine"]["shards"] == shards

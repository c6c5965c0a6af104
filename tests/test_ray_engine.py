"""The Ray engine gives the local engine's results: same findings, scores and cleaned output."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from conftest import CHEAP, HH, write_jsonl
from support.compare import same_findings, same_scores

import pairaudit

ray = pytest.importorskip("ray", reason="install pairaudit[ray]")


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
def test_ray_matches_local_for_1_and_4_shards(local_ray: None, fixture_file: Path, tmp_path: Path) -> None:
    local = pairaudit.scan(fixture_file, out=tmp_path / "local", only=CHEAP, log=lambda m: None)
    want = _outputs(tmp_path / "local")
    assert set(want[0]["check"]) >= {"duplicate_pair", "contradictory_pair", "malformed_record"}
    for shards in (1, 4, 10):  # 10 shards: 5 hash partitions, more than the actors (``RayRun.hash_parts``)
        out = tmp_path / f"ray-{shards}"
        audit = pairaudit.scan(fixture_file, out=out, only=CHEAP, engine="ray", ray_shards=shards, log=lambda m: None)
        got = _outputs(out)
        assert got[0].equals(want[0]) and got[1].equals(want[1]), shards
        assert got[2:] == want[2:]
        assert audit.totals == local.totals
        assert audit.report["stats"]["engine"]["shards"] == shards
        assert audit.report["stats"]["engine"]["hash_partitions"] == max(audit.report["stats"]["engine"]["workers"],
                                                                         -(-shards // 2))
        assert not (out / ".pairaudit" / "current" / ".shards").exists()  # the parts were concatenated


class _Payload:
    """Unpickling this runs code: it would create ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_ray_loads_no_file_and_no_pickle(local_ray: None, fixture_file: Path, tmp_path: Path) -> None:
    import pickle

    out, marker = tmp_path / "shared-out", tmp_path / "pwned"
    (out / ".pairaudit" / ".ray-spill").mkdir(parents=True)
    out.chmod(0o777)  # a folder anyone can write to, as on a multi-node cluster
    for folder in (out, out / ".pairaudit", out / ".pairaudit" / ".ray-spill"):
        for name in ("shard-000000.pkl", "shard-000001.pkl"):
            (folder / name).write_bytes(pickle.dumps(_Payload(marker)))
    audit = pairaudit.scan(fixture_file, out=out, only=CHEAP, engine="ray", ray_shards=2, log=lambda m: None)
    assert audit.totals["input"] == 245 and not marker.exists()


def test_wire_format_round_trips_stage_state_and_refuses_objects() -> None:
    import numpy as np

    from pairaudit.engines.wire import dumps, loads

    state = {"ExactStage": {"_rows": [np.arange(3, dtype=np.int64)], "_flip": [np.array([1.5, np.nan])]},
             "FlipStage": {"_cols": {"ref": [np.ones(2)]}, "_skipped": {"x": 2}, "_notes": ["a"], "_n_ref": 4},
             "NearDuplicateStage": {"_sk": [np.array([[b"ab", b"c"]], dtype="S257")],
                                    "_texts": [np.array([b"x\x00y", b"", b"\xff"], dtype=object)]},
             "errors": [("A", "b")]}
    back = loads(dumps(state))
    assert back["FlipStage"]["_skipped"] == {"x": 2} and back["FlipStage"]["_n_ref"] == 4
    assert back["ExactStage"]["_rows"][0].tolist() == [0, 1, 2] and np.isnan(back["ExactStage"]["_flip"][0][1])
    assert back["NearDuplicateStage"]["_sk"][0].dtype == np.dtype("S257") and back["errors"] == [["A", "b"]]
    assert back["NearDuplicateStage"]["_texts"][0].tolist() == [b"x\x00y", b"", b"\xff"]
    with pytest.raises(TypeError, match="object arrays"):
        dumps({"x": np.array([{"a": 1}], dtype=object)})


@pytest.mark.parametrize("mode", ["auto", "static"])
def test_ray_matches_local_with_the_near_duplicate_stage(local_ray: None, fixture_file: Path, tmp_path: Path,
                                                         mode: str) -> None:
    """The near-duplicate stage's decision on the Ray engine is the local one's, in the default (hybrid) mode and
    with the static model alone (``--fast``: its own prompt floor, ``static_min_prompt``)."""
    only = ["near_duplicate_pair", "contradictory_pair", "identical_pair"]
    pairaudit.scan(fixture_file, out=tmp_path / "local", only=only, embed_mode=mode, log=lambda m: None)
    pairaudit.scan(fixture_file, out=tmp_path / "ray", only=only, engine="ray", ray_shards=2, embed_mode=mode,
                   log=lambda m: None)
    want, got = _outputs(tmp_path / "local"), _outputs(tmp_path / "ray")
    assert "near_duplicate_pair" in set(want[0]["check"])
    same_findings(got[0], want[0])  # scores to float rounding: support/compare.py
    same_scores(got[1], want[1])
    assert got[2:] == want[2:]

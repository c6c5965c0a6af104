"""The plain-data pieces of the distributed finalize: hash partitions, routing to shards, GPU requests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pairaudit.datatypes import Finding, StageResult
from pairaudit.engines.partition import merge_routed, merge_stats, route, shard_of, split_state
from pairaudit.engines.ray_cluster import actor_plan


def test_split_state_keeps_equal_keys_together_and_rows_in_order() -> None:
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 50, 400).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    rows = np.arange(400, dtype=np.int64)
    parts = split_state({"_rows": [rows[:150], rows[150:]], "_key": [keys[:150], keys[150:]]}, "_key", 4)
    assert len(parts) == 4 and sum(len(p["_rows"][0]) for p in parts) == 400
    seen: dict[int, int] = {}
    for k, p in enumerate(parts):
        assert (np.diff(p["_rows"][0]) > 0).all()
        for key in p["_key"][0].tolist():
            assert seen.setdefault(key, k) == k  # a key lives in one partition only
    assert split_state({"_rows": [], "_key": []}, "_key", 3) == [{"_rows": [], "_key": []}] * 3


def test_route_cuts_findings_and_scores_by_shard_and_merge_restores_row_order() -> None:
    starts = [0, 10, 25]
    assert shard_of(np.array([0, 9, 10, 24, 25, 1000]), starts).tolist() == [0, 0, 1, 1, 2, 2]
    res = StageResult(rows=np.array([30, 3, 12, 26]), scores={"x_score": np.array([0.3, 0.0, 0.12, 0.26])})
    parts = route(res, [Finding(12, "x", group=3), Finding(30, "x")], starts)
    assert [len(p["findings"]) for p in parts] == [0, 1, 1]
    assert parts[1]["findings"][0][:5] == [12, "x", None, None, 3]
    rows, cols = merge_routed([parts[2], {"findings": [], "rows": np.zeros(0, np.int64), "scores": {}}])
    assert rows.tolist() == [26, 30] and cols["x_score"].tolist() == [0.26, 0.3]


def test_merge_stats_adds_numbers_and_keeps_the_rest() -> None:
    got = merge_stats([{"s": {"eval_rows": 3, "split": "train", "near": "not checked"}}, {},
                       {"s": {"eval_rows": 4, "split": "train", "near": "not checked"}}])
    assert got == {"s": {"eval_rows": 7, "split": "train", "near": "not checked"}}


def _nodes(*resources: dict) -> list[dict]:
    return [{"Alive": True, "Resources": r} for r in resources] + [{"Alive": False, "Resources": {"CPU": 64.0}}]


@pytest.mark.parametrize(("nodes", "stages", "workers", "gpus"), [
    (_nodes({"CPU": 4.0}, {"CPU": 4.0}), {"NearDuplicateStage"}, 8, None),              # no GPU: CPU actors
    (_nodes({"CPU": 8.0, "GPU": 2.0}), {"ExactStage"}, 8, None),                         # no model stage
    (_nodes({"CPU": 8.0, "GPU": 2.0}), {"NearDuplicateStage"}, 8, 0.25),                 # 4 actors per GPU
    (_nodes({"CPU": 2.0, "GPU": 4.0}), {"FlipStage"}, 2, 1.0),                            # at most one GPU each
    (_nodes({"CPU": 3.0, "GPU": 1.0}, {"CPU": 16.0}), {"FlipStage", "ExactStage"}, 3, 0.3333),  # GPU node only
    (_nodes({"CPU": 4.0, "GPU": 1.0}, {"CPU": 2.0, "GPU": 1.0}), {"FlipStage"}, 6, 0.25),
])
def test_actor_plan(nodes: list, stages: set, workers: int, gpus: float | None) -> None:
    from pairaudit.stages.registry import stage_classes

    models = any(c.uses_models for c in stage_classes() if c.__name__ in stages)  # what each stage declares
    n, opts = actor_plan(nodes, None, models)
    assert n == workers and opts["num_cpus"] == 1 and opts["scheduling_strategy"] == "SPREAD"
    assert opts.get("num_gpus") == gpus
    assert actor_plan(nodes, 1, models)[0] == 1  # --ray-workers caps it


def test_piece_file_gives_each_piece_once_and_goes_after_the_last(tmp_path: Path) -> None:
    """The hash shuffle's parked pieces (``engines/exchange.py``): read back by index in any order, equal to what
    was cut, and the file removed once every piece was read; ``pack`` keeps keys, order and empty blobs."""
    from pairaudit.engines.exchange import PieceFile, pack, unpack
    from pairaudit.engines.wire import dumps, loads

    state = {"_unordered": [np.arange(10, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)],
             "_rows": [np.arange(100, 110, dtype=np.int64)]}
    parts = split_state(state, "_unordered", 3)
    f = PieceFile(tmp_path / "shard0.stage1.pieces", (dumps(p) for p in parts))
    got = {i: loads(f.read(i)) for i in (2, 0)}
    assert f.path.exists()
    got[1] = loads(f.read(1))
    assert not f.path.exists()
    for i, part in enumerate(parts):
        for key, cols in part.items():
            assert all(np.array_equal(a, b) for a, b in zip(got[i][key], cols)), (i, key)
    assert sorted(np.concatenate([got[i]["_rows"][0] for i in range(3)]).tolist()) == list(range(100, 110))
    items = [(7, dumps(parts[0])), (2, b""), (0, b"\x00" * 17)]
    assert unpack(pack(items)) == items and unpack(b"") == []

"""A Ray actor's parked shard state (engines/parked.py) comes back equal, and its files go when it is taken."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
from conftest import HH

from pairaudit.engines.parked import Parked, ParkedFrames, park_shard, unpark
from pairaudit.engines.partition import FINDING_FIELDS, findings_of
from pairaudit.stages.spill import Mapped


def _hh_texts(n: int) -> list[str]:
    return [json.loads(line)["chosen"] for line in HH.read_text(encoding="utf-8").splitlines()[:n]]


def test_a_state_with_arrays_bytes_and_a_column_on_disk_round_trips(tmp_path: Path) -> None:
    texts = _hh_texts(50)
    on_disk = tmp_path / "emb.bin"
    np.arange(12, dtype=np.float16).reshape(4, 3).tofile(on_disk)
    mapped = Mapped(on_disk, np.float16, (4, 3))
    state = {"_rows": [np.arange(3, dtype=np.int64), np.arange(3, 9, dtype=np.int64)],
             "_cols": {"ref": [np.array([np.nan, 1.5, -2.0])]},
             "_lenf": [np.ones((3, 4), np.float32)],
             "texts": np.array([t.encode("utf-8") for t in texts], dtype=object),
             "_emb": [mapped], "_notes": ["a note"], "_n_ref": 7, "_skipped": {}}
    parked = Parked(tmp_path / "s.npz", state)
    back = parked.load()
    assert back["_emb"][0] is mapped  # what the wire cannot carry stays in memory as it is
    assert [r.tolist() for r in back["_rows"]] == [[0, 1, 2], [3, 4, 5, 6, 7, 8]]
    assert back["_rows"][0].dtype == np.int64 and back["_lenf"][0].dtype == np.float32
    np.testing.assert_array_equal(back["_cols"]["ref"][0], state["_cols"]["ref"][0])
    assert back["texts"].tolist() == state["texts"].tolist()
    assert (back["_notes"], back["_n_ref"], back["_skipped"]) == (["a note"], 7, {})
    assert parked.load(remove=True)["_n_ref"] == 7
    assert not (tmp_path / "s.npz").exists()


def test_a_shard_parks_findings_metrics_and_states_but_the_ones_kept(tmp_path: Path) -> None:
    findings = [[3, "empty_response", "chosen", 1.0, None, "chosen is empty", "drop"],
                [5, "near_identical_pair", None, 0.987654321, 2, "the words are the same", "flag"]]
    frames = [pl.DataFrame({"row": [0, 1], "pair_hash": [11, 12], "near_identical_pair_score": [None, 0.5]}),
              pl.DataFrame({"row": [2], "pair_hash": [13], "near_identical_pair_score": [0.25]},
                           schema_overrides={"near_identical_pair_score": pl.Float32})]
    cells = {"rows": np.arange(3), "spill": object()}
    shard = park_shard(tmp_path, 4, findings, frames, {"LengthStage": {"_rows": [np.arange(3)]},
                                                       "NearDuplicateStage": cells}, {"NearDuplicateStage"})
    assert shard["states"]["NearDuplicateStage"] is cells  # worked on in place: not parked
    assert isinstance(shard["states"]["LengthStage"], Parked)
    got = findings_of([{"findings": unpark(shard["findings"], remove=True)}])
    assert [[getattr(f, k) for k in FINDING_FIELDS] for f in got] == findings
    back = unpark(shard["metrics"], remove=True)
    assert isinstance(shard["metrics"], ParkedFrames) and len(back) == 2
    assert all(a.equals(b) and a.schema == b.schema for a, b in zip(back, frames))
    assert unpark(shard["states"]["LengthStage"])["_rows"][0].tolist() == [0, 1, 2]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shard4.LengthStage.npz"]

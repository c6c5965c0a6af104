"""A real multi-node Ray cluster on this machine (``ray.cluster_utils.Cluster``: a head without CPUs and
two worker nodes with one CPU and their own object store each): the Ray engine's findings, scores and
outputs equal the local engine's on the shipped example and on planted faults (exact duplicates,
contradictions, near duplicates and near contradictions, also across k-means cells held by different
workers, split leakage, the flip model), and the work ran on both worker nodes."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from conftest import CHEAP, EXAMPLE, write_jsonl
from support.compare import same_findings, same_scores
from support.planting import hh_rows, light_edit

import pairaudit

ray = pytest.importorskip("ray", reason="install pairaudit[ray]")
STORE = 80 * 1024 * 1024


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "object_store_memory": STORE,
                                                      "include_dashboard": False})
    for i in range(2):
        c.add_node(num_cpus=1, resources={f"node{i}": 1}, object_store_memory=STORE)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False, configure_logging=False)
    try:
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


def _outputs(out: Path, ext: str = "jsonl") -> tuple:
    data = ((out / f"clean.{ext}").read_bytes(), (out / f"dropped.{ext}").read_bytes()) if ext == "jsonl" else ()
    return (pl.read_parquet(out / "findings.parquet"), pl.read_parquet(out / "scores.parquet"), *data)


def _same(local: Path, distributed: Path, ext: str = "jsonl") -> None:
    want, got = _outputs(local, ext), _outputs(distributed, ext)
    same_findings(got[0], want[0])  # every finding, its row and text (scores: support/compare.py)
    same_scores(got[1], want[1])
    assert got[2:] == want[2:]
    a, b = (json.loads((p / "report.json").read_text(encoding="utf-8")) for p in (local, distributed))
    assert a["totals"] == b["totals"] and a["checks"] == b["checks"]


def _nodes(out: Path) -> dict[str, float]:
    timings = json.loads((out / "timings.json").read_text(encoding="utf-8"))
    return {k: v for k, v in timings.items() if k.startswith("ray_node:") and k.endswith(":rows")}


def test_shipped_example_on_two_nodes(cluster: object, tmp_path: Path) -> None:
    local = pairaudit.scan(EXAMPLE, out=tmp_path / "local", only=CHEAP, log=lambda m: None)
    audit = pairaudit.scan(EXAMPLE, out=tmp_path / "ray", only=CHEAP, engine="ray", ray_shards=4, log=lambda m: None)
    _same(tmp_path / "local", tmp_path / "ray")
    assert audit.totals == local.totals
    engine = audit.report["stats"]["engine"]
    assert engine["nodes_used"] == 2 and engine["workers"] == 2
    assert engine["distributed"]["hash_partitioned"] == ["ExactStage"]
    assert engine["distributed"]["summary_merged"] == ["LengthStage"] and engine["distributed"]["writers"] == "workers"
    rows = _nodes(tmp_path / "ray")
    assert len(rows) == 2 and all(v > 0 for v in rows.values()) and sum(rows.values()) == local.totals["input"]


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[int]]]:
    rng = random.Random(18)
    base = hh_rows(160)
    recs: list[object] = [{"prompt": p, "chosen": c, "rejected": r} for p, c, r in base]
    faults: dict[str, list[int]] = {"duplicate_pair": [], "contradictory_pair": [], "near_duplicate_pair": []}
    for i in rng.sample(range(160), 4):
        faults["duplicate_pair"].append(len(recs))
        recs.append(dict(recs[i]))
    for i in rng.sample(range(160), 3):
        faults["contradictory_pair"].append(len(recs))
        recs.append({"prompt": base[i][0], "chosen": base[i][2], "rejected": base[i][1]})
    for i in rng.sample(range(160), 4):
        faults["near_duplicate_pair"].append(len(recs))
        recs.append({"prompt": light_edit(base[i][0], "punct", rng), "chosen": light_edit(base[i][1], "case", rng),
                     "rejected": light_edit(base[i][2], "space", rng)})
    rng.shuffle(recs)
    recs.insert(40, "{not json")
    path = tmp_path_factory.mktemp("planted") / "planted.jsonl"
    write_jsonl(path, recs)
    return path, faults


def test_planted_faults_on_two_nodes(cluster: object, planted: tuple[Path, dict], tmp_path: Path) -> None:
    path, faults = planted
    only = [*CHEAP, "near_duplicate_pair"]
    pairaudit.scan(path, out=tmp_path / "local", only=only, log=lambda m: None)
    audit = pairaudit.scan(path, out=tmp_path / "ray", only=only, engine="ray", ray_shards=3, log=lambda m: None)
    _same(tmp_path / "local", tmp_path / "ray")
    found = pl.read_parquet(tmp_path / "ray" / "findings.parquet")
    for check, planted_rows in faults.items():  # the planted faults are there (so equality is not vacuous)
        assert found.filter(pl.col("check") == check).height >= len(planted_rows), check
    assert "malformed_record" in set(found["check"])
    distributed = audit.report["stats"]["engine"]["distributed"]
    assert distributed["cells"] == ["NearDuplicateStage"] and distributed["driver_finalized"] == []


def _timings(out: Path) -> dict[str, float]:
    return json.loads((out / "timings.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def across(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[int]]]:
    """480 real HH rows with near duplicates and near contradictions (light edits of every field)."""
    rng = random.Random(25)
    base = hh_rows(480)
    recs: list[object] = [{"prompt": p, "chosen": c, "rejected": r} for p, c, r in base]
    faults: dict[str, list[int]] = {"near_duplicate_pair": [], "contradictory_pair": []}
    for k, i in enumerate(rng.sample(range(480), 16)):
        swap = k % 2
        faults["contradictory_pair" if swap else "near_duplicate_pair"].append(len(recs))
        recs.append({"prompt": light_edit(base[i][0], "punct", rng),
                     "chosen": light_edit(base[i][2 if swap else 1], "case", rng),
                     "rejected": light_edit(base[i][1 if swap else 2], "space", rng)})
    path = tmp_path_factory.mktemp("across") / "across.jsonl"
    write_jsonl(path, recs)
    return path, faults


def test_near_duplicates_across_cells_on_two_nodes(cluster: object, across: tuple[Path, dict], tmp_path: Path) -> None:
    """k-means cells (forced at this size), each row probing its 2 nearest cells, cells gathered into one group
    per worker: the Ray engine searches and verifies each group on its worker, only edges reach the driver,
    and the findings equal the local engine's with the same cells (the same rule); rows whose own cells lie in
    different groups are compared (a row travels to the group of each cell it probes: tests/test_cells.py shows
    the pairs are the local search's), and every planted pair the exact search finds is found."""
    path, faults = across
    only = ["duplicate_pair", "contradictory_pair", "near_duplicate_pair"]
    cells = {"near_duplicate_pair": {"exact_max_rows": 100, "nprobe": 2}}
    pairaudit.scan(path, out=tmp_path / "flat", only=only, log=lambda m: None)
    pairaudit.scan(path, out=tmp_path / "local", only=only, thresholds=cells, log=lambda m: None)
    audit = pairaudit.scan(path, out=tmp_path / "ray", only=only, thresholds=cells, engine="ray", ray_shards=3,
                           log=lambda m: None)
    _same(tmp_path / "local", tmp_path / "ray")
    stats = audit.report["stats"]["near_duplicates"]
    assert stats["index"].startswith("ivf") and stats["nlist"] >= 8 and stats["nprobe"] == 2
    t = _timings(tmp_path / "ray")
    assert t["ray_near:cell_groups"] == 2 and t["ray_near:pairs_across_groups"] >= 1  # compared across workers
    assert t["ray_near:rows_sent_to_groups"] < 2 * audit.totals["input"]  # a row goes to 1-2 groups, not to all
    found = pl.read_parquet(tmp_path / "ray" / "findings.parquet")
    exact = pl.read_parquet(tmp_path / "flat" / "findings.parquet")
    for check, rows in faults.items():
        got = set(found.filter(pl.col("check") == check)["row"].to_list())
        want = set(exact.filter(pl.col("check") == check)["row"].to_list())
        assert set(rows) <= got and want & set(rows) <= got, check  # recall kept across cells


@pytest.fixture(scope="module")
def flipped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[int]]:
    """1,000 real HH pairs labelled "the longer answer wins", 20% of them flipped (seeded): a signal the flip
    model learns from the dataset's own labels."""
    rng = random.Random(18)
    recs, truth = [], []
    for i, (p, c, r) in enumerate(hh_rows(1000)):
        long, short = (c, r) if len(c) >= len(r) else (r, c)
        flip = rng.random() < 0.2
        truth += [i] if flip else []
        recs.append({"prompt": p, "chosen": short if flip else long, "rejected": long if flip else short})
    path = tmp_path_factory.mktemp("flips") / "flips.jsonl"
    write_jsonl(path, recs)
    return path, truth


def test_flip_model_on_two_nodes(cluster: object, flipped: tuple[Path, list[int]], tmp_path: Path) -> None:
    """At most ``fit_sample_rows`` rows: the fit sees every row, as the local engine's, and the outputs are
    equal. Above: fitted on a seeded sample on one actor, applied on every shard to the other rows; every
    row still gets a score and the flipped rows are found about as well as by the local engine's fit."""
    from sklearn.metrics import roc_auc_score

    path, truth = flipped
    only = ["likely_flipped"]
    local = pairaudit.scan(path, out=tmp_path / "local", only=only, log=lambda m: None)
    pairaudit.scan(path, out=tmp_path / "ray", only=only, engine="ray", ray_shards=3, log=lambda m: None)
    _same(tmp_path / "local", tmp_path / "ray")
    assert local.report["stats"]["likely_flipped"]["status"] == "informative"

    sample = {"likely_flipped": {"fit_sample_rows": 500}}
    audit = pairaudit.scan(path, out=tmp_path / "sample", only=only, thresholds=sample, engine="ray", ray_shards=3,
                           log=lambda m: None)
    assert "a seeded sample of 500 of 1,000 rows" in audit.report["stats"]["likely_flipped"]["fitted_on"]
    from pairaudit.report.flip_section import flip_lines  # the terminal's and report.html's words say it too

    said = flip_lines(audit.report)
    assert [x for x in said if x.startswith("model fitted on a seeded sample of 500 of 1,000 rows")], said
    assert [x for x in said if x.startswith("rows scored per signal in the fitting sample: ")], said
    y = [int(i in set(truth)) for i in range(1000)]
    auc = {}
    for name in ("local", "sample"):
        s = pl.read_parquet(tmp_path / name / "scores.parquet")["likely_flipped_score"]
        assert s.null_count() == 0
        auc[name] = roc_auc_score(y, s.to_numpy())
    assert auc["local"] > 0.8 and auc["sample"] >= auc["local"] - 0.05, auc


def test_split_leakage_on_two_nodes(cluster: object, tmp_path: Path) -> None:
    import datasets

    rng = random.Random(7)
    rows = [{"prompt": p, "chosen": c, "rejected": r} for p, c, r in hh_rows(200)]
    train, test = rows[:150], rows[150:]
    test += [dict(train[3]), dict(train[40])]                                                   # exact leaks
    test.append({"prompt": train[7]["prompt"], "chosen": train[7]["rejected"], "rejected": train[7]["chosen"]})
    test.append({k: light_edit(v, "punct", rng) for k, v in train[90].items()})                 # near leak
    folder = tmp_path / "dd"
    datasets.DatasetDict({"train": datasets.Dataset.from_list(train),
                          "test": datasets.Dataset.from_list(test)}).save_to_disk(str(folder))
    only = ["duplicate_pair", "contradictory_pair", "near_duplicate_pair", "split_leakage"]
    pairaudit.scan(folder, out=tmp_path / "local", split="all", only=only, log=lambda m: None)
    audit = pairaudit.scan(folder, out=tmp_path / "ray", split="all", only=only, engine="ray", ray_shards=4,
                           log=lambda m: None)
    _same(tmp_path / "local", tmp_path / "ray", ext="hf")
    leaks = pl.read_parquet(tmp_path / "ray" / "findings.parquet").filter(pl.col("check") == "split_leakage")
    assert leaks.height >= 4 and set(leaks["group"].to_list()) >= {3, 40, 7, 90}
    assert "SplitLeakageStage" in audit.report["stats"]["engine"]["distributed"]["hash_partitioned"]
    assert datasets.load_from_disk(str(tmp_path / "ray" / "clean"))["test"].num_rows == \
        datasets.load_from_disk(str(tmp_path / "local" / "clean"))["test"].num_rows



def test_review_decisions_and_parquet_source_on_two_nodes(cluster: object, planted: tuple[Path, dict],
                                                          tmp_path: Path) -> None:
    """Decisions are resolved per shard (keep / drop / flip, a stale pair_hash ignored); a Parquet source
    is written by the driver from the dropped rows' numbers."""
    from pairaudit.decisions import Decision, append_decisions

    path, faults = planted
    first = pairaudit.scan(path, out=tmp_path / "first", only=CHEAP, log=lambda m: None)
    hashes = dict(pl.read_parquet(first.out_dir / "scores.parquet").select("row", "pair_hash").drop_nulls().iter_rows())
    dup = faults["duplicate_pair"][0]
    decisions = [Decision(dup, "keep"), Decision(3, "drop"), Decision(5, "flip"), Decision(150, "keep", pair_hash="0"),
                 Decision(100_000, "drop")]
    decisions = [Decision(d.row, d.decision, "", d.pair_hash or hashes.get(d.row)) for d in decisions]
    for name in ("local", "ray"):
        (tmp_path / name).mkdir()
        append_decisions(tmp_path / name / "decisions.jsonl", decisions)
    local = pairaudit.scan(path, out=tmp_path / "local", only=CHEAP, log=lambda m: None)
    audit = pairaudit.scan(path, out=tmp_path / "ray", only=CHEAP, engine="ray", ray_shards=3, log=lambda m: None)
    _same(tmp_path / "local", tmp_path / "ray")
    assert audit.report["decisions"] == local.report["decisions"]
    assert audit.report["decisions"]["applied"] == 3 and len(audit.report["decisions"]["ignored"]) == 2

    parquet = tmp_path / "pairs.parquet"
    pl.read_ndjson(EXAMPLE).head(200).write_parquet(parquet)
    pairaudit.scan(parquet, out=tmp_path / "pq-local", only=CHEAP, log=lambda m: None)
    audit = pairaudit.scan(parquet, out=tmp_path / "pq-ray", only=CHEAP, engine="ray", log=lambda m: None)
    _same(tmp_path / "pq-local", tmp_path / "pq-ray", ext="parquet")
    for name in ("clean.parquet", "dropped.parquet"):
        assert pl.read_parquet(tmp_path / "pq-ray" / name).equals(pl.read_parquet(tmp_path / "pq-local" / name))
    assert audit.report["stats"]["engine"]["distributed"]["writers"].startswith("workers (findings, scores)")


def test_joining_a_cluster_logs_the_address_it_resolved(cluster) -> None:
    """``--ray-address`` joins a running cluster and returns the address it joined (``auto`` resolved; the scan logs
    it, report.json keeps the value given). A fresh driver process, as a user's ``pairaudit scan`` is."""
    code = ("import sys, ray; from pairaudit.engines.ray_cluster import connect\n"
            "print('joined', connect(ray, sys.argv[1]), flush=True); ray.shutdown()\n")
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": str(Path(pairaudit.__file__).parents[1])}
    res = subprocess.run([sys.executable, "-c", code, cluster.address], capture_output=True, text=True, env=env,
                         timeout=120)
    assert f"joined {cluster.address}\n" in res.stdout, res.stdout + res.stderr

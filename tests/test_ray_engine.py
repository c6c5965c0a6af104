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


MULTIPAIR = Path(__file__).resolve().parent.parent / "data" / "precision" / "multipair.jsonl"


@pytest.mark.parametrize("mode", ["auto", "static"])
def test_ray_near_identical_embedding_view_reads_the_words_as_local(local_ray: None, tmp_path: Path,
                                                                     mode: str) -> None:
    """The embedding view of near_identical_pair on Ray reads the texts as the local engine does: rows whose
    differing words hold the answer (multipair rows 175 / 177: "$6.50" vs "$47.50") are not flagged, and the
    details say what differs in words (the Ray shards once skipped both)."""
    only = ["near_identical_pair", "near_duplicate_pair", "identical_pair"]
    pairaudit.scan(MULTIPAIR, out=tmp_path / "local", only=only, embed_mode=mode, log=lambda m: None)
    pairaudit.scan(MULTIPAIR, out=tmp_path / "ray", only=only, engine="ray", ray_shards=2, embed_mode=mode,
                   log=lambda m: None)
    want, got = (pl.read_parquet(tmp_path / k / "findings.parquet") for k in ("local", "ray"))
    same_findings(got, want)
    near = got.filter(pl.col("check") == "near_identical_pair")
    assert not {175, 177} & set(near["row"])
    assert mode != "static" or (near.height == 4 and all("the words are the same" in d for d in near["detail"]))


@pytest.mark.parametrize("rows", [60, 302])
def test_ray_report_has_the_local_models_and_transformer_stats(local_ray: None, tmp_path: Path, rows: int) -> None:
    """report.json's ``models`` and ``stats.near_duplicates`` on Ray have the local engine's keys (the embedder
    and the transformer's counts were once lost on the actors), and the log line about texts longer than the
    transformer reads comes on both engines. 60 rows: below ``min_rows_static`` the transformer embeds every
    text (the same count on both engines); 302: hybrid mode (docs/scale.md: Ray embeds every field of a
    candidate row, so ``texts`` may be higher)."""
    src = write_jsonl(tmp_path / "in.jsonl", [json.loads(x) for x in
                                              (HH if rows == 60 else MULTIPAIR).read_text().splitlines()[:rows]])
    only = ["near_identical_pair", "near_duplicate_pair"]
    logs: dict[str, list[str]] = {"local": [], "ray": []}
    for eng in logs:
        pairaudit.scan(src, out=tmp_path / eng, only=only, engine=eng, ray_shards=2 if eng == "ray" else None,
                       log=logs[eng].append)
    want, got = (json.loads((tmp_path / k / "report.json").read_text()) for k in ("local", "ray"))
    assert got["models"] == want["models"] and "embedder" in got["models"]
    assert set(got["stats"]["near_duplicates"]) == set(want["stats"]["near_duplicates"])
    t_want, t_got = want["stats"]["near_duplicates"]["transformer"], got["stats"]["near_duplicates"]["transformer"]
    assert t_got["max_tokens"] == t_want["max_tokens"]
    if rows == 60:
        assert t_got == t_want and t_want["texts_cut"] > 0
        for eng, lines in logs.items():
            assert any("longer than its 256 tokens" in m for m in lines), eng


def test_ray_reads_a_relative_source_and_writes_a_relative_out(local_ray: None, fixture_file: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The actors' working directory is not the driver's (Ray's, from when the cluster started): the driver sends
    the source's and --out's absolute paths (a relative source once failed in the actors with FileNotFoundError,
    a relative --out was refused as not visible to every node)."""
    (tmp_path / "in.jsonl").write_bytes(fixture_file.read_bytes())
    monkeypatch.chdir(tmp_path)  # after the cluster started: the actors stay where they were
    audit = pairaudit.scan("in.jsonl", out="out", only=CHEAP, engine="ray", ray_shards=2, log=lambda m: None)
    assert audit.totals["input"] == 245 and (tmp_path / "out" / "clean.jsonl").stat().st_size > 0
    from pairaudit.engines.ray_cluster import absolute_paths

    assert absolute_paths({"path": "in.jsonl", "tokenizer": "org/model"}, ("path", "tokenizer")) == {
        "path": str(tmp_path / "in.jsonl"), "tokenizer": "org/model"}  # a hub id is no path here


def test_ray_workers_beyond_the_cluster_stop_with_exit_2(local_ray: None, fixture_file: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """--ray-workers above the cluster's CPUs once hung silently (the actors that cannot be placed wait for
    ever); now a usage error (exit 2) says what was asked, what the cluster has and the fix. Actors that do not
    start in time (other jobs hold the CPUs) give the same kind of error."""
    from pairaudit.engines import ray_engine
    from pairaudit.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        pairaudit.scan(fixture_file, out=tmp_path / "o", only=CHEAP, engine="ray", ray_workers=5, log=lambda m: None)
    assert "--ray-workers 5" in str(err.value) and "2 CPU(s)" in str(err.value) and "N <= 2" in str(err.value)

    @ray.remote(num_cpus=2)
    class Hog:
        def ping(self) -> int:
            return 1

    hog = Hog.remote()
    ray.get(hog.ping.remote())  # every CPU held
    monkeypatch.setattr(ray_engine, "ACTOR_START_S", 3.0)
    try:
        with pytest.raises(ConfigError, match=r"1 of 1 Ray actors .* did not start within 3 s") as err:
            pairaudit.scan(fixture_file, out=tmp_path / "o", only=CHEAP, engine="ray", ray_workers=1,
                           log=lambda m: None)
        assert "N <= the free CPUs (0)" in str(err.value)
    finally:
        ray.kill(hog)


def test_ray_messages_name_the_nodes_and_the_session_logs(local_ray: None) -> None:
    """The node line maps timings.json's ``ray_node:<k>`` to each node's IP and id; the worker-lost hint names
    the session's own logs folder (``--temp-dir`` moves it), Ray's default path when it cannot be asked."""
    from pairaudit.engines.ray_cluster import node_line, session_logs

    nodes = [{"NodeID": "b" * 56, "NodeManagerAddress": "10.0.0.2"}, {"NodeID": "a" * 56, "NodeManagerAddress": "10.0.0.1"}]
    line = node_line(["b" * 56, "a" * 56, "b" * 56], nodes)
    assert line == ("ray: 3 actors on 2 node(s): ray_node:0 = 10.0.0.1 (node aaaaaaaaaaaa, 1 actor); "
                    "ray_node:1 = 10.0.0.2 (node bbbbbbbbbbbb, 2 actors)")
    logs = session_logs(ray)
    assert logs.endswith("/logs") and Path(logs).is_dir()
    assert session_logs(object()) == "/tmp/ray/session_latest/logs"

    class TwoNodes:  # a dead worker node and the driver's live one, each with its own session folder
        @staticmethod
        def nodes() -> list[dict[str, object]]:
            return [{"NodeID": "live", "Alive": True, "RayletSocketName": "/tmp/rt_w2/session_9/sockets/raylet"},
                    {"NodeID": "dead", "Alive": False, "RayletSocketName": "/tmp/rt_w1/session_9/sockets/raylet"}]

    assert session_logs(TwoNodes, "dead") == "/tmp/rt_w1/session_9/logs"  # the lost worker's node, though dead
    assert session_logs(TwoNodes, "live") == "/tmp/rt_w2/session_9/logs"
    assert session_logs(TwoNodes) == session_logs(TwoNodes, "gone") == "/tmp/rt_w2/session_9/logs"  # any live one


def test_ray_reports_the_whole_dataset_checks_as_progress(local_ray: None, fixture_file: Path, tmp_path: Path) -> None:
    """The reduce phase says where it is, as the local engine's ``finalize_stages`` does (it was silent), and
    counts the same stages."""
    calls: list[tuple[str, int, int | None]] = []
    local: list[tuple[str, int, int | None]] = []
    only = [*CHEAP, "near_duplicate_pair"]
    pairaudit.scan(fixture_file, out=tmp_path / "local", only=only, log=lambda m: None,
                   progress=lambda phase, done, total: local.append((phase, done, total)))
    pairaudit.scan(fixture_file, out=tmp_path / "ray", only=only, engine="ray",
                   ray_shards=2, log=lambda m: None, progress=lambda phase, done, total: calls.append((phase, done, total)))
    fin = [(d, t) for ph, d, t in calls if ph == "finalize"]
    assert fin and fin[0][0] == 0 and fin[-1][0] == fin[-1][1] >= 1  # from 0 to every stage done
    # the same count of stages as the local engine's (it said 0 / 3 where the local engine said 0 / 5)
    assert {t for _, t in fin} == {t for ph, _, t in local if ph == "finalize"}, (fin, local)
    assert [d for d, _ in fin] == sorted(d for d, _ in fin)
    phases = [ph for ph, _, _ in calls]
    assert max(i for i, p in enumerate(phases) if p == "read") < phases.index("finalize")


def _references_at_phase_ends(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Ray's count of the driver's object references at the end of each phase (map, reduce, write), filled as
    the scan runs."""
    from pairaudit.engines import ray_engine

    held: dict[str, int] = {}
    real_mark = ray_engine._RayScan.mark

    def mark(scan: object, phase: str) -> None:
        held[phase] = len(ray._private.worker.global_worker.core_worker.get_all_reference_counts())
        real_mark(scan, phase)

    monkeypatch.setattr(ray_engine._RayScan, "mark", mark)
    return held


@pytest.mark.timeout(600)
def test_the_driver_owns_no_object_per_shard_and_partition(local_ray: None, fixture_file: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The hash shuffle's pieces (a piece per shard and partition, a part per partition and shard) go worker to
    worker (``engines/exchange.py``): at the end of every phase the driver holds fewer object references than
    shards + partitions. Before, it owned 2 x shards x partitions of them per hash stage (256 at 16 shards, 8
    partitions, two hash stages), a count that grows with the square of the rows."""
    held = _references_at_phase_ends(monkeypatch)
    local = pairaudit.scan(fixture_file, out=tmp_path / "local", only=[*CHEAP, "preference_cycle"], log=lambda m: None)
    audit = pairaudit.scan(fixture_file, out=tmp_path / "ray", only=[*CHEAP, "preference_cycle"], engine="ray",
                           ray_shards=16, log=lambda m: None)
    engine = audit.report["stats"]["engine"]
    assert engine["shards"] == 16 and engine["hash_partitions"] == 8
    assert {"ExactStage", "PreferenceGraphStage"} <= set(engine["distributed"]["hash_partitioned"])
    assert set(held) == {"map", "reduce", "write"}
    assert max(held.values()) < 16 + 8, held
    assert audit.totals == local.totals
    assert _outputs(tmp_path / "ray")[0].equals(_outputs(tmp_path / "local")[0])


@pytest.mark.timeout(600)
def test_the_driver_holds_no_result_part_per_shard_until_the_write(local_ray: None, fixture_file: Path,
                                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                   ) -> None:
    """The near-duplicate stage's and the flip model's results stay parked where they were made until each
    shard's writer pulls its part (``exchange.Pull``). Before, the driver held an object reference per shard for
    each of them from finalize to the write (here 3 per shard: the cells' result, the fit's part, the applied
    rows), and a small part (a small shard) lived in the driver's own memory: ~0.3 MB a shard at 190 shards
    (docs/scale.md). What is left per shard is the driver's own findings of the near-duplicate stage."""
    held = _references_at_phase_ends(monkeypatch)
    recs = [json.loads(x) for x in HH.read_text(encoding="utf-8").splitlines()[:600]]
    recs.append({"chosen": recs[20]["rejected"], "rejected": recs[20]["chosen"]})  # a contradiction
    path = tmp_path / "pairs.jsonl"
    write_jsonl(path, recs)
    only = ["near_duplicate_pair", "contradictory_pair", "likely_flipped"]
    th = {"likely_flipped": {"fit_sample_rows": 300}}  # fitted on 300 of 601 rows, applied to the others
    outs = {}
    for shards in (4, 16):
        out = tmp_path / f"ray-{shards}"
        audit = pairaudit.scan(path, out=out, only=only, thresholds=th, engine="ray", ray_shards=shards,
                               log=lambda m: None)
        flips = audit.report["stats"]["likely_flipped"]
        assert "a seeded sample of 300 of 601 rows" in flips["fitted_on"] and flips["rows_scored"] == 300, flips
        outs[shards] = _outputs(out)
    assert held["reduce"] <= 16 + 4, held  # at the end of finalize; 16 x 4 before: the three parts, the findings
    same_findings(outs[16][0], outs[4][0])  # the shard count changes the embedding sums' rounding only
    same_scores(outs[16][1], outs[4][1])
    assert outs[16][2:] == outs[4][2:]
    scores = outs[16][1]
    assert scores.height == 601 and scores["likely_flipped_score"].null_count() == 0
    assert "contradictory_pair" in set(outs[16][0]["check"])


@pytest.mark.timeout(600)
@pytest.mark.parametrize("mode", ["auto", "static"])
def test_ray_near_duplicates_in_many_cell_groups_match_local(local_ray: None, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """The near-duplicate rows cross between shards and cell groups worker to worker (assign -> search ->
    embed -> verify -> result, ``engines/exchange.py``): with a FAISS cell index, 6 shards and several cell
    groups on each actor, the findings and scores are the local engine's, and whenever the driver waits for the
    stage's results it holds fewer object references than 4 x (shards + groups): a few per shard and per group
    (it held one per shard and group at each step: 159 here before)."""
    from pairaudit.engines import ray_stages

    monkeypatch.setattr(ray_stages, "GROUP_ROWS", 40)  # ~300 rows: 4 groups per actor (capped by the cells)
    held: list[int] = []
    real_get = ray_stages.RayRun.get

    def get(run: object, refs: list[object]) -> list[object]:
        held.append(len(ray._private.worker.global_worker.core_worker.get_all_reference_counts()))
        return real_get(run, refs)

    monkeypatch.setattr(ray_stages.RayRun, "get", get)
    only = ["near_duplicate_pair", "contradictory_pair", "identical_pair"]
    th = {"near_duplicate_pair": {"exact_max_rows": 100}}
    pairaudit.scan(MULTIPAIR, out=tmp_path / "local", only=only, embed_mode=mode, thresholds=th, log=lambda m: None)
    audit = pairaudit.scan(MULTIPAIR, out=tmp_path / "ray", only=only, engine="ray", ray_shards=6, embed_mode=mode,
                           thresholds=th, log=lambda m: None)
    near = audit.report["stats"]["near_duplicates"]
    assert near["index"].startswith("ivf") and near["nlist"] >= 4, near
    timings = json.loads((tmp_path / "ray" / ".pairaudit" / "current" / "timings.json").read_text())
    groups = int(timings["ray_near:cell_groups"])
    assert groups >= 4
    want, got = _outputs(tmp_path / "local"), _outputs(tmp_path / "ray")
    assert "near_duplicate_pair" in set(want[0]["check"])
    same_findings(got[0], want[0])
    same_scores(got[1], want[1])
    assert held and max(held) < 4 * (6 + groups), (str(held), groups)


def test_a_tokenizer_that_cannot_load_says_so_as_with_the_local_engine(local_ray: None, fixture_file: Path,
                                                                        tmp_path: Path) -> None:
    """The trainer's tokenizer loads on the actors: one that cannot load (a folder that is no model) ends the
    scan with exit 4, nothing written and the local engine's message; it printed Ray's traceback of the actor's
    task, its colour codes escaped, with pairaudit's message last (helper-62)."""
    from typer.testing import CliRunner

    from pairaudit.cli import app

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "config.json").write_text('{"model_type": "llama"', encoding="utf-8")  # broken JSON
    said = {}
    for engine in ("local", "ray"):
        res = CliRunner().invoke(app, ["scan", str(fixture_file), "--out", str(tmp_path / engine), "--engine", engine,
                                       "--tokenizer", str(notes), "--only", "empty_response"])
        assert res.exit_code == 4 and not (tmp_path / engine).exists(), res.output
        said[engine] = next(line for line in res.output.splitlines() if line.startswith("error: "))
    assert said["ray"] == said["local"], said
    assert said["ray"].startswith(f"error: could not load tokenizer from {notes} (--tokenizer)"), said


HELD6 = Path(__file__).resolve().parent.parent / "data" / "precision" / "neardup_heldout6.jsonl"


@pytest.mark.timeout(900)
@pytest.mark.parametrize("case", ["none pass", "none reach", "some pass"])
def test_ray_calibrates_on_the_pairs_whose_prompts_pass_as_local(local_ray: None, tmp_path: Path, case: str) -> None:
    """Hybrid mode reads a candidate pair's responses only when its prompts may pass (``verify.prompts_pass``),
    and calibrates the copy threshold on those pairs' rows and the sample; when no pair's prompts pass it
    embeds no response and reports the static space's calibration. With the candidate rule's prompt floor at 0,
    rows that carry another row's answers under an unrelated prompt are candidates the prompt turns down
    ("none pass": only those; "some pass": held6, whose reworded copies pass): the Ray engine's findings, scores
    and calibration are the local engine's."""
    rows = [json.loads(line) for line in HELD6.open(encoding="utf-8")]
    if case == "none pass":
        base = rows[:99]
        rows = base + [{"prompt": base[(i + 7) % 99]["prompt"], "chosen": r["chosen"], "rejected": r["rejected"]}
                       for i, r in enumerate(base[:40])]
    elif case == "none reach":  # held6's reworded prompts (they pass) over other rows' answers (they do not reach)
        base = rows[:99]
        plants = [r for r in rows if r.get("plant_of") is not None]
        other = [(7 * i + 50) % 99 for i in range(len(plants))]  # distinct rows (7 and 99 are coprime)
        other = [j if j != int(r["plant_of"]) else (j + 50) % 99 for j, r in zip(other, plants)]  # never its own
        rows = base + [{"prompt": r["prompt"], "chosen": base[j]["chosen"], "rejected": base[j]["rejected"]}
                       for j, r in zip(other, plants)]
    path = tmp_path / "set.jsonl"
    write_jsonl(path, [{k: r[k] for k in ("prompt", "chosen", "rejected")} for r in rows])
    only = ["near_duplicate_pair", "contradictory_pair"]
    th = {"near_duplicate_pair": {"candidate_min_prompt": 0.0, "exact_max_rows": 50, "calibration_rows": 40}}
    if case == "none reach":  # a plant and its base row share only a prompt: let the search and the loose rule keep them
        th["near_duplicate_pair"].update(candidate_min_response=0.0, min_search_cosine=0.0)
    reports = {}
    for engine in ("local", "ray"):
        kw = {"engine": "ray", "ray_shards": 3} if engine == "ray" else {}
        reports[engine] = pairaudit.scan(path, out=tmp_path / engine, only=only, thresholds=th, log=lambda m: None,
                                         **kw).report["stats"]["near_duplicates"]
    want, got = _outputs(tmp_path / "local"), _outputs(tmp_path / "ray")
    same_findings(got[0], want[0])
    same_scores(got[1], want[1])
    cal = reports["local"]["calibration"]
    assert reports["ray"]["calibration"] == cal and reports["ray"]["n_rows"] == reports["local"]["n_rows"]
    assert reports["local"]["hybrid_candidate_rows"] > 0
    timings = json.loads((tmp_path / "local" / ".pairaudit" / "current" / "timings.json").read_text())
    if case == "none pass":
        assert cal["space"].startswith("static (hybrid: no candidate pair's prompts pass"), cal
        assert timings["near_duplicates:pairs_prompts_passed"] == 0
        assert "near_duplicate_pair" not in set(want[0]["check"])
    elif case == "none reach":  # the prompts pass, no response comes near: no calibration sample is embedded
        assert cal["space"].startswith("static (hybrid: no response of a pair whose prompts pass"), cal
        assert timings["near_duplicates:pairs_prompts_passed"] > 0 == timings["near_duplicates:pairs_responses_reached"]
        assert "near_duplicate_pair" not in set(want[0]["check"])
        assert timings["near_duplicates:transformer_fields_planned"] < reports["local"]["hybrid_candidate_rows"] * 3
    else:
        assert cal["space"].startswith("transformer (the rows of the candidate pairs whose prompts pass") and timings["near_duplicates:pairs_prompts_passed"] > 0
        assert timings["near_duplicates:pairs_responses_reached"] > 0
        assert "near_duplicate_pair" in set(want[0]["check"])

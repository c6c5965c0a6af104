"""The scale paths (one static-embedding pass shared by the stages, each prompt tokenized once, per-row
columns spilled to disk, the transformer only on the fields a decision reads, worker processes) give the same
outputs as the previous per-stage, whole-text, in-memory, every-field, one-process path, on
real HH rows with planted paraphrases, light edits, exact copies and swapped labels (every default stage
finds something)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl
import pytest
from support import planting

pytest.importorskip("model2vec")
pytest.importorskip("sklearn")


def _planted(path: Path, n: int = 200, seed: int = 5) -> Path:
    rng = random.Random(seed)
    rows = planting.hh_rows(n)
    for o in rng.sample(range(n), 16):
        p, c, r = rows[o]
        rows.append((planting.reword_prompt(p, rng), planting.paraphrase(c, rng), planting.paraphrase(r, rng)))
    for j, o in enumerate(rng.sample(range(n), 8)):
        rows.append(tuple(planting.light_edit(t, planting.LIGHT_KINDS[(j + f) % 5], rng)
                          for f, t in enumerate(rows[o])))
    for o in rng.sample(range(n), 4):
        rows.append(rows[o])
    for o in rng.sample(range(n), 4):
        p, c, r = rows[o]
        rows.append((p, r, c))
    with path.open("w", encoding="utf-8") as fh:
        for p, c, r in rows:  # implicit-prompt HH strings, as the dataset ships
            fh.write(json.dumps({"chosen": p + c, "rejected": p + r}) + "\n")
    return path


def _scan(src: Path, out: Path) -> dict[str, bytes]:
    import pairaudit

    pairaudit.scan(src, out=out, progress=False, log=lambda m: None)
    return {f: (out / f).read_bytes() for f in ("findings.parquet", "scores.parquet", "report.json")}


def _cold_cache(folder: Path) -> str:
    """A cache folder sharing the session cache's static model and tokenizer but no embeddings, so a scan
    embeds every text itself."""
    import os

    folder.mkdir()
    for sub in ("static-embedders", "tokenizers"):
        if (Path(os.environ["PAIRAUDIT_CACHE"]) / sub).exists():
            (folder / sub).symlink_to(Path(os.environ["PAIRAUDIT_CACHE"]) / sub)
    return str(folder)


def test_scale_paths_change_no_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pairaudit.models import batch_vectors
    from pairaudit.stages.near_duplicates import lazy
    from pairaudit.trainer import joint_tokens

    src = _planted(tmp_path / "planted.jsonl")
    monkeypatch.setenv("PAIRAUDIT_SPILL_BYTES", "4096")  # every stage column goes to disk
    new = _scan(src, tmp_path / "new")
    monkeypatch.delenv("PAIRAUDIT_SPILL_BYTES")
    monkeypatch.setattr(batch_vectors, "SHARE", False)
    monkeypatch.setattr(joint_tokens, "ENABLED", False)
    monkeypatch.setattr(lazy, "ENABLED", False)  # every field of every candidate row through the transformer
    monkeypatch.setenv("PAIRAUDIT_CACHE", _cold_cache(tmp_path / "cold"))  # nothing from the first scan's vectors
    old = _scan(src, tmp_path / "old")
    findings = pl.read_parquet(tmp_path / "new" / "findings.parquet")
    assert {"near_duplicate_pair", "duplicate_pair", "contradictory_pair"} <= set(findings["check"].to_list())
    assert json.loads(new["report.json"])["checks"]["likely_flipped"]["status"] == "ran"
    for name in old:
        assert new[name] == old[name], name


def test_texts_read_once_change_no_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Several pairs per prompt (real HH prompts, each with 5 pairs of real responses drawn from the set, some
    responses in several prompts' pairs) plus planted rewordings, light edits, copies and swaps: the decision
    reading each distinct text once from memory (``bytext.TextTable``) writes what reading the spilled per-row
    columns writes."""
    from pairaudit.stages.near_duplicates import bytext

    rng = random.Random(11)
    base = planting.hh_rows(60)
    answers = [x for _, c, r in base for x in (c, r)]
    rows = [(p, c, r) for p, c, r in base]
    for p, c, r in base:
        rows += [(p, c, rng.choice(answers)) for _ in range(2)] + [(p, rng.choice(answers), r) for _ in range(2)]
    for o in rng.sample(range(len(rows)), 12):
        p, c, r = rows[o]
        rows.append((planting.reword_prompt(p, rng), c, r) if o % 2 else (p, planting.paraphrase(c, rng), r))
    rows += [rows[o] for o in rng.sample(range(len(rows)), 4)] + [(p, r, c) for p, c, r in rng.sample(rows, 4)]
    src = tmp_path / "multi.jsonl"
    src.write_text("".join(json.dumps({"prompt": p, "chosen": c, "rejected": r}) + "\n" for p, c, r in rows))
    made: list[bool] = []
    of = bytext.TextTable.of

    def spy(*args: object) -> bytext.TextTable | None:
        t = of(*args)
        made.append(t is not None)
        return t

    monkeypatch.setattr(bytext.TextTable, "of", staticmethod(spy))
    monkeypatch.setenv("PAIRAUDIT_SPILL_BYTES", "4096")  # every stage column goes to disk
    by_text = _scan(src, tmp_path / "by_text")
    monkeypatch.setattr(bytext, "MAX_TEXT_SHARE", 0.0)  # never worth it: the spilled per-row columns
    by_row = _scan(src, tmp_path / "by_row")
    assert made == [True, False]
    findings = pl.read_parquet(tmp_path / "by_text" / "findings.parquet")
    assert {"near_duplicate_pair", "duplicate_pair", "contradictory_pair"} <= set(findings["check"].to_list())
    for name in by_row:
        assert by_text[name] == by_row[name], name


def test_spill_columns_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from pairaudit.stages.spill import Mapped, Spill

    monkeypatch.setenv("PAIRAUDIT_SPILL_DIR", str(tmp_path))
    rng = np.random.default_rng(0)
    parts = [rng.standard_normal((k, 4)).astype(np.float16) for k in (3, 0, 5)]
    blobs = [np.array([b"ab", b"", b"\x00c"], dtype=object), np.array([b"xyz"], dtype=object)]
    spill = Spill(limit=1)
    cols = {"v": list(parts[:1]), "t": list(blobs[:1])}
    spill.maybe(cols)
    assert cols == {"v": [], "t": []} and spill.spilled_columns == {"v", "t"}
    cols["v"] += parts[1:]
    cols["t"] += blobs[1:]
    v, t = spill.column("v", cols["v"]), spill.column("t", cols["t"])
    assert isinstance(v, Mapped) and np.array_equal(v[:], np.concatenate(parts)) and v[7, 3] == parts[2][4, 3]
    assert [t[i] for i in range(len(t))] == [b"ab", b"", b"\x00c", b"xyz"] and t.nbytes == 7
    folder = spill.folder
    spill.close()
    assert folder is not None and not folder.exists()
    again, spill = {"v": list(parts[:1]), "t": list(blobs[:1])}, Spill(limit=1)
    spill.maybe(again)
    spill.restore(again)  # what an engine exports: the whole column back in memory
    assert np.array_equal(np.concatenate(again["v"]), parts[0])
    assert list(np.concatenate(again["t"])) == [b"ab", b"", b"\x00c"] and not spill.spilled
    small = Spill()  # under the limit: plain in-memory concatenation, no files
    assert isinstance(small.column("v", list(parts)), np.ndarray) and small.folder is None


def test_spill_hand_over_gives_a_shard_its_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ray actor's stage spills every batch and hands each shard its files: the shard's columns stay on disk,
    the stage starts afresh, and closing the shard's Spill removes only that shard's files."""
    import numpy as np

    from pairaudit.stages.spill import Blobs, Mapped, Spill

    monkeypatch.setenv("PAIRAUDIT_SPILL_DIR", str(tmp_path))
    rng = np.random.default_rng(1)
    stage = Spill(limit=0)
    shards = []
    for s in range(2):
        cols: dict[str, list] = {"v": [], "t": []}
        want_v, want_t = [], []
        for k in (4, 2):
            v = rng.standard_normal((k, 3)).astype(np.float16)
            t = np.array([bytes([65 + s]) * i for i in range(k)], dtype=object)
            cols["v"].append(v)
            cols["t"].append(t)
            want_v.append(v)
            want_t += list(t)
            stage.maybe(cols)
            assert cols == {"v": [], "t": []}  # limit 0: every batch goes to disk
        shard = stage.hand_over(cols)
        assert shard is not None and not stage.spilled and stage.folder is None
        (v,), (t,) = cols["v"], cols["t"]
        assert isinstance(v, Mapped) and isinstance(t, Blobs)
        assert np.array_equal(v[:], np.concatenate(want_v)) and [t[i] for i in range(len(t))] == want_t
        shards.append((shard, shard.folder, v))
    assert shards[0][1] != shards[1][1]
    shards[0][0].close()
    assert not shards[0][1].exists() and shards[1][1].exists()
    assert np.asarray(shards[1][2][[5, 0]]).shape == (2, 3)  # the other shard still reads its rows
    assert Spill(limit=0).hand_over({"v": []}) is None  # nothing spilled: nothing handed over


@pytest.mark.parametrize("batch_size", [37, 1000])
def test_worker_pool_changes_no_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch_size: int) -> None:
    """--workers 2 (batches checked and observed in two worker processes, merged in row order) writes what one
    process writes, with one batch or many (37 rows: batches end at different places in every worker)."""
    import pairaudit
    from pairaudit.engines import local

    src = _planted(tmp_path / "planted.jsonl")
    monkeypatch.setattr(local, "POOL_MIN_ROWS", 0)
    logs: list[str] = []
    outs = {}
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        pairaudit.scan(src, out=out, progress=False, log=logs.append, workers=workers, batch_size=batch_size)
        outs[workers] = {f: (out / f).read_bytes() for f in ("findings.parquet", "scores.parquet", "report.json",
                                                             "clean.jsonl", "dropped.jsonl")}
    assert {"near_duplicate_pair", "duplicate_pair", "contradictory_pair"} <= set(
        pl.read_parquet(tmp_path / "w2" / "findings.parquet")["check"].to_list())
    for name in outs[1]:
        assert outs[2][name] == outs[1][name], name
    assert "workers" not in json.loads(outs[2]["report.json"])["config"]  # how it ran, not what it found


def test_worker_pool_not_used_for_in_memory_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pairaudit
    from pairaudit.engines import local

    monkeypatch.setattr(local, "POOL_MIN_ROWS", 0)
    rows = [{"prompt": f"q{i}", "chosen": f"a good answer {i}", "rejected": f"a bad one {i}"} for i in range(30)]
    logs: list[str] = []
    audit = pairaudit.scan(rows, out=tmp_path / "o", progress=False, log=logs.append, workers=2, only=["identical_pair"])
    assert audit.totals["input"] == 30
    assert any("--workers 2: every batch runs in this process: the source is an in-memory object" in m for m in logs)


def test_embedding_does_not_depend_on_the_other_texts_of_a_call() -> None:
    """Texts are encoded in batches of equal token length, so a text's vector is the same whichever texts share
    the call (the near-duplicate stage embeds only the fields it reads; a cached vector equals a fresh one). With
    padded batches a bf16 vector moved by up to ~2e-3 in cosine with the batch around it."""
    import numpy as np

    from pairaudit.models.embedder import Embedder

    texts = [t for row in planting.hh_rows(40) for t in row]
    emb = Embedder(cache_dir=None)
    whole = emb.encode(texts)
    rng = np.random.default_rng(0)
    for part in (rng.choice(len(texts), 7, replace=False), np.arange(0, len(texts), 5), [3]):
        alone = emb.encode([texts[i] for i in part])
        cos = np.sum(alone * whole[part], axis=1)
        assert cos.min() >= 1 - 1e-6, (emb.precision, cos.min())


@pytest.mark.parametrize("cap", [None, 150])
def test_worker_pool_with_reference_and_policy_models_changes_no_output(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         cap: int | None) -> None:
    """With a reference and a policy model the pool still runs: the workers tokenize the pairs as the models see
    them and the main process scores them as it absorbs the batches in row order. The outputs are one process's,
    with --reference-max-rows cutting inside a batch (150 of 37-row batches) or not set; each run has its own
    cache, so both score every sequence."""
    pytest.importorskip("torch")
    from support.tiny_lm import build_model, build_tokenizer

    import pairaudit
    from pairaudit.engines import local

    src = _planted(tmp_path / "planted.jsonl")
    models = {}
    for name, seed in (("ref", 0), ("policy", 1)):
        models[name] = tmp_path / name
        build_model(models[name], seed, len(build_tokenizer(models[name])))
    monkeypatch.setattr(local, "POOL_MIN_ROWS", 0)
    outs, logs = {}, {}
    for workers in (1, 2):
        monkeypatch.setenv("PAIRAUDIT_CACHE", _cold_cache(tmp_path / f"cache{workers}"))
        out = tmp_path / f"w{workers}"
        logs[workers] = []
        seen: list[tuple[int, int | None]] = []
        pairaudit.scan(src, out=out, log=logs[workers].append, workers=workers, batch_size=37,
                       only=["likely_flipped", "dpo_overflow_risk"], reference=str(models["ref"]),
                       policy=str(models["policy"]), reference_max_rows=cap,
                       progress=lambda phase, done, total, seen=seen: seen.append((done, total)) if phase == "reference"
                       else None)
        # the "reference model" progress phase moves while the main process scores (it never did)
        assert seen and [d for d, _ in seen] == sorted(d for d, _ in seen) and seen[-1][0] > 0, seen
        outs[workers] = {f: (out / f).read_bytes() for f in ("findings.parquet", "scores.parquet", "report.json",
                                                             "clean.jsonl", "dropped.jsonl")}
    assert not [m for m in logs[2] if "every batch runs in this process" in m], logs[2]
    scores = pl.read_parquet(tmp_path / "w2" / "scores.parquet").sort("row")
    scored = scores["ref_logp_chosen"].is_not_nan() & scores["ref_logp_chosen"].is_not_null()
    assert int(scored.sum()) == (cap or len(scores)) and scored[: cap or len(scores)].all()
    assert int(scores["policy_logit"].is_not_nan().sum()) == int(scored.sum())
    for name in outs[1]:
        assert outs[2][name] == outs[1][name], name


@pytest.mark.parametrize("workers", [1, 2])
def test_a_reference_model_failing_mid_scan_fails_its_stage_not_the_scan(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        workers: int) -> None:
    """The reference model raising on its second batch (a GPU out of memory for one sequence, a broken driver):
    with the pool the main process scores the workers' batches as it absorbs them, and a failure there once
    ended the whole scan with a traceback. Now, as in one process, the stage fails (exit 4, report.json says why),
    every row is still written, and the other checks' results stand."""
    pytest.importorskip("torch")
    from support.tiny_lm import build_model, build_tokenizer

    import pairaudit
    from pairaudit.engines import local
    from pairaudit.models.reference import LogpScorer

    src = _planted(tmp_path / "planted.jsonl")
    ref = tmp_path / "ref"
    build_model(ref, 0, len(build_tokenizer(ref)))
    monkeypatch.setattr(local, "POOL_MIN_ROWS", 0)
    monkeypatch.setenv("PAIRAUDIT_CACHE", _cold_cache(tmp_path / "cache"))
    real, calls = LogpScorer.score_seqs, []

    def second_fails(self, seqs):
        calls.append(len(seqs))
        if len(calls) == 2:
            raise RuntimeError("CUDA error: out of memory for one sequence of 9,000 tokens")
        return real(self, seqs)

    monkeypatch.setattr(LogpScorer, "score_seqs", second_fails)
    logs: list[str] = []
    audit = pairaudit.scan(src, out=tmp_path / "o", progress=False, log=logs.append, workers=workers, batch_size=37,
                           only=["likely_flipped", "identical_pair"], reference=str(ref))
    assert audit.exit_code == 4 and audit.report["status"] == "incomplete"
    check = audit.report["checks"]["likely_flipped"]
    assert check["status"] == "failed" and "out of memory for one sequence" in check["reason"], check
    assert audit.report["checks"]["identical_pair"]["status"] == "ran"
    totals = audit.totals
    assert totals["input"] == totals["kept"] + totals["dropped"] == sum(1 for _ in open(src, encoding="utf-8"))
    assert [m for m in logs if "stage FlipStage failed" in m]

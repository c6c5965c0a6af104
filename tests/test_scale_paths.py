"""The scale paths (one static-embedding pass shared by the stages, each prompt tokenized once, per-row
columns spilled to disk) give the same outputs as the previous per-stage, whole-text, in-memory path, on
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


def test_scale_paths_change_no_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pairaudit.models import batch_vectors
    from pairaudit.trainer import joint_tokens

    src = _planted(tmp_path / "planted.jsonl")
    monkeypatch.setenv("PAIRAUDIT_SPILL_BYTES", "4096")  # every stage column goes to disk
    new = _scan(src, tmp_path / "new")
    monkeypatch.delenv("PAIRAUDIT_SPILL_BYTES")
    monkeypatch.setattr(batch_vectors, "SHARE", False)
    monkeypatch.setattr(joint_tokens, "ENABLED", False)
    old = _scan(src, tmp_path / "old")
    findings = pl.read_parquet(tmp_path / "new" / "findings.parquet")
    assert {"near_duplicate_pair", "duplicate_pair", "contradictory_pair"} <= set(findings["check"].to_list())
    assert json.loads(new["report.json"])["checks"]["likely_flipped"]["status"] == "ran"
    for name in old:
        assert new[name] == old[name], name


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

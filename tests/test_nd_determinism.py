"""With the near-duplicate stage on, report.json and report.html are byte-identical between a cold and a
warm embedding cache; the run-specific figures (seconds, cache counters) are in timings.json."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import write_jsonl
from support.nd_support import fresh_cache
from support.planting import LIGHT_KINDS, hh_rows, light_edit

import pairaudit


def test_cold_and_warm_cache_give_identical_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(2)
    rows = hh_rows(120)
    for j, o in enumerate(rng.sample(range(120), 8)):
        rows.append(tuple(light_edit(t, LIGHT_KINDS[(j + f) % 5], rng) for f, t in enumerate(rows[o])))
    src = write_jsonl(tmp_path / "pairs.jsonl", [{"prompt": p, "chosen": c, "rejected": r} for p, c, r in rows])
    monkeypatch.setenv("PAIRAUDIT_CACHE", str(fresh_cache(tmp_path / "cache")))
    only = ["near_duplicate_pair", "contradictory_pair", "near_identical_pair", "degenerate_repetition"]
    outs = []
    for name in ("cold", "warm"):
        audit = pairaudit.scan(src, out=tmp_path / name, only=only)
        assert audit.exit_code == 0
        outs.append(tmp_path / name)
    for f in ("report.json", "report.html"):
        assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes(), f
    report = json.loads((outs[0] / "report.json").read_text())
    assert report["checks"]["near_duplicate_pair"]["rows"] >= 8
    assert "n_cached" not in json.dumps(report) and "embed_s" not in json.dumps(report)
    t_cold, t_warm = (json.loads((o / "timings.json").read_text()) for o in outs)
    assert t_cold["near_duplicates:transformer_texts_encoded"] > 0
    assert t_warm["near_duplicates:transformer_texts_encoded"] == 0
    # every text the cold run embedded (or found cached within the run: the calibration sample and the
    # near-identical view ask for some rows twice) comes from the cache on the warm run
    assert t_warm["near_duplicates:transformer_texts_cached"] == (t_cold["near_duplicates:transformer_texts_encoded"]
                                                                 + t_cold["near_duplicates:transformer_texts_cached"])
    assert "near_duplicates:embed_s" in t_cold

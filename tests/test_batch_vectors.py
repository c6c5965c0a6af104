"""The static vectors' memo (``models/batch_vectors.py``) spans batches: a text repeated in later batches (every
multi-pair dataset) is embedded once per worker, with the vectors of embedding each batch alone, and the memo
stays within its budget by emptying itself; a scan with it on writes the outputs of a scan with it off."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from support.planting import hh_rows, uf_rows

pytest.importorskip("model2vec")


@pytest.fixture(scope="module")
def static():  # noqa: ANN201 - the real distilled model, as the near-duplicate stage loads it
    import os

    from pairaudit.models.embedder import Embedder
    from pairaudit.models.static_embedder import StaticEmbedder

    return StaticEmbedder.for_embedder(Embedder(), Path(os.environ["PAIRAUDIT_CACHE"]), purpose="test", fix="-")


def _batches(seed: int = 3) -> list[list[str]]:
    """Real HH and UltraFeedback texts in batches of pairs, each text recurring in later batches (several pairs
    per prompt), with an empty text and repeats within a batch."""
    rng = random.Random(seed)
    rows = hh_rows(60) + uf_rows(20)
    texts = [t for r in rows for t in r] + [""]
    return [[rng.choice(texts) for _ in range(3 * 40)] for _ in range(8)]


def test_vectors_equal_each_batch_embedded_alone(static) -> None:  # noqa: ANN001
    from pairaudit.models.batch_vectors import BatchVectors

    batches = _batches()
    for max_mb in (64, 0.05):  # 0.05 MB: the memo fills and is emptied several times
        bv = BatchVectors(max_mb=max_mb)
        for texts in batches:
            batch = object()  # a new batch, as each observe receives
            got = bv.encode(static, batch, texts)
            assert got.dtype == np.float32 and got.tobytes() == static.encode(texts).tobytes()
            again = bv.encode(static, batch, texts[::3])  # the second stage on the same batch: read, not embedded
            assert again.tobytes() == got[::3].tobytes()
            assert bv._bytes <= bv.max_bytes or len(bv._memo) <= len(set(texts))
        distinct = len({t for ts in batches for t in ts})
        if max_mb == 64:  # every distinct text embedded once over all batches
            assert bv.n_encoded == distinct and bv.n_cleared == 0
        else:
            assert bv.n_cleared > 0 and bv.n_encoded > distinct
        assert bv.n_encoded + bv.n_reused == sum(len(ts) + len(ts[::3]) for ts in batches)


def test_one_batch_memo_embeds_repeats_again(static, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    from pairaudit.models import batch_vectors

    batches = _batches()
    monkeypatch.setattr(batch_vectors, "CROSS_BATCH", False)
    bv = batch_vectors.BatchVectors()
    for texts in batches:
        assert bv.encode(static, object(), texts).tobytes() == static.encode(texts).tobytes()
    assert bv.n_encoded == sum(len(set(ts)) for ts in batches)


def test_scan_outputs_equal_with_memo_on_and_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of 50 rows over 300 rows that reuse 60 HH prompts and their responses (as a multi-pair set
    does): every output file is the same with the cross-batch memo, a memo too small to hold them all, and
    none."""
    from conftest import output_files

    import pairaudit
    from pairaudit.models import batch_vectors

    rng = random.Random(7)
    base = hh_rows(60)
    src = tmp_path / "multi.jsonl"
    with src.open("w", encoding="utf-8") as fh:
        for _ in range(300):
            p, c, _r = rng.choice(base)
            r = rng.choice(base)[rng.choice((1, 2))]
            fh.write(json.dumps({"chosen": p + c, "rejected": p + r}) + "\n")
    outs = {}
    for name, cross, max_mb in (("on", True, 64), ("small", True, 0.2), ("off", False, 64)):
        monkeypatch.setattr(batch_vectors, "CROSS_BATCH", cross)
        monkeypatch.setattr(batch_vectors, "MAX_MB", max_mb)
        pairaudit.scan(src, out=tmp_path / name, progress=False, log=lambda m: None, batch_size=50)
        outs[name] = output_files(tmp_path / name)
    assert outs["on"]["findings.parquet"] and set(outs["on"]) == set(outs["off"])
    for name in set(outs["off"]) - {"timings.json"}:  # seconds differ between runs
        assert outs["on"][name] == outs["off"][name] == outs["small"][name], name

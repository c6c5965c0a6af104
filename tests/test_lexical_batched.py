"""The wording similarity of the near-duplicate verification, batched (``match.lexical_many``: rapidfuzz's
``cpdist``), gives exactly the per-pair ``lexical`` and ``char_ratio`` values, on real HH texts: short and long sketches (the
length-ratio cap), multi-byte characters cut inside the 128-byte halves, empty texts and near copies."""

from __future__ import annotations

import numpy as np
import pytest
from support.planting import hh_rows

from pairaudit.stages.near_duplicates.match import SKETCH_BYTES, char_ratio, lexical, lexical_many, sketch


@pytest.mark.parametrize("seed", [0, 1])
def test_batched_wording_similarity_equals_the_per_pair_one(seed: int) -> None:
    rng = np.random.default_rng(seed)
    texts = [t for row in hh_rows(400) for t in row]
    texts += ["", "é" * 200, "日本語のテキスト " * 40, texts[5] + " extra words", texts[5].upper()]
    sks = [sketch(t) for t in texts]
    sk = np.array([s for s, _ in sks], dtype=f"S{SKETCH_BYTES + 1}")
    ln = np.array([n for _, n in sks], dtype=np.int64)
    a = rng.integers(0, len(texts), 3000)
    b = np.concatenate([rng.integers(0, len(texts), 2990), [5, 5, len(texts) - 1, len(texts) - 2, 0, 1, 2, 3, 4,
                                                           len(texts) - 3]])
    got = lexical_many(sk[a], ln[a], sk[b], ln[b])
    want = np.array([lexical(sk[i], int(ln[i]), sk[j], int(ln[j])) for i, j in zip(a.tolist(), b.tolist())])
    assert got.dtype == np.float64 and np.array_equal(got, want)
    assert (ln > SKETCH_BYTES).sum() > 100 and len(np.unique(got)) > 500  # long texts capped, varied values
    got = lexical_many(sk[a], ln[a], sk[b], ln[b], scorer="ratio")  # the character ratio (rows of one prompt)
    want = np.array([char_ratio(sk[i], int(ln[i]), sk[j], int(ln[j])) for i, j in zip(a.tolist(), b.tolist())])
    assert np.array_equal(got, want)

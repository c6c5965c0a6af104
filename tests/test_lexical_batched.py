"""The wording similarity of the near-duplicate verification, batched (``match.lexical_many``: rapidfuzz's
``cpdist``), gives exactly the per-pair ``lexical`` and ``char_ratio`` values, on real HH texts: short and long sketches (the
length-ratio cap), multi-byte characters cut inside the 128-byte halves, empty texts and near copies."""

from __future__ import annotations

import numpy as np
import pytest
from support.planting import hh_rows

from pairaudit.stages.near_duplicates.match import (
    SKETCH_BYTES,
    char_ratio,
    lexical,
    lexical_many,
    sketch,
    token_sorted,
)


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


@pytest.mark.parametrize("below", [0.55, 0.8])
def test_below_skips_only_pairs_whose_length_cap_decides(below: float) -> None:
    """``below``: pairs of long texts whose length-ratio cap is under the floor get the cap (never the scorer);
    every other pair gets the exact value, and whether a value reaches the floor never changes."""
    rng = np.random.default_rng(7)
    texts = [t for row in hh_rows(300) for t in row]
    sks = [sketch(t) for t in texts]
    sk = np.array([s for s, _ in sks], dtype=f"S{SKETCH_BYTES + 1}")
    ln = np.array([n for _, n in sks], dtype=np.int64)
    a, b = rng.integers(0, len(texts), 4000), rng.integers(0, len(texts), 4000)
    want = lexical_many(sk[a], ln[a], sk[b], ln[b])
    got = lexical_many(sk[a], ln[a], sk[b], ln[b], below=below)
    hi, lo = np.maximum(ln[a], ln[b]), np.minimum(ln[a], ln[b])
    skipped = (hi > SKETCH_BYTES) & (lo / hi < below)
    assert 0.2 < skipped.mean() < 0.8
    np.testing.assert_array_equal(got[~skipped], want[~skipped])
    np.testing.assert_array_equal(got[skipped], (lo / hi)[skipped])
    assert np.all(got[skipped] >= want[skipped]) and np.all(got[skipped] < below)
    np.testing.assert_array_equal(got >= below, want >= below)


def test_token_sorted_sketches_give_token_sort_ratio() -> None:
    """The verification sorts each row's words once (``token_sorted``) and compares with the character ratio:
    exactly ``token_sort_ratio`` of the sketches, on real HH texts, long sketches cut inside multi-byte
    characters, non-Latin scripts, punctuation-only and empty texts."""
    rng = np.random.default_rng(11)
    texts = [t for row in hh_rows(400) for t in row]
    texts += ["", "!!!", "é" * 200, "日本語のテキスト " * 40, "Ünïcödé wörds ünd more wörds " * 12, "b a " * 80,
              "zebra Äpfel apple Zebra äpfel", texts[5] + " extra words", " ".join(reversed(texts[5].split()))]
    texts += [texts[-1]] * 2
    while len(texts) % 3:
        texts.append("pad")
    sks = [sketch(t) for t in texts]
    sk = np.array([s for s, _ in sks], dtype=f"S{SKETCH_BYTES + 1}").reshape(-1, 3)
    ln = np.array([n for _, n in sks], dtype=np.int64).reshape(-1, 3)
    ts = token_sorted(sk, chunk=7)
    assert ts.shape == sk.shape and ts.dtype == sk.dtype
    n = len(sk)
    a, b = rng.integers(0, n, 3000), rng.integers(0, n, 3000)
    fa, fb = rng.integers(0, 3, 3000), rng.integers(0, 3, 3000)
    want = lexical_many(sk[a, fa], ln[a, fa], sk[b, fb], ln[b, fb])
    got = lexical_many(ts[a, fa], ln[a, fa], ts[b, fb], ln[b, fb], scorer="ratio")
    assert np.array_equal(got, want)
    assert len(np.unique(got)) > 500
    # words shuffled: token_sort_ratio 1.0 (the sketches' character ratio is lower)
    x = np.array([[b"the cat sat on the mat"] * 3, [b"mat the on sat cat the"] * 3], dtype=sk.dtype)
    lens = np.array([22, 22])
    assert lexical_many(x[:1, 0], lens[:1], x[1:, 0], lens[1:])[0] == 1.0
    tx = token_sorted(x)
    assert lexical_many(tx[:1, 0], lens[:1], tx[1:, 0], lens[1:], scorer="ratio")[0] == 1.0
    assert lexical_many(x[:1, 0], lens[:1], x[1:, 0], lens[1:], scorer="ratio")[0] < 0.8

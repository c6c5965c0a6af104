"""Embedder: the real bundled all-MiniLM-L6-v2, its on-disk cache and its errors."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

from pairaudit.errors import ConfigError, MissingDependency, ModelError
from pairaudit.models.embedder import Embedder, bundled_embedder_dir, text_key

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TEXTS = [
    "How do I bake bread at home?",
    "What is the capital of France?",
    "Paris is the capital of France.",
    "",
    "A much longer text " * 40,
    "How do I bake bread at home?",  # repeated inside one call
    "café – naïve façade \u2603",
]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> tuple[Embedder, np.ndarray, Path]:
    cache = tmp_path_factory.mktemp("emb-cache")
    emb = Embedder(cache_dir=cache, precision="fp32")
    return emb, emb.encode(TEXTS), cache


def test_encode_shape_norm_order_and_dedup(fresh: tuple) -> None:
    emb, vecs, _ = fresh
    assert vecs.dtype == np.float32 and vecs.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vecs[0], vecs[5])
    assert emb.n_encoded == len(TEXTS) - 1 and emb.n_cached == 1
    sims = vecs @ vecs.T
    assert sims[1, 2] > sims[0, 1]  # the two France sentences are closer than bread vs France
    # order is restored: encoding one text alone gives the same vector as in the batch
    assert float(emb.encode([TEXTS[4]])[0] @ vecs[4]) == pytest.approx(1.0, abs=1e-6)
    assert emb.to_json()["id"] == "bundled:all-MiniLM-L6-v2" and emb.to_json()["precision"] == "fp32"
    assert emb.sha256 and len(emb.sha256) == 64


def test_cache_hit_in_new_instance_is_exact(fresh: tuple) -> None:
    _, vecs, cache = fresh
    again = Embedder(cache_dir=cache, precision="fp32")
    out = again.encode(list(reversed(TEXTS)))
    assert again.n_encoded == 0 and again.n_cached == len(TEXTS)
    assert again._model is None  # nothing to encode: the model is not even loaded
    assert np.array_equal(out, vecs[::-1])
    # a different precision is a different cache
    shard_dirs = list((cache / "embeddings").iterdir())
    assert len(shard_dirs) == 1 and shard_dirs[0].name.endswith("-fp32-bylen")


def test_partial_hits_and_shards(fresh: tuple) -> None:
    _, vecs, cache = fresh
    emb = Embedder(cache_dir=cache, precision="fp32")
    out = emb.encode([TEXTS[1], "a brand new sentence about gardens"])
    assert (emb.n_encoded, emb.n_cached) == (1, 1)
    assert np.array_equal(out[0], vecs[1])
    folder = next((cache / "embeddings").iterdir())
    assert not list(folder.glob("*.tmp*"))  # temp files are renamed into place
    keys = sorted(folder.glob("*.keys.npy"))
    assert len(keys) >= 2 and len(list(folder.glob("*.vecs.npy"))) == len(keys)
    # a concurrent writer's shard (appearing later) is read by the next instance
    other = Embedder(cache_dir=cache, precision="fp32")
    other.encode(["a brand new sentence about gardens"])
    assert other.n_encoded == 0


def test_no_cache_dir_encodes_every_time() -> None:
    emb = Embedder(cache_dir=None, precision="fp32")
    a = emb.encode(["one short text"])
    b = emb.encode(["one short text"])
    assert emb.n_encoded == 2 and np.array_equal(a, b)


def test_text_key_handles_lone_surrogates() -> None:
    assert len(text_key("bad \ud800 text")) == 16
    assert text_key("a") != text_key("b")


def test_bundled_folder_and_model_errors(tmp_path: Path) -> None:
    assert (bundled_embedder_dir() / "modules.json").exists()
    with pytest.raises(ModelError, match="does not exist"):
        Embedder("./no/such/folder")
    f = tmp_path / "weights.bin"
    f.write_bytes(b"x")
    with pytest.raises(ModelError, match="is a file"):
        Embedder(str(f))
    with pytest.raises(ModelError, match="hub") as exc:
        Embedder("no-such-org/no-such-embedder", cache_dir=tmp_path).encode(["x"])
    assert "--embedder" in str(exc.value)
    with pytest.raises(ModelError, match="could not load embedder"):
        Embedder(str(tmp_path), cache_dir=None).encode(["x"])  # a folder without a model
    with pytest.raises(ConfigError, match="precision"):
        Embedder(precision="int4")
    with pytest.raises(ConfigError, match="CUDA"):
        Embedder(device="cpu", precision="fp16").encode(["x"])


def test_missing_dependency_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from pairaudit.stages.near_duplicates.infos import check_deps

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "sentence_transformers" else real(name, *a))
    with pytest.raises(MissingDependency) as exc:
        check_deps()
    assert exc.value.extra == "embed" and "sentence_transformers" in str(exc.value)


def test_a_huge_text_is_embedded_from_the_prefix_the_model_reads(tmp_path: Path) -> None:
    """Issue 38 (3): a 2 MB response is cut to a prefix holding the model's first max_seq_length tokens before
    tokenizing: the same vector and token count as the whole text, without tokenizing 2 MB."""
    import random
    import time

    import numpy as np

    from pairaudit.models.embedder import Embedder

    rng = random.Random(0)
    words = "the of and to in is was for that on with as by at from it an be this are or".split()
    huge = " ".join(rng.choice(words) for _ in range(700_000))[:2_000_000]
    long_word = "x" * 9000 + " " + " ".join(rng.choice(words) for _ in range(5000))  # one [UNK] of 9000 chars
    short = "a short answer"
    emb = Embedder(cache_dir=None, precision="fp32")
    model = emb._load()
    t = time.perf_counter()
    got = emb._encode_raw([huge, long_word, short])
    took = time.perf_counter() - t
    whole = np.asarray(model.encode([huge[:200_000], long_word, short], normalize_embeddings=True,
                                    convert_to_numpy=True), np.float32)  # 200 KB already holds 256+ tokens
    assert np.allclose(got, whole, atol=1e-5)
    assert emb.token_lengths([huge, long_word, short]).tolist()[:2] == [model.max_seq_length] * 2
    prefixes = emb.model_prefixes(model, [huge, long_word, short])
    assert len(prefixes[0]) < 10_000 and prefixes[1] == long_word[:len(prefixes[1])] and prefixes[2] == short
    assert took < 10, took


@pytest.mark.parametrize("precision", ["fp32", "auto"])
def test_batches_on_threads_give_the_one_thread_vectors(precision: str) -> None:
    """On CPU the length batches run on torch's N threads one batch per thread (``_batches_run``): each text's
    vector is bit for bit the one a single-threaded encode gives, in order, and torch's thread setting is
    restored (real HH replies of many lengths, so most batches hold one or two texts)."""
    import json

    import torch

    rows = [json.loads(line) for line in (Path(__file__).parents[1] / "examples" /
                                          "hh-rlhf-helpful-base-500.jsonl").read_text().splitlines()[:40]]
    texts = [r[side].rsplit("Assistant:", 1)[-1] for r in rows for side in ("chosen", "rejected")]
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = Embedder(cache_dir=None, precision=precision).encode(texts)
        torch.set_num_threads(2)
        emb = Embedder(cache_dir=None, precision=precision)
        two = emb.encode(texts)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert len({len(t) for t in texts}) > 30 and one.shape == (len(texts), 384)
    assert np.array_equal(one, two)

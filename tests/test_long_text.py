"""Issue 23: a very long text is tokenized in pieces cut where the pre-tokenizer certainly splits, and
its ids kept compact (TokenIds): the ids are exactly the whole text's, and a scan finds the same."""

from __future__ import annotations

import json
import random
from types import SimpleNamespace

import polars as pl
import pytest
from conftest import EXAMPLE, HH, write_jsonl

import pairaudit
from pairaudit.models.tokenizer import load_tokenizer
from pairaudit.trainer import long_text
from pairaudit.trainer.joint_tokens import JointSplitter
from pairaudit.trainer.long_text import TokenIds


@pytest.fixture(scope="module")
def backend() -> object:
    return load_tokenizer(None)[0].backend_tokenizer


def test_token_ids_behave_like_the_list_they_replace() -> None:
    a = TokenIds([5, 6, 7, 8])
    assert a == [5, 6, 7, 8] and [5, 6, 7, 8] == a and a != [5, 6, 7] and (5, 6, 7, 8) == a
    assert TokenIds() == [] and [] == TokenIds() and TokenIds() != [0]
    assert isinstance(a[1:3], TokenIds) and a[1:3] == [6, 7] and a[-1] == 8 and a[::2] == [5, 7]
    assert [1] + a == [1, 5, 6, 7, 8] and isinstance([1] + a, TokenIds)
    assert a + [9] == [5, 6, 7, 8, 9] and a + a == [5, 6, 7, 8] * 2 and a == TokenIds([5, 6, 7, 8])
    assert len(a) == 4 and list(a) == [5, 6, 7, 8] and 6 in a and a.itemsize == 4
    assert a != "abcd" and a != 5
    with pytest.raises(TypeError):
        hash(a)


def _texts(n: int) -> list[str]:
    """Real HH turns and hostile junctions (added tokens, contractions, digits, spaces runs, unicode)."""
    rows = [json.loads(x) for x in HH.read_text(encoding="utf-8").splitlines()[:n]]
    hostile = ["a <|im_end|> b", "x<|endoftext|> y", "it's 12 345 ok", "two  spaces   three", "naïve café 🙂 ok",
               "tab\there", "line\n\nbreak", "end. Next", "<|im_start|>user hi<|im_end|>", "!! ?? ... ,,", "'ll 've"]
    return [r["chosen"] for r in rows] + [r["rejected"] for r in rows] + hostile


@pytest.mark.parametrize("special", [False, True])
def test_pieces_give_the_ids_of_the_whole_text(backend: object, special: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    splitter = JointSplitter.for_backend(backend)
    assert splitter is not None
    rng = random.Random(0)
    texts = _texts(600)
    long = ["".join(rng.choice(texts) for _ in range(400)) for _ in range(4)]  # ~200k chars each
    monkeypatch.setattr(long_text, "PIECE_CHARS", 40)  # a cut about every 40 characters: thousands per text
    monkeypatch.setattr(long_text, "LONG_CHARS", 0)
    for text in long + texts[:300]:
        got = long_text.encode(backend, [text], special, splitter)[0]
        assert isinstance(got, TokenIds)
        want = backend.encode(text, add_special_tokens=special).ids
        assert got == want, (len(got), len(want), text[:200])
    assert len(long_text.cuts(long[0], splitter)) > 1000


def test_a_tokenizer_it_cannot_cut_encodes_long_texts_whole(backend: object) -> None:
    text = "word " * 20_000
    got = long_text.encode(backend, [text, "short"], False, None)
    assert isinstance(got[0], TokenIds) and got[0] == backend.encode(text, add_special_tokens=False).ids
    assert isinstance(got[1], list)


def test_a_scan_with_a_long_response_finds_the_same(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [json.loads(x) for x in EXAMPLE.read_text(encoding="utf-8").splitlines()[:40]]
    body = " ".join(r["chosen"] for r in rows) * 3  # ~100k characters of real text
    rows[7]["chosen"] += body
    rows[9]["rejected"] = rows[9]["chosen"] = rows[9]["chosen"] + body  # two long identical sides
    rows[11]["rejected"] += body[:-7]
    rows[11]["chosen"] += body  # two long sides that differ only at the end
    rows[13]["chosen"] += ("ha" * 40 + " ") * 2000  # a long loop
    src = write_jsonl(tmp_path / "p.jsonl", rows)
    outs = {}
    for name, limit in (("whole", 10 ** 9), ("pieces", 1 << 12)):
        monkeypatch.setattr(long_text, "LONG_CHARS", limit)
        audit = pairaudit.scan(src, tmp_path / name, skip=["near_duplicate_pair", "likely_flipped"])
        outs[name] = (audit.findings, pl.read_parquet(tmp_path / name / "scores.parquet"))
    assert outs["whole"][0].equals(outs["pieces"][0]) and outs["whole"][1].equals(outs["pieces"][1])
    found = outs["pieces"][0]
    assert set(found.filter(pl.col("row") == 9)["check"]) >= {"identical_pair"}
    assert "degenerate_repetition" in set(found.filter(pl.col("row") == 13)["check"])


def _samples() -> list[str]:
    rng = random.Random(1)
    texts = _texts(300)
    loops = ["I'm sorry. " * 300, "ha " * 2000, "line one\nline two\n" * 400 + "end", ("word " * 7 + "\n") * 300,
             "Straße ΣΊΣΥΦΟΣ ǅ " * 500, "\u00a0\u2028 x \x1c y \t\r\n z " * 300, "", "one", "a b a b a b"]
    mixed = [" ".join(rng.choice(texts) for _ in range(60)) for _ in range(6)]
    return texts[:200] + loops + mixed


def test_long_text_measures_equal_the_ordinary_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    from rapidfuzz import fuzz

    from pairaudit.checks import long_text as lt
    from pairaudit.checks.repetition import _WORD, repetition_metrics

    monkeypatch.setattr(lt, "SMALL_PIECE", 50)  # many pieces

    for t in _samples():
        assert lt.repetition_metrics(t, _WORD) == repetition_metrics(t), t[:100]
        assert lt.squash(t) == " ".join(t.split())
        for other in (t[: len(t) // 3], "No 5, the answer", t[::-1][:300], ""):
            assert lt.ratio(t, other) == fuzz.ratio(t, other) == lt.ratio(other, t), (t[:80], other[:80])
        other = t.replace("a", "b", 1)
        assert lt.same_words(t, other) == (t.split() == other.split())
        assert lt.same_words(t, " " + t + "\n") and not lt.same_words(t, t + " extra")


@pytest.mark.parametrize("long_side", ["chosen", "both"])
def test_checks_on_long_texts_find_what_they_find_on_short_ones(monkeypatch: pytest.MonkeyPatch, long_side: str) -> None:
    """The same pairs through the ordinary and the long-text code (LONG_CHARS lowered): same findings."""
    from pairaudit.checks import identical, repetition
    from pairaudit.datatypes import Pair

    texts = _samples()
    pairs = [Pair(row=i, format="standard", prompt="q", chosen=t, rejected=texts[(i * 7) % len(texts)]
                  if long_side == "chosen" else t.replace(" the ", " a ", 1)) for i, t in enumerate(texts)]
    pairs += [Pair(row=len(pairs), format="standard", prompt="q", chosen=" ".join(["same words here"] * 50),
                   rejected=" ".join(["same words here"] * 50) + " ok")]

    def run() -> list[tuple]:
        out: list = []
        found: list = []
        near = identical.NearIdenticalPair({"min_char_ratio": 0.97, "max_token_edits": 3, "min_words": 3,
                                           "min_cosine": 0.98}, None)
        rep = repetition.DegenerateRepetition(dict(repetition.DEFAULTS), None)
        same = identical.IdenticalPair({}, None)
        for p in pairs:
            enc = SimpleNamespace(chosen_ids=[ord(c) for c in p.chosen[-40:]], rejected_ids=[ord(c) for c in p.rejected[-40:]])
            out.append((near.check(p, enc, found), rep.check(p, None, found), same.check(p, None, found)))
        return out + [(f.row, f.check, f.field, f.score, f.detail) for f in found]

    ordinary = run()
    for mod in (identical, repetition):
        monkeypatch.setattr(mod, "LONG_CHARS", 1)
    assert run() == ordinary


def test_hashes_and_report_snippets_of_long_texts_are_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    from pairaudit import hashing
    from pairaudit.report import table

    monkeypatch.setattr(hashing, "PIECE", 7)
    for t in _samples() + ["  \n x  ", "\u2003lead and trail\u00a0\n", "   ", "\ud800 lone"]:
        want = hashlib.blake2b(t.strip().encode("utf-8", "surrogatepass"), digest_size=16).digest()
        assert hashing._digest(t) == want
        for limit in (5, 40, 200):
            squashed = " ".join(t.split())
            assert table._short(t, limit) == (squashed if len(squashed) <= limit else squashed[:limit - 1] + "…")
    assert table._short("a" + " " * 5000 + "b" * 3000, 10) == "a " + "b" * 7 + "…"


def test_the_near_duplicate_normalisation_of_long_texts_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    from pairaudit.stages.near_duplicates import match

    monkeypatch.setattr(match, "LONG_PIECE", 9)
    punct = re.compile(r"[^\w\s]+")
    for t in _samples() + ["... !!", "a,b;c  d.", "  ", "x\u2028y\u00a0z—w"]:
        assert match.normalise(t) == " ".join(punct.sub(" ", t.casefold()).split()), t[:80]


def test_the_flip_length_features_equal_the_per_text_loop() -> None:
    """``length_features`` counts every text, then takes the logs in one numpy call per measure: the values of
    the per-text loop it replaced, bit for bit (Unicode whitespace, separators, empty texts, long texts)."""
    import numpy as np

    from pairaudit.stages.flips import features

    def per_text(texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), 4))
        for i, t in enumerate(texts):
            last = features._last_non_space(t)
            out[i] = (np.log1p(len(t)), np.log1p(features._n_words(t)), np.log1p(t.count("\n")),
                      float(last is not None and last in ".!?)]`\"'*"))
        return out

    texts = _samples() + ["end. ", "x)\n\n", "   ", "", "a\u3000b\u2029", "q?\x1c", "*", "w" * 70_000 + " end!"]
    other = texts[::-1]
    got = features.length_features(texts, other)
    assert got.dtype == np.float64 and got.tobytes() == (per_text(texts) - per_text(other)).tobytes()
    assert features.length_features([], []).shape == (0, 4)


def test_the_flip_length_features_of_long_texts_are_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from pairaudit.stages.flips import features

    texts = _samples() + ["end. ", "x)\n\n", "   ", ""]
    want = features.length_features(texts, texts[::-1])
    monkeypatch.setattr(features, "LONG_CHARS", 0)
    assert np.array_equal(features.length_features(texts, texts[::-1]), want)
    assert [features._n_words(t) for t in texts] == [len(t.split()) for t in texts]

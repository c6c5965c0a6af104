"""Joint tokenization with each prompt tokenized once gives the same ids as tokenizing the whole texts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pairaudit.datatypes import Pair
from pairaudit.io.formats import detect_format, normalise
from pairaudit.models.tokenizer import load_tokenizer
from pairaudit.trainer.joint_tokens import JointSplitter
from pairaudit.trainer.tokenizer import DPOTokenizer

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "hh-rlhf-helpful-base-500.jsonl"
EDGES = [  # (prompt, chosen, rejected): junctions that merge, straddle added tokens, or are empty
    ("\n\nHuman: hi\n\nAssistant:", " Hello there.", " Go away."),
    ("\n\nHuman: hi\n\nAssistant: I", "'m fine", "’m fine"),
    ("Q: it", "'s", "'ll do"),
    ("Question: what is 12", "34?", ".5"),
    ("Say <", "|endoftext|> now", "|im_end|>"),
    ("a <|im_end|", ">b", "> c"),
    ("text ending in space ", "word", " word"),
    ("ends with newline\n", "\nnext", "next"),
    ("tabs\t", "\tx", "x"),
    ("punct run!!", "!!", "?"),
    ("", "only a completion", "other"),
    ("no completion:", "", " x"),
    ("naïve café:", " déjà vu", "—dash"),
    ("emoji 🙂:", "🙂", " ok"),
    ("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", "hello<|im_end|>", "bye"),
    ("x" * 5000 + ": y", "z", " z"),
    ("digits 2024:", "2025", " 2026"),
]


@pytest.fixture(scope="module")
def tok() -> object:
    return load_tokenizer(None)


def _pairs(rows: list[dict]) -> list[Pair]:
    fmt = detect_format(rows[0], {})
    return [normalise(i, r, fmt, {}) for i, r in enumerate(rows)]


@pytest.mark.parametrize("profile", ["trl-1.14.2", "trl-1.9", "trl-0.29"])
def test_once_matches_whole_texts(tok: tuple, profile: str) -> None:
    dtok = DPOTokenizer(*tok, trainer=profile)
    assert dtok.splitter is not None  # the bundled byte-level BPE tokenizer is covered
    rows = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()[:300]]
    rows += [{"prompt": p, "chosen": c, "rejected": r} for p, c, r in EDGES]
    rendered = [dtok.render(p) for p in _pairs(rows[:300])] + [dtok.render(p) for p in _pairs(rows[300:])]
    whole = dtok.encode_rendered(rendered, once=False)
    once = dtok.encode_rendered(rendered, once=True)
    for k, (a, b) in enumerate(zip(whole, once)):
        assert a == b, (k, rows[k])


def test_texts_repeated_across_batches_keep_their_ids(tok: tuple) -> None:
    """Responses paired again with other prompts in later batches (as in data with several pairs per
    prompt): their ids come from the splitter's memo and equal the whole-text ids; a tiny memo that empties
    itself between batches gives the same."""
    hh = _pairs([json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()[:120]])
    rows = [{"chosen": p.prompt + p.chosen, "rejected": p.prompt + p.rejected} for p in hh]  # HH's own form
    shifted = [{"chosen": a.prompt + b.chosen, "rejected": a.prompt + b.rejected} for a, b in zip(hh, hh[1:] + hh[:1])]
    for memo_size in (8_192, 50):
        dtok = DPOTokenizer(*tok, trainer="trl-1.14.2")
        dtok.splitter.memo.max_texts = memo_size
        for batch in (rows, shifted, rows):
            rendered = [dtok.render(p) for p in _pairs(batch)]
            assert dtok.encode_rendered(rendered, once=True) == dtok.encode_rendered(rendered, once=False)
        assert dtok.splitter.memo.hits > len(rows)


def test_text_ids_from_the_memo_equal_tokenizing_again(tok: tuple) -> None:
    """``DPOTokenizer.text_ids`` (the prompts ``prefix_pair`` and ``split_word`` tokenize again, remembered):
    with and without special tokens, on HH prompts as the text and as TRL's ``extract_prompt`` cut them,
    UltraFeedback prompts and the edge cases, the remembered ids equal a fresh ``encode_texts``, also after a
    tiny memo emptied itself."""
    hh = _pairs([json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()[:150]])
    uf = Path(__file__).resolve().parents[2] / "shared" / "data" / "ultrafeedback-1k" / "train_clean.jsonl"
    texts = [p.prompt for p in hh] + [p[0] for p in EDGES] + ["", "x" * 70_000]
    dtok = DPOTokenizer(*tok, trainer="trl-1.14.2")
    texts += [dtok.render(p)[0] for p in hh]
    if uf.exists():
        texts += [json.loads(line)["prompt"] for line in uf.read_text(encoding="utf-8").splitlines()[:100]]
    for memo_size in (4_096, 7):
        dtok = DPOTokenizer(*tok, trainer="trl-1.14.2")
        for special in (False, True):
            dtok._text_memo[special].max_texts = memo_size
            for t in texts + texts[::-1]:
                assert dtok.text_ids(t, special) == dtok.encode_texts([t], special)[0], (special, t[:80])
            assert dtok._text_memo[special].hits > 0


def test_split_point_is_conservative(tok: tuple) -> None:
    sp = JointSplitter.for_backend(DPOTokenizer(*tok).tok.backend_tokenizer)
    assert sp is not None
    assert sp.split_point("\n\nAssistant:", (" a", " b")) == len("\n\nAssistant:")
    assert sp.split_point("Assistant: I", ("'m", "t")) == len("Assistant:")  # before the merged word
    assert sp.split_point("no punctuation here", ("x",)) == 0
    assert sp.split_point("a <", ("|endoftext|>",)) == 0  # an added token spans the junction


def test_uncovered_tokenizer_is_left_to_whole_texts() -> None:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    t = Tokenizer(models.BPE())
    t.normalizer = normalizers.Lowercase()
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    assert JointSplitter.for_backend(t) is None
    t = Tokenizer(models.BPE())
    t.pre_tokenizer = pre_tokenizers.Metaspace()
    assert JointSplitter.for_backend(t) is None

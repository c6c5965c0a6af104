"""Token ids of very long texts, without the tokenizer's working memory for the whole text at once.

A fast tokenizer keeps several hundred bytes per character while it encodes one text (normalized string
alignments, pre-tokens, the encoding's tokens, offsets and masks: a 5 MB answer took ~700 MB), and a
Python list of ids costs ~36 bytes a token. A text of at least :data:`LONG_CHARS` characters is therefore
encoded in pieces of about :data:`PIECE_CHARS`, cut only where the tokenizer's pre-tokenizer certainly
splits (so the ids are exactly those of the whole text), and its ids are kept as :class:`TokenIds`
(4 bytes a token). The cut needs the byte-level BPE pipeline that
:class:`~pairaudit.trainer.joint_tokens.JointSplitter` accepts (GPT-2's pre-tokenization regex, no normalizer,
nothing added after the text): a non-space ASCII character followed by a space ends a pre-token whatever
comes before it (the regex has no look-behind, and a word, number or punctuation run stops at a space),
unless an added token spans the cut. Other tokenizers encode long texts whole (their ids are still kept
compact). ``tests/test_long_text.py`` compares both ways on real rows.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Sequence
from typing import Any

LONG_CHARS = 1 << 16  #: texts at least this long are encoded in pieces and kept as TokenIds
PIECE_CHARS = 1 << 15  #: about how long one piece is
GROUP = 4  #: pieces encoded in one batch call
_CUT = re.compile(r"[!-~](?= )")  # the position after it: a non-space ASCII character, then a space


class TokenIds(array):
    """Token ids, 4 bytes each, that behave like the list of ints they replace where pairaudit uses them:
    slices are TokenIds, ``+`` works with lists on either side, and ``==`` compares with any sequence of
    ints (a list equal to it element by element is equal)."""

    def __new__(cls, ids: Iterable[int] = ()) -> TokenIds:
        return super().__new__(cls, "I", ids)

    def __getitem__(self, key: Any) -> Any:
        item = super().__getitem__(key)
        return TokenIds(item) if isinstance(key, slice) else item

    def __add__(self, other: Iterable[int]) -> TokenIds:  # type: ignore[override]
        out = TokenIds(self)
        out.extend(other)
        return out

    def __radd__(self, other: Iterable[int]) -> TokenIds:
        out = TokenIds(other)
        out.extend(self)
        return out

    def __eq__(self, other: object) -> bool:
        if isinstance(other, array):
            return array.__eq__(self, other)
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TokenIds({len(self)} ids)"


def cuts(text: str, splitter: Any) -> list[int]:
    """Positions of ``text`` (0 and ``len(text)`` included) about :data:`PIECE_CHARS` apart where its
    pre-tokens certainly split: ``ids(text) == sum(ids(piece))``."""
    out, pos, n = [0], 0, splitter._longest
    while len(text) - pos > PIECE_CHARS:
        m = _CUT.search(text, pos + PIECE_CHARS)
        while m is not None and splitter._spans(text[max(0, m.end() - n):m.end()], text[m.end():m.end() + n]):
            m = _CUT.search(text, m.end())
        if m is None or len(text) - m.end() < PIECE_CHARS // 4:
            break
        pos = m.end()
        out.append(pos)
    out.append(len(text))
    return out


def encode(backend: Any, texts: list[str], add_special_tokens: bool, splitter: Any) -> list[Any]:
    """Ids of ``texts`` as ``backend.encode_batch`` gives them: lists for ordinary texts (one batch call, as
    before), :class:`TokenIds` for texts of :data:`LONG_CHARS` characters or more (in pieces when
    ``splitter`` covers the tokenizer, else whole)."""
    batch = getattr(backend, "encode_batch_fast", None) or backend.encode_batch
    long = {i for i, t in enumerate(texts) if len(t) >= LONG_CHARS}
    short = [i for i in range(len(texts)) if i not in long]
    out: list[Any] = [None] * len(texts)
    if short:
        for i, e in zip(short, batch([texts[i] for i in short], add_special_tokens=add_special_tokens)):
            out[i] = e.ids
    for i in sorted(long):
        out[i] = _encode_long(batch, texts[i], add_special_tokens, splitter)
    return out


def _encode_long(batch: Any, text: str, special: bool, splitter: Any) -> TokenIds:
    if splitter is None:
        return TokenIds(batch([text], add_special_tokens=special)[0].ids)
    at = cuts(text, splitter)
    ids = TokenIds(splitter.prefix if special else ())  # what the post-processor puts before a text (BOS)
    for k in range(0, len(at) - 1, GROUP):
        pieces = [text[at[j]:at[j + 1]] for j in range(k, min(k + GROUP, len(at) - 1))]
        for e in batch(pieces, add_special_tokens=False):
            ids.extend(e.ids)
    return ids

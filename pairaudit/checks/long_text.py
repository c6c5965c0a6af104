"""The text measures of the per-pair checks for very long texts (at least
:data:`~pairaudit.trainer.long_text.LONG_CHARS` characters), computed without Python objects per word.

A list of a text's words costs ~60 bytes a word and every n-gram string as much again, so a 5 MB answer
took ~370 MB in ``degenerate_repetition`` alone. Here words are interned to 4-byte ids, n-grams are ids
found by sorting (numpy), lines and bytes are read a piece at a time. Every function returns exactly what
its ordinary counterpart returns (``tests/test_long_text.py`` compares them); the ordinary ones still serve
every shorter text.
"""

from __future__ import annotations

import re
import zlib
from array import array
from collections.abc import Iterator
from itertools import zip_longest
from typing import Any

import numpy as np

_SPACE = re.compile(r"\s+")
_RUN_START = re.compile(r"\S\s")
NON_SPACE = re.compile(r"\S+")  #: a word as ``str.split`` sees it
PIECE = 1 << 20  # characters read at a time (lines, bytes)
SMALL_PIECE = 1 << 16  # characters squashed at a time (re.sub keeps an object per match)
SHORT_SIDE = 4096  # a side shorter than this is compared with a long one here (ratio), not by rapidfuzz


def squash(text: str) -> str:
    """``" ".join(text.split())`` without the list of words: whitespace runs replaced by one space, a piece at
    a time, each piece cut before a whitespace character that follows a non-whitespace one (so no run is
    cut); ``re``'s ``\\s`` is ``str.isspace``."""
    out, pos = [], 0
    while pos < len(text):
        m = _RUN_START.search(text, pos + SMALL_PIECE) if len(text) - pos > SMALL_PIECE else None
        end = m.start() + 1 if m else len(text)
        out.append(_SPACE.sub(" ", text[pos:end]))
        pos = end
    return "".join(out).strip()


def ratio(a: str, b: str) -> float:
    """``rapidfuzz.fuzz.ratio(a, b)``: 100 x (1 - Indel distance / (len(a) + len(b))). rapidfuzz keeps ~32
    bytes per character of the longer text; with a short side (< :data:`SHORT_SIDE` characters) the
    longest common subsequence is counted here instead (Hyyro's bit-parallel recurrence over the short
    side's bits, the long text read once), in constant memory."""
    from rapidfuzz import fuzz

    if len(a) < len(b):
        a, b = b, a
    if len(b) >= SHORT_SIDE or not b:
        return fuzz.ratio(a, b)
    masks: dict[str, int] = {}
    for i, c in enumerate(b):
        masks[c] = masks.get(c, 0) | (1 << i)
    full = (1 << len(b)) - 1
    v = full
    get = masks.get
    for c in a:
        u = v & get(c, 0)
        v = ((v + u) | (v - u)) & full
    lcs = len(b) - bin(v).count("1")
    total = len(a) + len(b)
    return 100 * (1.0 - (total - 2 * lcs) / total)


def same_words(a: str, b: str) -> bool:
    """``a.split() == b.split()``, word by word, without the lists."""
    return all(x is not None and y is not None and x.group() == y.group()
               for x, y in zip_longest(NON_SPACE.finditer(a), NON_SPACE.finditer(b)))


def count(pattern: re.Pattern[str], text: str) -> int:
    return sum(1 for _ in pattern.finditer(text))


def word_ids(pattern: re.Pattern[str], texts: list[str]) -> tuple[list[array], list[array], int]:
    """For each text: the ids of its words (``pattern`` matches in ``text.casefold()``; equal words, equal
    ids across the texts) and their lengths in characters; and the number of distinct words."""
    vocab: dict[str, int] = {}
    ids_out, lens_out = [], []
    for text in texts:
        ids, lens = array("I"), array("I")
        for m in pattern.finditer(text.casefold()):
            w = m.group()
            i = vocab.get(w)
            if i is None:
                i = vocab[w] = len(vocab)
            ids.append(i)
            lens.append(len(w))
        ids_out.append(ids)
        lens_out.append(lens)
    return ids_out, lens_out, len(vocab)


def _grams(ids: np.ndarray, n_max: int, top: int) -> Iterator[tuple[int, np.ndarray, int, int, int]]:
    """For n = 2..``n_max``: (n, the n-gram ids by position, numbered in the order of their sorted keys, the
    number of distinct n-grams, and for n <= ``top`` the largest count of one n-gram and the first position
    of the first n-gram, in order of first occurrence, with that count; else 0, 0). One n-gram array is
    held at a time."""
    n_words = int(ids.max()) + 1 if len(ids) else 1
    gids = ids.astype(np.uint32)
    for n in range(2, n_max + 1):
        if len(ids) < n:
            return
        key = gids[: len(ids) - n + 1].astype(np.uint64)
        del gids
        key *= np.uint64(n_words)
        np.add(key, ids[n - 1:], out=key, casting="unsafe")
        perm = np.argsort(key, kind="stable").astype(np.uint32)  # stable: a group's first member comes first
        srt = key[perm]
        del key
        new = np.empty(len(srt), dtype=bool)
        new[:1] = True
        np.not_equal(srt[1:], srt[:-1], out=new[1:])
        del srt
        gids = np.empty(len(perm), dtype=np.uint32)
        gids[perm] = np.cumsum(new, dtype=np.uint32) - 1
        best = first = 0
        if n <= top:
            starts = np.flatnonzero(new).astype(np.uint32)
            counts = np.diff(starts, append=np.uint32(len(perm)))
            best = int(counts.max())
            first = int(perm[starts[counts == best]].min())
            del starts, counts
        distinct = int(np.count_nonzero(new))
        del perm, new
        yield n, gids, distinct, best, first


def repetition_metrics(text: str, pattern: re.Pattern[str]) -> dict[str, float]:
    """``checks.repetition.repetition_metrics(text)``, in bounded memory (see the module docstring)."""
    (ids_a,), (lens_a,), _ = word_ids(pattern, [text])
    ids, lens = np.frombuffer(ids_a, dtype=np.uint32), memoryview(lens_a)
    n = len(ids)
    n_chars = sum(lens_a) + max(0, n - 1)
    out: dict[str, float] = {"n_words": float(n)}
    for k in (2, 3, 4):
        out[f"top_{k}gram"] = 0.0
    out["dup_5gram"] = out["dup_10gram"] = 0.0
    for k, gids, distinct, best, f in _grams(ids, 10, top=4):
        # top: Counter.most_common, the first n-gram (in order of first occurrence) with the largest count
        if k <= 4 and n_chars and best > 1:
            out[f"top_{k}gram"] = min(1.0, (sum(lens[f:f + k]) + k - 1) * best / n_chars)
        if k in (5, 10) and n_chars:
            out[f"dup_{k}gram"] = min(1.0, _dup_chars(memoryview(gids), lens, k, distinct) / n_chars)
    out["dup_lines"] = dup_line_fraction(text)
    out["compression"], out["n_bytes"] = _compression(text)
    return out


def _dup_chars(gids: Any, lens: Any, n: int, distinct: int) -> int:
    """Characters in n-grams seen before, a repeat skipped whole (``repetition.dup_ngram_fraction``)."""
    seen = bytearray(distinct)
    dup, i, last = 0, 0, len(gids) - 1
    while i <= last:
        g = gids[i]
        if seen[g]:
            dup += sum(lens[i:i + n]) + n - 1
            i += n
        else:
            seen[g] = 1
            i += 1
    return dup


def _pieces(text: str, sep: str) -> Iterator[str]:
    """``text`` in pieces of about :data:`PIECE` characters, each cut just after ``sep``."""
    pos = 0
    while pos < len(text):
        end = text.find(sep, pos + PIECE) if len(text) - pos > PIECE else -1
        end = len(text) if end < 0 else end + len(sep)
        yield text[pos:end]
        pos = end


_LIST_MARKER = re.compile(r"^(?:\d{1,3}[.)]|[-*\u2022+])\s+")


def line_key(line: str) -> str:
    """A line as ``dup_lines`` compares it: stripped, without a leading list marker ("3. ", "4) ", "- ", "* ",
    "\u2022 "), so a numbered list that repeats its items ("1. The Godfather", "2. The Godfather") repeats lines.

    Args:
        line: one line of a response.

    Returns:
        The line's comparison key.

    Example:
        >>> line_key("  12. The Godfather ")
        'The Godfather'
    """
    return _LIST_MARKER.sub("", line.strip(), count=1)


def dup_line_fraction(text: str) -> float:
    """``repetition.dup_line_fraction``: pieces cut after a newline split into the same lines."""
    total, distinct = 0, set()
    for piece in _pieces(text, "\n"):
        for ln in piece.splitlines():
            if ln.strip():
                total += 1
                distinct.add(line_key(ln))
    return 0.0 if total < 4 else (total - len(distinct)) / total


def _compression(text: str) -> tuple[float, float]:
    """(UTF-8 bytes / zlib level-9 bytes, UTF-8 bytes), fed to zlib a piece at a time (same stream)."""
    z = zlib.compressobj(9)
    raw = packed = 0
    for piece in _pieces(text, " "):
        data = piece.encode("utf-8", "surrogatepass")
        raw += len(data)
        packed += len(z.compress(data))
    packed += len(z.flush())
    return raw / max(1, packed), float(raw)

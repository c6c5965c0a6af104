"""Content hashes of pairs (exact duplicates, caches, review decisions)."""

from __future__ import annotations

import hashlib
import json

from pairaudit.datatypes import Pair

PIECE = 1 << 20  # characters hashed at a time: a long text is never copied whole


def _side(pair: Pair, side: str) -> str:
    msgs = getattr(pair, f"{side}_messages")
    if msgs is not None:
        return json.dumps(msgs, ensure_ascii=False, sort_keys=True)
    if pair.ids is not None:
        return json.dumps(pair.ids.get(f"{side}_input_ids"))
    return getattr(pair, side) or ""


def _digest(text: str) -> bytes:
    """blake2b-128 of ``text.strip()`` in UTF-8, read a piece at a time."""
    start, end = 0, len(text)
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    h = hashlib.blake2b(digest_size=16)
    for i in range(start, end, PIECE):
        h.update(text[i:min(i + PIECE, end)].encode("utf-8", "surrogatepass"))
    return h.digest()


def side_digests(pair: Pair) -> tuple[bytes, bytes, bytes]:
    """16-byte blake2b digests of the prompt, chosen and rejected (texts stripped of outer whitespace;
    cached on the pair: the metrics and the exact-duplicate stage both need them)."""
    if pair.digests is None:
        pair.digests = tuple(_digest(_side(pair, s)) for s in ("prompt", "chosen", "rejected"))  # type: ignore[assignment]
    return pair.digests  # type: ignore[return-value]


def pair_hash(digests: tuple[bytes, bytes, bytes]) -> str:
    """Hex id of the whole (prompt, chosen, rejected) triple, in order."""
    return hashlib.blake2b(b"".join(digests), digest_size=16).hexdigest()


def _key64(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def ordered_key(digests: tuple[bytes, bytes, bytes]) -> int:
    """64-bit key of (prompt, chosen, rejected) in order (exact duplicates)."""
    return _key64(b"".join(digests))


def unordered_key(digests: tuple[bytes, bytes, bytes]) -> tuple[int, bool]:
    """64-bit key of (prompt, {chosen, rejected}): the same for a pair and its swap (contradictions, split
    leakage); and whether this row is the swapped one of the two orders (chosen's digest sorts after)."""
    p, c, r = digests
    lo, hi = (c, r) if c <= r else (r, c)
    return _key64(p + lo + hi), c > r

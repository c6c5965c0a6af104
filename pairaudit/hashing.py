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

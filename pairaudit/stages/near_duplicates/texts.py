"""Compact per-row text data of the near-duplicate stage: 64-bit digests of texts, and the three texts of a
row zlib-compressed (hybrid/static modes keep them for the transformer's second look at the candidates)."""

from __future__ import annotations

import hashlib
import zlib
from typing import Any

from pairaudit.stages.spill import Blobs


def text_hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                          "little", signed=True)


def blob_bytes(blobs: Any) -> int:
    return int(blobs.nbytes) if isinstance(blobs, Blobs) else int(sum(len(b) for b in blobs))


def pack(texts: list[str]) -> bytes:
    return zlib.compress("\x00".join(texts).encode("utf-8", "surrogatepass"), 6)


def unpack(blob: bytes) -> list[str]:
    return zlib.decompress(blob).decode("utf-8", "surrogatepass").split("\x00")

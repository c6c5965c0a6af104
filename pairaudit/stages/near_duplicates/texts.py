"""Compact per-row text data of the near-duplicate stage: 64-bit digests of texts, and the three texts of a
row, each zlib-compressed once per process (hybrid/static modes keep them for the transformer's second look at
the candidates)."""

from __future__ import annotations

import hashlib
import zlib
from typing import Any

from pairaudit.stages.spill import Blobs
from pairaudit.trainer.long_text import LONG_CHARS
from pairaudit.trainer.memo import TextMemo


def text_hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                          "little", signed=True)


def blob_bytes(blobs: Any) -> int:
    return int(blobs.nbytes) if isinstance(blobs, Blobs) else int(sum(len(b) for b in blobs))


def pack(texts: list[str], memo: TextMemo[bytes] | None = None) -> bytes:
    """The texts of a row in one blob: each text zlib-compressed on its own, behind its 4-byte length, so that a
    text repeated across rows (a prompt with several response pairs) is compressed once per ``memo`` (a text of
    ``LONG_CHARS`` or more each time: the memo holds no large text).

    Args:
        texts: the row's texts (prompt, chosen, rejected).
        memo: compressed texts already made (one per process, spanning batches); None: none remembered.

    Returns:
        The blob; ``unpack(pack(texts)) == texts``.

    Example:
        >>> unpack(pack(["Hi?", "Hello.", ""]))
        ['Hi?', 'Hello.', '']
    """
    pieces = [_squeeze(t) if memo is None else memo.get(t, _squeeze, LONG_CHARS) for t in texts]
    return b"".join(len(z).to_bytes(4, "little") + z for z in pieces)


def _squeeze(text: str) -> bytes:
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 6)


def unpack(blob: bytes) -> list[str]:
    """The texts ``pack`` put in ``blob``, in order."""
    out, at = [], 0
    view = memoryview(blob)
    while at < len(blob):
        n = int.from_bytes(view[at:at + 4], "little")
        out.append(zlib.decompress(view[at + 4:at + 4 + n]).decode("utf-8", "surrogatepass"))
        at += 4 + n
    return out

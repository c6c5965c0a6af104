"""The embedding view of ``near_identical_pair``: chosen-vs-rejected cosine >= ``min_cosine``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from pairaudit.checks.identical import NearIdenticalPair, squash, word_difference
from pairaudit.checks.prompt_kind import text_short_answer_cue
from pairaudit.datatypes import Finding
from pairaudit.stages.near_duplicates.search import rowdot
from pairaudit.stages.near_duplicates.texts import unpack

if TYPE_CHECKING:
    from pairaudit.config import Context


def near_identical_rows(ctx: Context, pair_raw: np.ndarray, mode: str) -> np.ndarray:
    """Rows proposed for the check (none when it is off): static cosine >= 0.9 in hybrid mode (the transformer
    decides), else >= min_cosine."""
    cfg, info = ctx.config, NearIdenticalPair.info
    if info.name in cfg.skip or (cfg.only is not None and info.name not in cfg.only):
        return np.empty(0, dtype=np.int64)
    thr = float(info.params(ctx.params)["min_cosine"])
    return np.flatnonzero(pair_raw >= (0.9 if mode == "hybrid" else thr))


def _detail(cos: float, thr: float, texts: list[str] | None) -> str | None:
    """The finding's detail, with what differs in words (the pair check's reading); None when the differing
    words are the answer itself (a number, any word of a short-answer prompt): "$6.50" vs "$47.50" embed
    alike, and are a real preference."""
    detail = f"chosen-vs-rejected embedding cosine {cos:.4f} >= {thr}"
    if texts is None:
        return detail
    prompt, chosen, rejected = texts
    what = word_difference(squash(chosen), squash(rejected), text_short_answer_cue(prompt))
    return None if what is None else f"{detail}; {what}"


def near_identical_findings(ctx: Context, rows: np.ndarray, pair_raw: np.ndarray, mode: str,
                            transformer_vectors: Callable[[np.ndarray], tuple[Any, Any, Any]],
                            blobs: Any = None) -> list[Finding]:
    """Rows whose chosen-vs-rejected cosine (``pair_raw``, this mode's model) is >= min_cosine. Both engines
    call it (the local stage on all rows, the Ray engine's ``cells.shard_result`` on a shard's).

    Args:
        ctx: the scan's context (parameters, skip / only).
        rows: the row numbers of the positions.
        pair_raw: each position's chosen-vs-rejected cosine.
        mode: the deciding mode; in hybrid mode the static cosine (>= 0.9) only proposes rows
            (``near_identical_rows``) and the transformer's cosine decides.
        transformer_vectors: P, C, R transformer vectors of the proposed positions (hybrid mode).
        blobs: the stage's compressed texts column (``texts.pack`` of prompt, chosen, rejected; the static and
            hybrid modes keep it), or None: lets the detail say what differs in words, and keeps out the rows
            whose differing words are the answer.

    Returns:
        The findings, in position order.
    """
    info = NearIdenticalPair.info
    cand = near_identical_rows(ctx, pair_raw, mode)
    if not len(cand):
        return []
    thr = float(info.params(ctx.params)["min_cosine"])
    cos = pair_raw[cand]
    if mode == "hybrid":
        _, Ct, Rt = transformer_vectors(cand)
        cos = rowdot(Ct, Rt, np.arange(len(cand)), np.arange(len(cand)))
    out = []
    for i, c in zip(cand.tolist(), cos.tolist()):
        detail = _detail(c, thr, unpack(blobs[i]) if blobs is not None else None) if c >= thr else None
        if detail is not None:
            out.append(info.finding(int(rows[i]), "rejected", float(c), detail=detail))
    return out

"""The reference model's sequences of a batch, packed to travel from a pool worker to the main process.

Under ``--workers N`` the flip stage's worker instances tokenize the pairs as the reference model sees them
(``LogpScorer.sequences``) and the main process, which holds the one copy of the model, scores them as it
absorbs the batches in row order (``FlipStage.absorb_state``): ``--reference-max-rows`` counts rows in input
order there, as in one process. A batch's sequences travel as three int32 arrays (~4 bytes a token) and the
skipped pairs' reasons, not as Python lists. ``stack_hidden`` joins the batches' hidden-state differences.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pairaudit.models.logp_kernel import Seq


def pack(seqs: list[tuple[Seq, Seq] | None], skipped: dict[int, str]) -> dict[str, Any]:
    """``seqs`` (per pair: the chosen and the rejected (prompt ids, completion ids), or None) -> arrays."""
    ok = np.array([s is not None for s in seqs], dtype=bool)
    parts = [part for s in seqs if s is not None for seq in s for part in seq]
    lens = np.array([len(x) for x in parts], dtype=np.int32).reshape(-1, 4)
    ids = np.fromiter((t for x in parts for t in x), dtype=np.int32, count=int(lens.sum()))
    return {"ok": ok, "lens": lens, "ids": ids, "skipped": dict(skipped)}


def unpack(packed: dict[str, Any], limit: int) -> tuple[list[tuple[Seq, Seq] | None], dict[int, str]]:
    """The inverse of ``pack`` for the first ``limit`` pairs (those the model will score)."""
    ok_all = packed["ok"][:limit]
    n_ids = int(packed["lens"][: int(ok_all.sum())].sum())
    ids = packed["ids"][:n_ids].tolist()
    out: list[tuple[Seq, Seq] | None] = []
    k = pos = 0
    for ok in ok_all.tolist():
        if not ok:
            out.append(None)
            continue
        a, b, c, d = packed["lens"][k].tolist()
        parts = []
        for n in (a, b, c, d):
            parts.append(ids[pos:pos + n])
            pos += n
        out.append(((parts[0], parts[1]), (parts[2], parts[3])))
        k += 1
    return out, {i: why for i, why in packed["skipped"].items() if i < limit}


def stack_hidden(parts: list[np.ndarray]) -> np.ndarray | None:
    """Batches of hidden-state differences (n, d) as one array; batches scored without the model (d = 0) get NaN."""
    d = max((p.shape[1] for p in parts), default=0)
    if d == 0:
        return None
    return np.concatenate([p if p.shape[1] == d else np.full((len(p), d), np.nan, np.float16) for p in parts])

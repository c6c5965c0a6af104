"""``near_duplicate_pair_reason``: why a row's ``near_duplicate_pair_score`` gave (or did not give) a finding.

The score is the search cosine of the row's nearest neighbour; the decision is the field-by-field
verification (``match.match_pairs``). For every row whose score reaches the check's ``min_response_flag``
the reason column says, in words, what the verification made of the row's nearest searched pair: the rule
that turned it down (prompts apart, a response apart, other numbers, the two responses compared by a row,
under the pair's own threshold, the same prompt worded apart, ...) or the match. The pair's outcome comes
from the same verification that decides (``match_edges(outcome=...)``) in both engines: the local engine
for the whole dataset, the Ray engine per cell group, merged per row (``merge``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pairaudit.stages.near_duplicates.match import (
    APART,
    COMPARED,
    COSINE_APART,
    LONE_APART,
    LOOSE,
    MATCHED,
    OTHER_NUMBERS,
    OTHER_WAY,
    OUTCOME_FIELDS,
    UNDER_LOCAL,
    UNSURE,
    WORDED_APART,
)

REASON_KEY = "near_duplicate_pair_reason"
NEAR_FIELDS = ("partner", "prow", "near", *OUTCOME_FIELDS)  # per row: its nearest pair's other row (position,
# row number), their search similarity (4 decimals), the pair's outcome
PASSED = (MATCHED, UNSURE, OTHER_WAY)  # outcomes of the loose candidate rule that the deciding rule reads again
_NAMES = ("prompt", "chosen", "rejected")


def nearest_pairs(n: int, a: np.ndarray, b: np.ndarray, sim: np.ndarray) -> np.ndarray:
    """Per row ``0..n-1``: the index of its nearest pair among ``(a[i], b[i])`` (either end), -1 for none.

    The nearest is the largest search similarity rounded to 4 decimals (engines that sum vectors in another
    order agree on it), the smaller other row on a tie.

    Example:
        >>> import numpy as np
        >>> nearest_pairs(4, np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([0.9, 0.95, 0.9])).tolist()
        [1, 0, 1, -1]
    """
    out = np.full(n, -1, np.int64)
    if not len(a):
        return out
    ends = np.concatenate([a, b]).astype(np.int64)
    other = np.concatenate([b, a]).astype(np.int64)
    near = np.round(np.concatenate([sim, sim]).astype(np.float64), 4)
    # what the first of a stable sort by (end, -near, other) picks, without sorting the ~40M ends of a 1M-row
    # search: per end the largest near, of those the smallest other, of those the first position
    best = np.full(n, -np.inf)
    np.maximum.at(best, ends, near)
    top = np.flatnonzero(near == best[ends])
    least = np.full(n, np.iinfo(np.int64).max)
    np.minimum.at(least, ends[top], other[top])
    top = top[other[top] == least[ends[top]]]
    first = np.full(n, len(ends))
    np.minimum.at(first, ends[top], top)
    has = np.flatnonzero(first < len(ends))
    out[has] = first[has] % len(a)  # position in the two concatenated copies -> pair index
    return out


def _first_of_each(key: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The first position of ``order`` (a sort by ``key`` first) for each value of ``key``."""
    if not len(order):
        return order
    return order[np.r_[True, key[order][1:] != key[order][:-1]]]


def row_outcomes(n: int, a: np.ndarray, b: np.ndarray, sim: np.ndarray,
                 verify: Callable[[np.ndarray, np.ndarray], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Per row: its nearest pair (``nearest_pairs``) and that pair's outcome, as ``NEAR_FIELDS`` arrays
    (``partner`` -1: no pair searched; ``prow`` is left to the caller). ``verify(a, b)`` returns the outcome
    of the pairs ``(a[i], b[i])``: each distinct nearest pair is verified once (at most one pair a row: the
    cost is bounded by the rows, not by the candidate pairs)."""
    out = empty_outcomes(n)
    keep_nearer(out, a, b, sim)
    verify_nearest(out, verify)
    return out


def empty_outcomes(n: int) -> dict[str, np.ndarray]:
    """``n`` rows with no nearest pair."""
    return {"partner": np.full(n, -1, np.int64), "prow": np.full(n, -1, np.int64), "near": np.full(n, -np.inf, np.float64),
            "code": np.full(n, -1, np.int8), "field": np.zeros(n, np.int8), "value": np.zeros(n, np.float32),
            "limit": np.zeros(n, np.float32)}


def reverify(per_row: dict[str, np.ndarray], verify: Callable[[np.ndarray, np.ndarray], dict[str, np.ndarray]]
             ) -> None:
    """Hybrid mode: the rows whose nearest pair passed the loose candidate rule get the deciding rule's outcome
    of that pair (``verify(a, b)``, on the transformer vectors)."""
    verify_nearest(per_row, verify, only=np.isin(per_row["code"], PASSED))


def merge(parts: list[dict[str, np.ndarray]], n: int, offset: int) -> dict[str, np.ndarray]:
    """One shard's rows (positions ``offset .. offset + n``): per row the nearest pair over the cell groups
    that searched it (``parts``: each with ``pos`` and ``NEAR_FIELDS``), as ``nearest_pairs`` picks it."""
    out = empty_outcomes(n)
    parts = [p for p in parts if len(p.get("pos", ()))]
    if not parts:
        return out
    cat = {k: np.concatenate([np.asarray(p[k]) for p in parts]) for k in ("pos", *NEAR_FIELDS)}
    has = cat["partner"] >= 0
    cat = {k: v[has] for k, v in cat.items()}
    order = np.lexsort((cat["partner"], -cat["near"], cat["pos"]))
    first = _first_of_each(cat["pos"], order)
    at = cat["pos"][first] - offset
    for k in NEAR_FIELDS:
        out[k][at] = cat[k][first]
    return out


def keep_nearer(cur: dict[str, np.ndarray], a: np.ndarray, b: np.ndarray, sim: np.ndarray) -> None:
    """``cur`` (per row: ``partner``, ``near``) takes the nearer pair of each row among ``(a, b, sim)`` where it
    is nearer than the one it holds (as ``nearest_pairs`` orders them): the nearest pair over pieces of the
    search (a cell group's chunks)."""
    at = nearest_pairs(len(cur["partner"]), a, b, sim)
    has = np.flatnonzero(at >= 0)
    pa, pb = a[at[has]], b[at[has]]
    partner = np.where(pa == has, pb, pa)
    near = np.round(sim[at[has]].astype(np.float64), 4)
    held, held_near = cur["partner"][has], cur["near"][has]
    better = (held < 0) | (near > held_near) | ((near == held_near) & (partner < held))
    cur["partner"][has[better]], cur["near"][has[better]] = partner[better], near[better]


def verify_nearest(cur: dict[str, np.ndarray], verify: Callable[[np.ndarray, np.ndarray], dict[str, np.ndarray]],
                   only: np.ndarray | None = None) -> None:
    """Each row's nearest pair (``keep_nearer``) verified once (two rows nearest to each other share it): its
    outcome into ``cur``; ``only``: a mask of the rows to verify (the others keep theirs)."""
    has = np.flatnonzero((cur["partner"] >= 0) & (True if only is None else only))
    if not len(has):
        return
    lo, hi = np.minimum(has, cur["partner"][has]), np.maximum(has, cur["partner"][has])
    keys, inv = np.unique(np.stack([lo, hi], axis=1), axis=0, return_inverse=True)
    o = verify(keys[:, 0], keys[:, 1])
    for k in OUTCOME_FIELDS:
        cur[k][has] = o[k][inv.reshape(-1)]


def updated(per_row: dict[str, np.ndarray], updates: list[dict[str, np.ndarray]], offset: int
            ) -> dict[str, np.ndarray]:
    """``per_row`` (a shard's rows from ``offset``) with the deciding rule's outcomes (``reverify`` in a cell
    group: ``pos``, ``partner``, ``OUTCOME_FIELDS``) of the rows whose nearest pair they are about."""
    for u in updates:
        if not len(u.get("pos", ())):
            continue
        at = np.asarray(u["pos"], np.int64) - offset
        same = per_row["partner"][at] == np.asarray(u["partner"], np.int64)
        for k in OUTCOME_FIELDS:
            per_row[k][at[same]] = np.asarray(u[k])[same]
    return per_row


def reason_texts(per_row: dict[str, np.ndarray], score: np.ndarray, floor: float, prow: np.ndarray) -> np.ndarray:
    """The reason column: per row its nearest pair's outcome in words where ``score`` >= ``floor``, else none
    (UTF-8 bytes, ``b""`` for none: an array that travels between workers; ``scores.parquet`` holds
    strings and nulls). ``prow``: per row, the row number of its nearest pair's other row."""
    out = np.full(len(score), b"", dtype=object)
    show = np.flatnonzero(np.nan_to_num(np.asarray(score, np.float64), nan=-np.inf) >= floor - 1e-9)
    show = show[per_row["partner"][show] >= 0]
    if not len(show):
        return out
    for i, r in zip(show.tolist(), np.asarray(prow)[show].tolist()):
        out[i] = text(int(per_row["code"][i]), int(per_row["field"][i]), float(per_row["value"][i]),
                      float(per_row["limit"][i]), r).encode("utf-8")
    return out


def text(code: int, field: int, value: float, limit: float, row: int) -> str:
    """One outcome in words (``row``: the other row of the pair).

    Example:
        >>> text(6, 1, 0.62, 0.7, 12)
        'not a copy of row 12: same prompt, chosen worded apart (wording 0.62 < 0.70)'
        >>> text(LOOSE + APART, 0, 0.091, 0.35, 17)
        "not a copy of row 17: prompt apart (static cosine 0.091 < 0.350; the transformer did not compare the pair) (the static model's candidate rule)"
    """
    if code >= LOOSE:  # turned down by the loose candidate rule: the static model's figures
        if code - LOOSE == APART and field == 0:  # the prompts: the static cosine (a deciding wording passes)
            return (f"not a copy of row {row}: prompt apart (static cosine {value:.3f} < {limit:.3f}; the "
                    "transformer did not compare the pair) (the static model's candidate rule)")
        return text(code - LOOSE, field, value, limit, row) + " (the static model's candidate rule)"
    name = _NAMES[field]
    if code == MATCHED and np.isnan(limit):  # both responses the same words: a copy under any threshold
        return f"a copy of row {row} (both responses the same words)"
    if code == MATCHED:
        return f"a copy of row {row} (weakest response {value:.3f} >= the copy threshold {limit:.3f})"
    if code == UNSURE:
        return f"possibly a copy of row {row} (weakest response {value:.3f} < the copy threshold {limit:.3f}: flagged)"
    if code == OTHER_WAY:
        return f"row {row} holds the same two responses preferred the other way (contradictory_pair)"
    words: dict[int, str] = {
        APART: f"{name} apart (similarity {value:.3f} < {limit:.3f})",
        OTHER_NUMBERS: f"{name} gives other numbers",
        COMPARED: f"{name}: these two responses are the chosen and the rejected of one row of the data (different "
                  "answers by construction)",
        UNDER_LOCAL: f"{name} {value:.3f} < this pair's flag threshold {limit:.3f} (its rows' own "
                     "chosen~rejected similarity + local_margin)",
        WORDED_APART: f"same prompt, {name} worded apart (wording {value:.2f} < {limit:.2f})",
        COSINE_APART: f"same prompt, unsure band and {name} cosine {value:.3f} < {limit:.3f}",
        LONE_APART: f"the prompt's only two rows, {name} apart in words (wording {value:.2f} < {limit:.2f}) and in "
                    "meaning (cosine under the band floor)",
    }
    return f"not a copy of row {row}: {words.get(code, 'not verified')}"


"""The copy threshold of the near-duplicate rule, calibrated on the dataset's own negatives.

Two responses are known to be *different answers to the same question* when they are the chosen and the
rejected of one row, or two responses of different rows that share a prompt (exact prompt text). Their
similarity (the rule's own: ``max(cosine, wording)``, same model and vectors as the decision) is what a
response may reach without being a copy; a copy must sit clearly above it. Pairs whose wording similarity
is >= ``NEAR_SAME`` are left out: texts that close are copies by any measure (a model repeating itself, a
whitespace edit), not different answers.

    min_response      = clip(q + margin, floor, cap)        each response of a match: sure (default action)
    min_response_flag = clip(q, floor_flag, min_response)   the unsure band below it: flagged, never dropped

with ``q`` the ``calibration_quantile`` of the negatives across rows that share a prompt (a prompt with more
than two rows: two rows of one prompt are as often a copy as two answers) when there are at
least ``MIN_NEGATIVES`` of them (the pairs a multi-pair dataset puts at risk: same prompt, one shared
response, two different others), else of the within-row ones. On one-pair-per-prompt chat data (HH) the
negatives sit low and the floors decide; on model-vs-model sets (several models answering one instruction
almost alike) the threshold rises. Fewer than ``MIN_NEGATIVES`` negatives: the floors alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pairaudit.config import clamp_record
from pairaudit.stages.near_duplicates.infos import NEAR_DUPLICATE_INFO
from pairaudit.stages.near_duplicates.match import lexical_many
from pairaudit.stages.near_duplicates.search import rowdot
from pairaudit.stages.near_duplicates.verify import two_row_prompts

NEAR_SAME = 0.95
MIN_NEGATIVES = 50


def calibration_sample(phash: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    """Up to ``k`` rows for the calibration: half as pairs of rows that share a prompt (random prompts), the
    rest uniformly at random (seeded)."""
    rng = np.random.default_rng(seed)
    n = len(phash)
    if n <= k:
        return np.arange(n)
    order = np.argsort(phash, kind="stable")
    same = np.flatnonzero(phash[order[1:]] == phash[order[:-1]])
    same = same[np.r_[True, np.diff(same) > 1]] if len(same) else same  # one pair per run of a prompt
    pick = rng.choice(same, size=min(len(same), k // 4), replace=False) if len(same) else same
    shared = np.concatenate([order[pick], order[pick + 1]])
    rest = rng.choice(n, size=k - len(shared), replace=False)
    return np.unique(np.concatenate([shared, rest]))


def negative_pairs(phash: np.ndarray, idx: np.ndarray, max_pairs: int, seed: int = 0
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Response pairs known to be different answers, among rows ``idx``: (row a, field a, row b, field b)
    with fields 1 = chosen, 2 = rejected, and whether the pair is across rows. Within each row
    chosen~rejected; across rows sharing a prompt, each row with the next one of its prompt (all four
    response pairs). At most ``max_pairs`` of each kind (seeded)."""
    idx = np.asarray(idx, dtype=np.int64)
    ra, fa, rb, fb = [idx], [np.ones(len(idx), np.int8)], [idx], [np.full(len(idx), 2, np.int8)]
    order = idx[np.argsort(phash[idx], kind="stable")]
    same = np.flatnonzero(phash[order[1:]] == phash[order[:-1]])
    x, y = order[same], order[same + 1]
    # a prompt with only two rows is no multi-pair evidence: in one-pair-per-prompt data such a pair is most
    # often a copy (HH held-out plants: their paraphrases set q to 0.995, the cap, and the copies were missed)
    many = ~two_row_prompts(phash)
    x, y = x[many[x]], y[many[x]]
    for f1 in (1, 2):
        for f2 in (1, 2):
            ra.append(x)
            rb.append(y)
            fa.append(np.full(len(x), f1, np.int8))
            fb.append(np.full(len(x), f2, np.int8))
    out = [np.concatenate(v) for v in (ra, fa, rb, fb)]
    cross = np.arange(len(out[0])) >= len(idx)
    rng = np.random.default_rng(seed)
    keep = []
    for part in (np.flatnonzero(~cross), np.flatnonzero(cross)):
        keep.append(np.sort(rng.choice(part, size=max_pairs, replace=False)) if len(part) > max_pairs else part)
    k = np.concatenate(keep)
    return out[0][k], out[1][k], out[2][k], out[3][k], cross[k]


def negative_similarities(C: np.ndarray, R: np.ndarray, sk: np.ndarray, ln: np.ndarray, pos: np.ndarray,
                          pairs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``max(cosine, wording)`` of the within-row and of the across-row negative pairs; ``pos`` maps a row
    index to its row in C/R (vectors may exist for a subset of rows). Equal texts and near-same wording
    are left out."""
    ra, fa, rb, fb, cross = pairs
    sims: list[np.ndarray] = []
    kinds: list[np.ndarray] = []
    for f1 in (1, 2):
        for f2 in (1, 2):
            sel = np.flatnonzero((fa == f1) & (fb == f2))
            if not len(sel):
                continue
            A, B = (C if f1 == 1 else R), (C if f2 == 1 else R)
            ska, skb = np.asarray(sk[ra[sel], f1]), np.asarray(sk[rb[sel], f2])
            lna, lnb = np.asarray(ln[ra[sel], f1]), np.asarray(ln[rb[sel], f2])
            differ = (ska != skb) | (lna != lnb)
            sel, ska, skb, lna, lnb = sel[differ], ska[differ], skb[differ], lna[differ], lnb[differ]
            words = lexical_many(ska, lna, skb, lnb)  # ``lexical`` of each pair, in one rapidfuzz call
            near = words < NEAR_SAME
            kept, words = sel[near], words[near]
            # the cosine only of the pairs that count (vectors may be embedded on demand)
            cos = rowdot(A, B, pos[ra[kept]], pos[rb[kept]]) if len(kept) else np.empty(0, np.float32)
            sims.append(np.maximum(np.asarray(cos, dtype=np.float64), words))
            kinds.append(np.asarray(cross[kept], dtype=bool))
    v = np.concatenate(sims) if sims else np.empty(0, np.float64)
    kd = np.concatenate(kinds) if kinds else np.empty(0, bool)
    return v[~kd], v[kd]


def calibrate(negs: tuple[np.ndarray, np.ndarray], params: dict[str, Any], space: str) -> dict[str, Any]:
    """The calibrated rule (``min_response``, ``min_response_flag``) and what it came from (report.json)."""
    within, across = negs
    neg = across if len(across) >= MIN_NEGATIVES else within
    floor, floor_flag = float(params["min_response"]), float(params["min_response_flag"])
    cap, qn, margin = float(params["max_response"]), float(params["calibration_quantile"]), float(
        params["calibration_margin"])
    info: dict[str, Any] = {"space": space, "negatives_within_rows": int(len(within)),
                            "negatives_across_rows": int(len(across)),
                            "calibrated_on": "across rows sharing a prompt" if neg is across else "within rows",
                            "quantile": qn, "margin": margin,
                            "floor": floor, "floor_flag": floor_flag, "cap": cap}
    if len(neg) < MIN_NEGATIVES:
        t, tf = floor, min(floor_flag, floor)
        info["note"] = f"fewer than {MIN_NEGATIVES} negatives: the floors decide"
    else:
        q = float(np.quantile(neg, qn))
        t = float(np.clip(q + margin, floor, max(cap, floor)))
        tf = float(np.clip(q, min(floor_flag, t), t))
        for name, v in (("within_rows", within), ("across_rows", across)):
            if len(v):
                info[f"similarity_{name}"] = {k: round(float(np.quantile(v, x)), 4) for k, x in
                                              (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))}
        info["q"] = round(q, 4)
    info["min_response"] = round(t, 4)
    info["min_response_flag"] = round(tf, 4)
    # the floors and the cap as the rule used them (report.json shows the values used: Context.clamp)
    info["cap"], info["floor_flag"] = max(cap, floor), min(floor_flag, round(t, 4))
    clamp_record(info, NEAR_DUPLICATE_INFO.name, "max_response", cap, info["cap"],
                 "below min_response: the copy threshold is never below its floor")
    clamp_record(info, NEAR_DUPLICATE_INFO.name, "min_response_flag", floor_flag, info["floor_flag"],
                 f"above the copy threshold ({round(t, 4)}): the unsure band starts at the copy threshold")
    return info


def calibrated_rule(dup: dict[str, Any], con: dict[str, Any], C: np.ndarray, R: np.ndarray, sk: np.ndarray,
                    ln: np.ndarray, phash: np.ndarray, idx: np.ndarray, pos: np.ndarray, space: str
                    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The duplicate and contradiction rules with their copy threshold calibrated on rows ``idx`` (vectors at
    ``pos[idx]``), and the calibration's record."""
    pairs = negative_pairs(phash, idx, int(dup["calibration_pairs"]))
    info = calibrate(negative_similarities(C, R, sk, ln, pos, pairs), dup, space)
    return (*with_calibration(dup, con, info), info)


def with_calibration(dup: dict[str, Any], con: dict[str, Any], info: dict[str, Any]
                     ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The duplicate and contradiction rules with a calibration's copy threshold (``calibrate``'s record)."""
    rule = {"min_response": info["min_response"], "min_response_flag": info["min_response_flag"],
            "floor_response": float(dup["min_response"]), "floor_response_flag": float(dup["min_response_flag"])}
    return {**dup, **rule}, {**con, **rule}

"""The whole near-duplicate decision on compact arrays: neighbour search -> field-by-field verification ->
groups. Usable without the stage (``scripts/bench_dedup.py`` calls it on synthetic and real vectors)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from pairaudit.datatypes import Finding
from pairaudit.stages.near_duplicates.groups import contradiction_findings, duplicate_findings
from pairaudit.stages.near_duplicates.infos import NEAR_DUPLICATE_INFO
from pairaudit.stages.near_duplicates.match import match_pairs, strength
from pairaudit.stages.near_duplicates.search import neighbour_search, sum_vectors
from pairaudit.stages.near_duplicates.unionfind import Separated

RULE_KEYS = ("min_prompt", "min_response", "min_response_flag", "floor_response", "floor_response_flag",
             "local_margin")


def _rules(dup: dict[str, Any], con: dict[str, Any], candidates_only: bool) -> tuple[dict, dict]:
    if candidates_only:  # the looser rule of the static candidate generator (hybrid mode)
        r = {"min_prompt": dup["candidate_min_prompt"], "min_response": dup["candidate_min_response"],
             "min_response_flag": dup["candidate_min_response"]}
        return r, r
    return ({k: dup[k] for k in RULE_KEYS if k in dup},
            {k: con.get(k, dup[k]) for k in RULE_KEYS if k in dup})


def find_groups(rows: np.ndarray, P: np.ndarray, C: np.ndarray, R: np.ndarray, sk: np.ndarray, ln: np.ndarray,
                dup: dict[str, Any], con: dict[str, Any], want_dups: bool = True,
                want_contradictions: bool = True, force_index: str | None = None,
                keep_neighbours: bool = False, candidates: tuple[np.ndarray, np.ndarray] | None = None,
                candidates_only: bool = False, timings: dict[str, float] | None = None,
                compared: tuple[np.ndarray, np.ndarray] | None = None,
                prompt_keys: np.ndarray | None = None) -> dict[str, Any]:
    """Returns ``findings``, ``near_duplicate_pair_score`` (nearest neighbour's search cosine, every row;
    None when ``candidates`` are given), ``stats`` (deterministic; seconds go to ``timings``).

    ``candidates``: verify these row pairs instead of searching (``compared``: see ``match_pairs``).
    ``prompt_keys``: per-row digests of the prompt text; with ``compared`` they keep rows known to be different
    comparisons (same prompt, no match of each other) out of one group (``separated``).
    ``candidates_only``: apply the looser
    candidate rule and return the surviving pairs (``a``, ``b``) and their rows (``candidate_rows``)
    instead of findings."""
    n = len(rows)
    timings = {} if timings is None else timings
    t0 = time.perf_counter()
    stats: dict[str, Any] = {"n_rows": int(n)}
    nearest: np.ndarray | None = None
    if candidates is None:
        S = sum_vectors(P, C, R)
        a, b, sim, best, info = neighbour_search(S, int(dup["neighbors"]), float(dup["min_search_cosine"]),
                                                 int(dup["exact_max_rows"]), int(dup["nprobe"]), force=force_index)
        del S
        nearest = np.where(np.isfinite(best), best, np.nan).astype(np.float64)
        stats.update(info, n_candidates=int(len(a)))
    else:
        a, b = (np.asarray(x, dtype=np.int64) for x in candidates)
        sim = None
    timings["near_duplicates:search_s"] = timings.get("near_duplicates:search_s", 0.0) + time.perf_counter() - t0
    t1 = time.perf_counter()
    rule_s, rule_x = _rules(dup, con, candidates_only)
    out: dict[str, Any] = {NEAR_DUPLICATE_INFO.score_key: nearest, "stats": stats}
    if keep_neighbours:
        out["neighbours"] = (a, b, sim)
    ok_s = np.zeros(len(a), dtype=bool)
    if len(a) and (want_dups or want_contradictions):
        ok_s, sure_s, sim_s, cos_s, lex_s, why_s, thr_s = match_pairs(P, C, R, sk, ln, a, b, rule_s, straight=True,
                                                               compared=compared)
    ok_x = np.zeros(len(a), dtype=bool)
    verified = ok_s
    if len(a) and want_contradictions:
        # both orientations are checked: when chosen and rejected of a row are close to each other, a swapped
        # copy can pass the straight rule too; the orientation whose weakest response is closer wins
        ok_x, sure_x, sim_x, cos_x, lex_x, why_x, thr_x = match_pairs(P, C, R, sk, ln, a, b, rule_x, straight=False,
                                                               compared=compared)
        better_x = ok_x & (~ok_s | (strength(sim_x) > strength(sim_s)))
        verified = ok_s | ok_x  # a match either way: not known to be different (``separated``)
        ok_s &= ~better_x
        ok_x = better_x
    findings: list[Finding] = []
    if candidates_only:
        keep = ok_x | (ok_s if want_dups or want_contradictions else False)
        out.update(a=a[keep], b=b[keep], candidate_rows=np.unique(np.concatenate([a[keep], b[keep]])),
                   findings=findings)
        stats["n_candidate_pairs"] = int(keep.sum())
    else:
        if want_dups and ok_s.any():
            sep = separated(prompt_keys, compared, a, b, verified)
            f, n_groups, n_rows = duplicate_findings(rows, a[ok_s], b[ok_s], sure_s[ok_s], sim_s[ok_s], cos_s[ok_s],
                                                     lex_s[ok_s], why_s[ok_s], thr_s[ok_s], sep)
            findings += f
            stats.update(near_duplicate_groups=n_groups, near_duplicate_rows=n_rows)
            if sep is not None:
                stats["near_duplicate_matches_separated"] = sep.refused
        if want_contradictions:
            n_groups = 0
            if ok_x.any():
                sep = separated(prompt_keys, compared, a, b, verified)
                f, n_groups = contradiction_findings(rows, a[ok_x], b[ok_x], sure_x[ok_x], sim_x[ok_x], cos_x[ok_x],
                                                     lex_x[ok_x], why_x[ok_x], thr_x[ok_x], sep,
                                                     (a[ok_s], b[ok_s], sure_s[ok_s], strength(sim_s[ok_s])))
                findings += f
                if sep is not None:
                    stats["near_contradiction_matches_separated"] = sep.refused
            stats["near_contradiction_groups"] = n_groups
        findings.sort(key=lambda f: (f.row, f.check))
        out["findings"] = findings
    timings["near_duplicates:verify_s"] = timings.get("near_duplicates:verify_s", 0.0) + time.perf_counter() - t1
    return out


def separated(prompt_keys: np.ndarray | None, compared: tuple[np.ndarray, np.ndarray] | None, a: np.ndarray,
              b: np.ndarray, matched: np.ndarray) -> Separated | None:
    """The grouping constraint: rows with the same prompt text are one group only when they match each other
    (``matched`` of the verified pairs ``a``, ``b``) or have the same responses (``compared[0]``: per-row
    response digests). None without prompt keys (no constraint)."""
    if prompt_keys is None:
        return None
    keys = np.asarray(prompt_keys, dtype=np.int64)
    same = None
    if compared is not None:
        h = np.asarray(compared[0], dtype=np.int64).reshape(-1, 2)
        with np.errstate(over="ignore"):
            same = (keys.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) ^ h[:, 0].astype(np.uint64)
                    ^ (h[:, 1].astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F))).astype(np.int64)
    pairs = set(zip(a[matched].tolist(), b[matched].tolist()))
    return Separated(len(keys), keys, pairs, same)


"""The whole near-duplicate decision on compact arrays: neighbour search -> field-by-field verification ->
groups. Usable without the stage (``scripts/bench_dedup.py`` calls it on synthetic and real vectors)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from pairaudit.datatypes import Finding
from pairaudit.stages.near_duplicates.groups import contradiction_findings, duplicate_findings
from pairaudit.stages.near_duplicates.infos import NEAR_DUPLICATE_INFO
from pairaudit.stages.near_duplicates.match import (
    LOOSE,
    MATCH_CHUNK,
    MATCHED,
    OTHER_WAY,
    OUTCOME_FIELDS,
    UNSURE,
    field_similarity,
    match_pairs,
    new_outcome,
    prompt_field,
    record,
    same_prompt_reading,
    strength,
)
from pairaudit.stages.near_duplicates.reasons import row_outcomes
from pairaudit.stages.near_duplicates.search import neighbour_search, sum_vectors
from pairaudit.stages.near_duplicates.threads import in_threads
from pairaudit.stages.near_duplicates.unionfind import Separated

RULE_KEYS = ("min_prompt", "min_response", "min_response_flag", "floor_response", "floor_response_flag",
             "local_margin", "floor_wording_two_rows")


def _rules(dup: dict[str, Any], con: dict[str, Any], candidates_only: bool) -> tuple[dict, dict]:
    if candidates_only:  # the looser rule of the static candidate generator (hybrid mode)
        # the prompts: the static cosine, or the wording where it decides alone (at the deciding rule's floor,
        # the transformer cannot turn the prompts down); below that floor the wording only stands in for
        # the transformer's cosine, and HH prompts share their "Human: ... Assistant:" frame word for word
        r = {"min_prompt": dup["candidate_min_prompt"], "min_response": dup["candidate_min_response"],
             "min_response_flag": dup["candidate_min_response"], "prompt_wording_from": dup["min_prompt"]}
        return r, r
    return ({k: dup[k] for k in RULE_KEYS if k in dup},
            {k: con.get(k, dup[k]) for k in RULE_KEYS if k in dup})


EDGE_FIELDS = ("a", "b", "sure", "sim", "cos", "lex", "why", "thr")


def match_edges(P: np.ndarray, C: np.ndarray, R: np.ndarray, sk: np.ndarray, ln: np.ndarray, a: np.ndarray,
                b: np.ndarray, dup: dict[str, Any], con: dict[str, Any], want_dups: bool, want_contradictions: bool,
                candidates_only: bool = False, compared: tuple[np.ndarray, np.ndarray] | None = None,
                ts: Any = None, two_rows: np.ndarray | None = None, outcome: dict[str, np.ndarray] | None = None,
                threads: int | None = None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Verify the candidate pairs (a[i], b[i]) field by field: the straight matches (near duplicates) and the
    crosswise ones (near contradictions), each as ``EDGE_FIELDS`` arrays. Pairs are independent of each other,
    so any subset of them can be verified where their rows are (the Ray engine's cell groups), and they are
    verified ``MATCH_CHUNK`` at a time (each pair's sketches are copied while it is verified: ~1.4 KB a pair,
    measured in a Ray cell group at 1M rows; a 1M-row scan has ~20M candidate pairs), the edges concatenated in
    pair order. ``two_rows``: per row, its prompt text has exactly two rows (``two_row_prompts``;
    ``match_pairs``). ``outcome``: a dict filled with every pair's outcome (``match.OUTCOME_FIELDS``): the
    straight rule's, ``OTHER_WAY`` where the crosswise match wins (code -1: not verified, neither kind wanted).
    ``threads``: chunks verified at once (default ``threads.native_threads()``; the same edges whatever it is)."""
    if len(a) > MATCH_CHUNK:  # chunks on the process's threads (threads.in_threads), put back in order
        outs = [None if outcome is None else {} for _ in range(0, len(a), MATCH_CHUNK)]
        parts = in_threads(lambda j: match_edges(
            P, C, R, sk, ln, a[j * MATCH_CHUNK:(j + 1) * MATCH_CHUNK], b[j * MATCH_CHUNK:(j + 1) * MATCH_CHUNK], dup, con,
            want_dups, want_contradictions, candidates_only, compared, ts, two_rows, outs[j], threads=1),
            range(len(outs)), threads)
        if outcome is not None:
            outcome.update({k: np.concatenate([o[k] for o in outs]) for k in OUTCOME_FIELDS})  # type: ignore[index]
        return tuple({k: np.concatenate([p[i][k] for p in parts]) for k in EDGE_FIELDS}  # type: ignore[return-value]
                     for i in (0, 1))
    if outcome is not None:
        outcome.update(new_outcome(len(a)))
    rule_s, rule_x = _rules(dup, con, candidates_only)
    prompts = None  # both orientations read the prompts alike: once for both (most pairs end there)
    if len(a) and want_contradictions and same_prompt_reading(rule_s, rule_x):
        prompts = prompt_field(P, sk, ln, ts, a, b, rule_s)
    ok_s = np.zeros(len(a), dtype=bool)
    if len(a) and (want_dups or want_contradictions):
        ok_s, sure_s, sim_s, cos_s, lex_s, why_s, thr_s = match_pairs(P, C, R, sk, ln, a, b, rule_s, straight=True,
                                                               compared=compared, ts=ts, two_rows=two_rows,
                                                               outcome=outcome, prompts=prompts)
    ok_x = np.zeros(len(a), dtype=bool)
    if len(a) and want_contradictions:
        # both orientations are checked: when chosen and rejected of a row are close to each other, a swapped
        # copy can pass the straight rule too; the orientation whose weakest response is closer wins
        ok_x, sure_x, sim_x, cos_x, lex_x, why_x, thr_x = match_pairs(P, C, R, sk, ln, a, b, rule_x, straight=False,
                                                               compared=compared, ts=ts, two_rows=two_rows,
                                                               prompts=prompts)
        better_x = ok_x & (~ok_s | (strength(sim_x) > strength(sim_s)))
        if outcome is not None:
            w = np.flatnonzero(better_x)
            record(outcome, w, OTHER_WAY, 1 + sim_x[w, 1:].argmin(axis=1), strength(sim_x[w]), thr_x[w])
        ok_s &= ~better_x
        ok_x = better_x
    empty = {"a": a[:0], "b": b[:0], "sure": np.zeros(0, bool), "sim": np.zeros((0, 3), np.float32),
             "cos": np.zeros((0, 3), np.float32), "lex": np.zeros((0, 3), np.float32), "why": np.zeros((0, 3), np.int8),
             "thr": np.zeros(0, np.float32)}
    edges_s, edges_x = dict(empty), dict(empty)
    if ok_s.any():
        edges_s = dict(zip(EDGE_FIELDS, (a[ok_s], b[ok_s], sure_s[ok_s], sim_s[ok_s], cos_s[ok_s], lex_s[ok_s],
                                         why_s[ok_s], thr_s[ok_s])))
    if ok_x.any():
        edges_x = dict(zip(EDGE_FIELDS, (a[ok_x], b[ok_x], sure_x[ok_x], sim_x[ok_x], cos_x[ok_x], lex_x[ok_x],
                                         why_x[ok_x], thr_x[ok_x])))
    return edges_s, edges_x


def prompts_pass(P: Any, sk: Any, ln: np.ndarray, a: np.ndarray, b: np.ndarray, dup: dict[str, Any],
                 con: dict[str, Any], want_contradictions: bool, ts: Any = None) -> np.ndarray:
    """Which candidate pairs ``(a[i], b[i])`` may pass the deciding rule's prompt field: the same prompt text, or
    ``max(cosine, wording) >= min_prompt`` (the smaller of the two rules' when near contradictions are wanted),
    computed as ``match_pairs`` computes it (``match.field_similarity``). The deciding rule turns down every other pair on its prompt before
    reading a response (it only lowers a prompt's similarity further: other numbers), so only these pairs'
    responses are read, and the calibration needs only their rows (hybrid mode: their responses are then the
    transformer's to embed; ``stage._hybrid_decision``, the Ray cell groups' ``prompts``).

    Args:
        P: the prompts' vectors (any array-like ``rowdot`` reads), indexed like ``sk``.
        sk, ln: sketches and lengths (n, 3); ``ts``: the sketches' ``token_sorted`` forms, or None.
        a, b: the pairs' row indices.
        dup, con: the duplicate and contradiction rules (``min_prompt``; the calibration does not move it).
        want_contradictions: near contradictions are wanted (their rule's ``min_prompt`` counts too).

    Returns:
        A bool array, one per pair.

    Example:
        >>> import numpy as np
        >>> from pairaudit.stages.near_duplicates.match import sketch
        >>> sks = [sketch(t) for t in ("how do I bake bread", "how do I bake bread?", "what is a good film")]
        >>> sk = np.array([[s[0]] * 3 for s in sks]); ln = np.array([[s[1]] * 3 for s in sks])
        >>> P = np.eye(3, dtype=np.float32)
        >>> prompts_pass(P, sk, ln, np.array([0, 0]), np.array([1, 2]), {"min_prompt": 0.85}, {}, False).tolist()
        [True, False]
    """
    floor = float(dup["min_prompt"])
    if want_contradictions:
        floor = min(floor, float(con.get("min_prompt", floor)))
    out = np.zeros(len(a), dtype=bool)
    for lo in range(0, len(a), MATCH_CHUNK):  # a slice of pairs at a time: their sketches are copied to compare
        x, y = a[lo:lo + MATCH_CHUNK], b[lo:lo + MATCH_CHUNK]
        s = field_similarity(P, P, sk, ln, ts, (x, 0), (y, 0), np.full(len(x), floor), {})[4]
        out[lo:lo + MATCH_CHUNK] = s >= floor - 1e-6
    return out


def lowest_response_floor(dup: dict[str, Any], con: dict[str, Any], want_contradictions: bool) -> float:
    """The lowest similarity a response of a match may have under any calibration: the field floor of the
    deciding rule (``min(min_response, min_response_flag)``, which the calibration never lowers) or the lone
    pairs' ``floor_wording_two_rows``, over both rules when near contradictions are wanted."""
    rules = (dup, {**dup, **con}) if want_contradictions else (dup,)
    keys = ("min_response", "min_response_flag", "floor_wording_two_rows")
    return min(float(r[k]) for r in rules for k in keys if k in r)


def responses_reach(C: Any, R: Any, sk: Any, ln: np.ndarray, a: np.ndarray, b: np.ndarray, floor: float,
                    want_contradictions: bool, ts: Any = None) -> np.ndarray:
    """Which pairs ``(a[i], b[i])`` have both responses at least ``floor`` similar (``max(cosine, wording)``, 1 for
    the same text; as ``match.field_similarity`` reads them), straight or, with near contradictions, crosswise,
    and not both the same words as the other row's (such a pair matches under any copy threshold, and its
    finding and reason name none: ``groups``, ``reasons.text``). With ``floor = lowest_response_floor(...)`` the
    deciding rule decides a pair that does not reach the same way whatever its copy threshold (turned down on a
    response, or a copy whose responses are the same words): when no pair reaches, the calibration decides
    nothing (hybrid mode then embeds no calibration sample: ``stage._hybrid_decision``, the Ray cell groups'
    ``prompts``).

    Args:
        C, R: the chosen and rejected vectors (array-likes ``rowdot`` reads), indexed like ``sk``.
        sk, ln: sketches and lengths (n, 3); ``ts``: the sketches' ``token_sorted`` forms, or None.
        a, b: the pairs' row indices.
        floor: the similarity both responses must reach.
        want_contradictions: the crosswise orientation counts too.

    Returns:
        A bool array, one per pair.

    Example:
        >>> import numpy as np
        >>> from pairaudit.stages.near_duplicates.match import sketch
        >>> texts = [("q", "bake it at 200 degrees", "no idea, sorry"), ("q", "bake it at 200 degrees", "No idea sorry!"),
        ...          ("q", "paint the fence blue", "no idea, sorry")]
        >>> sk = np.array([[sketch(t)[0] for t in row] for row in texts])
        >>> ln = np.array([[sketch(t)[1] for t in row] for row in texts])
        >>> V = np.eye(3, dtype=np.float32)  # orthogonal vectors: only the wording can bring two texts close
        >>> responses_reach(V, V, sk, ln, np.array([0, 0]), np.array([1, 2]), 0.7, False).tolist()
        [True, False]
    """
    out = np.zeros(len(a), dtype=bool)
    ways = (((C, 1), (C, 1)), ((R, 2), (R, 2)))
    crossed = (((C, 1), (R, 2)), ((R, 2), (C, 1)))
    for lo in range(0, len(a), MATCH_CHUNK):  # a slice of pairs at a time: their sketches are copied to compare
        x, y = a[lo:lo + MATCH_CHUNK], b[lo:lo + MATCH_CHUNK]
        fl = np.full(len(x), floor)
        for orient in (ways, crossed) if want_contradictions else (ways,):
            ok = np.arange(len(x))  # the second response is read only where the first reaches (as match_pairs)
            differs = np.zeros(len(x), dtype=bool)  # a reaching response is not the other row's text
            for (A, fa), (B, fb) in orient:
                if not len(ok):
                    break
                sim = field_similarity(A, B, sk, ln, ts, (x[ok], fa), (y[ok], fb), fl[ok], {})
                differs[ok] |= ~sim[0]
                ok = ok[sim[4] >= floor - 1e-6]
            out[lo + ok[differs[ok]]] = True
    return out


def pair_outcomes(P: np.ndarray, C: np.ndarray, R: np.ndarray, sk: np.ndarray, ln: np.ndarray, a: np.ndarray,
                  b: np.ndarray, dup: dict[str, Any], con: dict[str, Any], want_dups: bool, want_contradictions: bool,
                  candidates_only: bool = False, compared: tuple[np.ndarray, np.ndarray] | None = None,
                  ts: Any = None, two_rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The outcome of the pairs ``(a[i], b[i])`` (``match.OUTCOME_FIELDS``): ``match_edges`` with the same
    arguments as the decision's. Under the loose candidate rule (``candidates_only``) a pair it turns down has
    ``match.LOOSE`` added to its code (its figures are the static model's and the candidate rule's)."""
    outcome: dict[str, np.ndarray] = {}
    match_edges(P, C, R, sk, ln, a, b, dup, con, want_dups, want_contradictions, candidates_only, compared, ts,
                two_rows, outcome)
    if candidates_only and len(a):
        down = outcome["code"] >= 0
        down &= ~np.isin(outcome["code"], (MATCHED, UNSURE, OTHER_WAY))
        outcome["code"][down] += LOOSE
    return outcome


def edge_findings(rows: np.ndarray, edges_s: dict[str, np.ndarray], edges_x: dict[str, np.ndarray], want_dups: bool,
                  want_contradictions: bool, stats: dict[str, Any],
                  keys: tuple[np.ndarray, np.ndarray] | None = None) -> list[Finding]:
    """Groups (union-find over the verified edges, in pair order) and their findings; ``stats`` gets the counts.
    Needs only the edges: memory O(edges), whatever the number of rows. ``keys``: per row (as ``rows``), the
    prompt digest and ``same_keys``; with them rows known to be different comparisons (same prompt text, no
    match of each other) never share a group (``unionfind.Separated``)."""
    findings: list[Finding] = []
    if want_dups and len(edges_s["a"]):
        sep = separated(keys, edges_s, edges_x)
        f, n_groups, n_rows = duplicate_findings(rows, *(edges_s[k] for k in EDGE_FIELDS), separate=sep)
        findings += f
        stats.update(near_duplicate_groups=n_groups, near_duplicate_rows=n_rows)
        if sep is not None:
            stats["near_duplicate_matches_separated"] = sep.refused
    if want_contradictions:
        n_groups = 0
        if len(edges_x["a"]):
            sep = separated(keys, edges_s, edges_x)
            sides = (edges_s["a"], edges_s["b"], edges_s["sure"], strength(edges_s["sim"]))
            f, n_groups = contradiction_findings(rows, *(edges_x[k] for k in EDGE_FIELDS), separate=sep, sides=sides)
            findings += f
            if sep is not None:
                stats["near_contradiction_matches_separated"] = sep.refused
        stats["near_contradiction_groups"] = n_groups
    findings.sort(key=lambda f: (f.row, f.check))
    return findings


def two_row_prompts(prompt_keys: np.ndarray) -> np.ndarray:
    """Per row: its prompt digest occurs in exactly two rows.

    Args:
        prompt_keys: per-row prompt digests (int64).

    Returns:
        A bool array, one per row.

    Example:
        >>> import numpy as np
        >>> two_row_prompts(np.array([5, 7, 5, 9, 9, 9])).tolist()
        [True, False, True, False, False, False]
    """
    _, inv, counts = np.unique(np.asarray(prompt_keys, dtype=np.int64), return_inverse=True, return_counts=True)
    return counts[inv.reshape(-1)] == 2


def same_keys(prompt_keys: np.ndarray, hresp: np.ndarray) -> np.ndarray:
    """Per row, one digest of its prompt digest and its two response digests: equal for rows with the same
    prompt and responses (such rows always match, ``Separated``)."""
    k = np.asarray(prompt_keys, dtype=np.int64).astype(np.uint64)
    h = np.asarray(hresp, dtype=np.int64).reshape(-1, 2).astype(np.uint64)
    with np.errstate(over="ignore"):
        return (k * np.uint64(0x9E3779B97F4A7C15) ^ h[:, 0] ^ (h[:, 1] * np.uint64(0xC2B2AE3D27D4EB4F))).astype(np.int64)


def separated(keys: tuple[np.ndarray, np.ndarray] | None, edges_s: dict[str, np.ndarray],
              edges_x: dict[str, np.ndarray]) -> Separated | None:
    """The grouping constraint over the rows of ``keys`` (prompt digests, ``same_keys``): rows with the same
    prompt text share a group only when they match each other (an edge either way: straight or crosswise) or
    have the same responses. None without keys (no constraint)."""
    if keys is None:
        return None
    a = np.concatenate([edges_s["a"], edges_x["a"]]).tolist()
    b = np.concatenate([edges_s["b"], edges_x["b"]]).tolist()
    return Separated(len(keys[0]), np.asarray(keys[0], dtype=np.int64), set(zip(a, b)),
                     np.asarray(keys[1], dtype=np.int64))


def pair_member(a: np.ndarray, b: np.ndarray, ea: np.ndarray, eb: np.ndarray, n: int,
                chunk: int = MATCH_CHUNK) -> np.ndarray:
    """Which pairs ``(a[i], b[i])`` are among the pairs ``(ea, eb)`` (few): ``np.isin`` of the keys ``a * n + b``,
    ``chunk`` pairs at a time against the sorted edge keys (``np.isin`` sorts a copy of all the pairs: ~20M at
    1M rows)."""
    ek = np.sort(np.asarray(ea, dtype=np.int64) * n + np.asarray(eb, dtype=np.int64))
    keep = np.zeros(len(a), dtype=bool)
    if not len(ek):
        return keep
    for lo in range(0, len(a), chunk):
        k = a[lo:lo + chunk].astype(np.int64) * n + b[lo:lo + chunk]
        keep[lo:lo + chunk] = ek[np.minimum(np.searchsorted(ek, k), len(ek) - 1)] == k
    return keep


def find_groups(rows: np.ndarray, P: np.ndarray, C: np.ndarray, R: np.ndarray, sk: np.ndarray, ln: np.ndarray,
                dup: dict[str, Any], con: dict[str, Any], want_dups: bool = True,
                want_contradictions: bool = True, force_index: str | None = None,
                keep_neighbours: bool = False, candidates: tuple[np.ndarray, np.ndarray] | None = None,
                candidates_only: bool = False, timings: dict[str, float] | None = None,
                compared: tuple[np.ndarray, np.ndarray] | None = None, sums: Any = None,
                prompt_keys: np.ndarray | None = None, ts: Any = None, two_rows: np.ndarray | None = None,
                reasons: bool = False) -> dict[str, Any]:
    """Returns ``findings``, ``near_duplicate_pair_score`` (nearest neighbour's search cosine, every row;
    None when ``candidates`` are given), ``stats`` (deterministic; seconds go to ``timings``).

    ``candidates``: verify these row pairs instead of searching (``compared``, ``ts``: see ``match_pairs``).
    ``sums``: the rows' ``sum_vectors`` when the caller made them (e.g. in a file: they are 4 d bytes a row),
    else they are computed here. ``prompt_keys``: per-row digests of the prompt text; with ``compared`` they
    keep rows known to be different comparisons (same prompt, no match of each other) out of one group
    (``edge_findings``). ``candidates_only``: apply the looser
    candidate rule and return the surviving pairs (``a``, ``b``) and their rows (``candidate_rows``)
    instead of findings. ``two_rows``: see ``match_edges``. ``reasons``: ``near`` per row, its nearest searched
    pair and that pair's outcome (``reasons.row_outcomes``; under the loose rule with ``candidates_only``)."""
    n = len(rows)
    timings = {} if timings is None else timings
    t0 = time.perf_counter()
    stats: dict[str, Any] = {"n_rows": int(n)}
    nearest: np.ndarray | None = None
    if candidates is None:
        S = sum_vectors(P, C, R) if sums is None else sums
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
    out: dict[str, Any] = {NEAR_DUPLICATE_INFO.score_key: nearest, "stats": stats}
    if keep_neighbours:
        out["neighbours"] = (a, b, sim)
    if reasons and sim is not None:
        out["near"] = row_outcomes(n, a, b, sim, lambda x, y: pair_outcomes(
            P, C, R, sk, ln, x, y, dup, con, want_dups, want_contradictions, candidates_only, compared, ts, two_rows))
    edges_s, edges_x = match_edges(P, C, R, sk, ln, a, b, dup, con, want_dups, want_contradictions,
                                   candidates_only, compared, ts, two_rows)
    if candidates_only:
        keep = pair_member(a, b, np.concatenate([edges_s["a"], edges_x["a"]]),
                           np.concatenate([edges_s["b"], edges_x["b"]]), n)
        out.update(a=a[keep], b=b[keep], candidate_rows=np.unique(np.concatenate([a[keep], b[keep]])), findings=[])
        stats["n_candidate_pairs"] = int(keep.sum())
    else:
        keys = None
        if prompt_keys is not None and compared is not None:
            keys = (np.asarray(prompt_keys, dtype=np.int64), same_keys(prompt_keys, compared[0]))
        out["findings"] = edge_findings(rows, edges_s, edges_x, want_dups, want_contradictions, stats, keys)
    timings["near_duplicates:verify_s"] = timings.get("near_duplicates:verify_s", 0.0) + time.perf_counter() - t1
    return out

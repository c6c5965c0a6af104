"""Matches -> groups -> findings: near-duplicate groups (one representative kept) and contradiction groups,
with the detail that says per field why two rows matched. Groups never join rows known to be different
comparisons (``unionfind.Separated``)."""

from __future__ import annotations

import numpy as np

from pairaudit.datatypes import Finding
from pairaudit.stages.exact import CONTRADICTION_INFO
from pairaudit.stages.near_duplicates.infos import NEAR_DUPLICATE_INFO
from pairaudit.stages.near_duplicates.match import SAME, WORDING, strength
from pairaudit.stages.near_duplicates.unionfind import Separated, UnionFind

FIELDS = ("prompt", "chosen", "rejected")


def explain(sim: np.ndarray, cos: np.ndarray, lex: np.ndarray, why: np.ndarray,
            names: tuple[str, str, str] = FIELDS) -> str:
    parts = []
    for f, name in enumerate(names):
        if why[f] == SAME:
            parts.append(f"{name}: same words")  # equal once casefolded, punctuation and spacing aside
        elif why[f] == WORDING:
            parts.append(f"{name}: wording {lex[f]:.2f} (cosine {cos[f]:.3f})")
        else:
            parts.append(f"{name}: cosine {cos[f]:.3f}")
    return "; ".join(parts)


def _band(sure: bool, t: float, weakest: float = 0.0, why: np.ndarray | None = None) -> str:
    """``"; "`` and the copy threshold's verdict, or nothing where both responses are the same words (a copy
    under any threshold: the calibrated one decided nothing)."""
    if why is not None and why[1] == SAME and why[2] == SAME:
        return ""
    return "; " + _verdict(sure, t, weakest)


def _verdict(sure: bool, t: float, weakest: float) -> str:
    if sure:
        return f"each response >= the copy threshold {t:.3f}"
    if weakest >= t - 1e-6:  # every response at the copy threshold: the wording held it back (match_pairs)
        return ("unsure: the prompt's only two rows, a response worded apart (wording under the floor), "
                "flagged, not dropped")
    return f"unsure: a response below the copy threshold {t:.3f}, flagged, not dropped"


def duplicate_findings(rows: np.ndarray, a: np.ndarray, b: np.ndarray, sure: np.ndarray, sim: np.ndarray,
                       cos: np.ndarray, lex: np.ndarray, why: np.ndarray, thr: np.ndarray,
                       separate: Separated | None = None) -> tuple[list[Finding], int, int]:
    """Union-find over the sure straight matches, strongest first; the smallest row of a group is kept (no
    finding), the others get ``group`` = that row and ``score`` = the weakest response similarity of their
    closest match. A match in the unsure band gives its larger row a flag-only finding (``unsure``) unless that
    row is already in a group; ``group`` = the other row's group representative. ``separate``: a
    :class:`Separated` over the same row indices; a match that would put two rows known to be different
    comparisons into one group is left out (no group, no flag)."""
    findings: list[Finding] = []
    if not len(a):
        return findings, 0, 0
    st = strength(sim)
    uf = separate if separate is not None else UnionFind(len(rows))
    order = np.argsort(-st, kind="stable").tolist()
    best_edge: dict[int, int] = {}
    joined = np.zeros(len(a), dtype=bool)
    for e in order:
        if sure[e] and (separate is None or separate.join(int(a[e]), int(b[e]))):
            if separate is None:
                uf.union(int(a[e]), int(b[e]))
            joined[e] = True
            for x in (int(a[e]), int(b[e])):
                best_edge.setdefault(x, e)
    sa, sb = a[joined], b[joined]
    groups = uf.groups(np.concatenate([sa, sb])) if len(sa) else []
    rep_of: dict[int, int] = {}
    for grp in groups:
        rep = grp[np.argmin(rows[grp])]
        rep_row = int(rows[rep])
        for x in grp.tolist():
            rep_of[x] = rep_row
            if x == rep:
                continue
            e = best_edge[x]
            y = int(b[e]) if int(a[e]) == x else int(a[e])
            findings.append(NEAR_DUPLICATE_INFO.finding(
                int(rows[x]), None, float(round(float(st[e]), 6)), rep_row,
                f"near duplicate of row {int(rows[y])} ({explain(sim[e], cos[e], lex[e], why[e])}"
                f"{_band(True, float(thr[e]), why=why[e])}); group of {len(grp)} kept as row {rep_row}"))
    done = {int(rows[x]) for x in rep_of}
    for e in order:
        if sure[e]:
            continue
        x, y = (int(a[e]), int(b[e])) if rows[a[e]] > rows[b[e]] else (int(b[e]), int(a[e]))
        if int(rows[x]) in done or (separate is not None and separate.conflict(x, y)):
            continue
        done.add(int(rows[x]))
        g = rep_of.get(y, int(rows[y]))
        findings.append(NEAR_DUPLICATE_INFO.finding(
            int(rows[x]), None, float(round(float(st[e]), 6)), g,
            f"possible near duplicate of row {int(rows[y])} ({explain(sim[e], cos[e], lex[e], why[e])}"
            f"{_band(False, float(thr[e]), float(strength(sim[e])))})", unsure=True))
    return findings, len(groups), int(sum(len(g) for g in groups))


def contradiction_findings(rows: np.ndarray, a: np.ndarray, b: np.ndarray, sure: np.ndarray, sim: np.ndarray,
                           cos: np.ndarray, lex: np.ndarray, why: np.ndarray, thr: np.ndarray,
                           separate: Separated | None = None,
                           sides: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
                           ) -> tuple[list[Finding], int]:
    """Every row of a group of crosswise matches gets a finding; ``group`` = smallest row of the group. A row
    whose crosswise matches all sit in the unsure band gets a flag-only finding. ``separate``: as in
    ``duplicate_findings``; ``sides``: the straight matches (a, b, sure, strength), which put two rows on one
    side. Both kinds are joined in one order, sure first, strongest first, so a crosswise match cannot tie row
    R to the copy of a row S that R is known to differ from (a paraphrased copy of S whose two responses are
    alike looks swapped against R, another row of S's prompt); only crosswise matches give findings."""
    findings: list[Finding] = []
    if not len(a):
        return findings, 0
    st = strength(sim)
    uf = separate if separate is not None else UnionFind(len(rows))
    keep = np.ones(len(a), dtype=bool)
    sa, sb, s_sure, s_st = sides if sides is not None and separate is not None else (a[:0], b[:0], sure[:0], st[:0])
    ea, eb = np.concatenate([a, sa]), np.concatenate([b, sb])
    for e in np.lexsort((-np.concatenate([st, s_st]), ~np.concatenate([sure, s_sure]))).tolist():
        if separate is None:
            uf.union(int(ea[e]), int(eb[e]))
        elif e >= len(a):
            n_refused = separate.refused
            separate.join(int(ea[e]), int(eb[e]))
            separate.refused = n_refused  # only crosswise matches left out are counted
        else:
            keep[e] = separate.join(int(ea[e]), int(eb[e]))
    partners: dict[int, list[tuple[int, int]]] = {}
    for e in np.flatnonzero(keep).tolist():
        x, y = int(a[e]), int(b[e])
        partners.setdefault(x, []).append((y, e))
        partners.setdefault(y, []).append((x, e))
    if not partners:
        return findings, 0
    groups = uf.groups(np.concatenate([a[keep], b[keep]]))
    names = ("prompt", "chosen~their rejected", "rejected~their chosen")
    for grp in groups:
        g = int(rows[grp].min())
        for x in grp.tolist():
            ps = sorted(partners[x], key=lambda t: (not sure[t[1]], int(rows[t[0]])))
            y, e = ps[0]
            others = ", ".join(str(int(rows[p])) for p, _ in ps[:5])
            findings.append(CONTRADICTION_INFO.finding(
                int(rows[x]), None, round(float(st[e]), 6), g,
                f"{'' if sure[e] else 'possibly '}the same two responses (each a copy or paraphrase) preferred the "
                f"other way in row(s) {others} (row {int(rows[y])}: {explain(sim[e], cos[e], lex[e], why[e], names)}"
                f"{_band(bool(sure[e]), float(thr[e]), why=why[e])})", unsure=not bool(sure[e])))
    return findings, len(groups)

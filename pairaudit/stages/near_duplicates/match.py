"""Field-by-field verification of candidate row pairs, and the groups that come out of it.

The similarity of one field of two rows is 1 when the normalised texts are equal (casefolded,
punctuation -> space, whitespace collapsed: "same text"), else the larger of the embedding cosine
("cosine") and the wording similarity (rapidfuzz ``token_sort_ratio`` of the normalised texts, so a moved
sentence costs little: "wording"). Two rows match when every field's similarity is ``>= min_field`` and
their mean is ``>= min_mean``.

The mean is what separates: a paraphrased copy keeps most of its fields very close even when one answer
lost a sentence, while two different conversations that merely share a topic or a template stay in the
middle on every field. The wording similarity is the tie-breaker for light edits of short texts ("Yes."
vs "Well, yes."), which move an embedding far; it never vetoes a match. Thresholds are calibrated in
docs/near_duplicates.md; every finding's ``detail`` says, per field, why it matched.

Texts are represented by a *sketch* (the normalised text when <= 256 UTF-8 bytes, else its first and
last 128 bytes) plus the normalised length: the lexical similarity of long texts is computed on the
sketches and capped by the ratio of their lengths.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from pairaudit.datatypes import Finding
from pairaudit.stages.near_duplicates.search import rowdot
from pairaudit.stages.near_duplicates.unionfind import UnionFind

SKETCH_BYTES = 256
HALF = SKETCH_BYTES // 2
FIELDS = ("prompt", "chosen", "rejected")
_PUNCT = re.compile(r"[^\w\s]+")
SAME, COSINE, WORDING = 1, 2, 3  # why a field matched (0: it did not)
WHY = {SAME: "same text", COSINE: "cosine", WORDING: "cosine + wording"}


def normalise(text: str) -> str:
    """Casefold, punctuation -> space, collapse whitespace."""
    return " ".join(_PUNCT.sub(" ", text.casefold()).split())


def sketch(text: str) -> tuple[bytes, int]:
    """Compact stand-in for a text in the lexical comparison: (sketch bytes, normalised length)."""
    b = normalise(text).encode("utf-8", "surrogatepass")
    if len(b) <= SKETCH_BYTES:
        return b, len(b)
    return b[:HALF] + b"\n" + b[-HALF:], len(b)


def lexical(sa: bytes, la: int, sb: bytes, lb: int) -> float:
    """Word-order-insensitive similarity of two sketches (0..1); for long texts capped by their length ratio."""
    from rapidfuzz import fuzz

    r = fuzz.token_sort_ratio(sa.decode("utf-8", "ignore"), sb.decode("utf-8", "ignore")) / 100.0
    if max(la, lb) > SKETCH_BYTES:
        r = min(r, min(la, lb) / max(la, lb))
    return r


def char_ratio(sa: bytes, la: int, sb: bytes, lb: int) -> float:
    """rapidfuzz ratio of two sketches (0..1), capped by the length ratio for long texts."""
    from rapidfuzz import fuzz

    r = fuzz.ratio(sa.decode("utf-8", "ignore"), sb.decode("utf-8", "ignore")) / 100.0
    if max(la, lb) > SKETCH_BYTES:
        r = min(r, min(la, lb) / max(la, lb))
    return r


def match_pairs(P: np.ndarray, C: np.ndarray, R: np.ndarray, sk: np.ndarray, ln: np.ndarray,
                a: np.ndarray, b: np.ndarray, rule: dict[str, Any], straight: bool
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Verify candidate row pairs (a[i], b[i]); ``sk``/``ln``: (n, 3) sketches / lengths; ``rule``:
    ``min_field`` and ``min_mean``.

    ``straight``: prompt~prompt, chosen~chosen, rejected~rejected; else crosswise (chosen_a~rejected_b,
    rejected_a~chosen_b). Returns (ok mask, similarities (m, 3), cosines (m, 3), wording similarities
    (m, 3; NaN where not computed), why (m, 3): SAME / COSINE / WORDING). Pairs are dropped field by field
    as soon as they cannot pass any more, so most wording similarities are never computed."""
    pairs = [(P, P, 0, 0), (C, C, 1, 1), (R, R, 2, 2)] if straight else [(P, P, 0, 0), (C, R, 1, 2), (R, C, 2, 1)]
    m = len(a)
    sim = np.zeros((m, 3), dtype=np.float32)
    cos = np.zeros((m, 3), dtype=np.float32)
    lex = np.full((m, 3), np.nan, dtype=np.float32)
    why = np.zeros((m, 3), dtype=np.int8)
    ok = np.ones(m, dtype=bool)
    min_field, min_mean = float(rule["min_field"]), float(rule["min_mean"])
    for f, (A, B, fa, fb) in enumerate(pairs):
        idx = np.flatnonzero(ok)
        if not len(idx):
            break
        c = rowdot(A, B, a[idx], b[idx])
        cos[idx, f] = c
        equal = (sk[a[idx], fa] == sk[b[idx], fb]) & (ln[a[idx], fa] == ln[b[idx], fb])
        s = np.where(equal, 1.0, c).astype(np.float32)
        w = np.where(equal, SAME, COSINE).astype(np.int8)
        for j in np.flatnonzero(~equal).tolist():
            i = idx[j]
            lx = lexical(sk[a[i], fa], int(ln[a[i], fa]), sk[b[i], fb], int(ln[b[i], fb]))
            lex[i, f] = lx
            if lx > s[j]:
                s[j], w[j] = lx, WORDING
        sim[idx, f] = s
        why[idx, f] = w
        ok[idx] = (s >= min_field) & (sim[idx, :f + 1].sum(axis=1) + (2 - f) >= 3 * min_mean - 1e-6)
    ok &= sim.mean(axis=1) >= min_mean - 1e-6
    return ok, sim, cos, lex, why


def explain(sim: np.ndarray, cos: np.ndarray, lex: np.ndarray, why: np.ndarray,
            names: tuple[str, str, str] = FIELDS) -> str:
    parts = []
    for f, name in enumerate(names):
        if why[f] == SAME:
            parts.append(f"{name}: same text")
        elif why[f] == WORDING:
            parts.append(f"{name}: wording {lex[f]:.2f} (cosine {cos[f]:.3f})")
        else:
            parts.append(f"{name}: cosine {cos[f]:.3f}")
    return "; ".join(parts) + f"; mean {float(sim.mean()):.3f}"


def duplicate_findings(rows: np.ndarray, a: np.ndarray, b: np.ndarray, sim: np.ndarray, cos: np.ndarray,
                       lex: np.ndarray, why: np.ndarray) -> tuple[list[Finding], int, int]:
    """Union-find over verified straight matches; the smallest row of a group is kept (no finding), the
    others get ``group`` = that row and ``score`` = the mean field similarity of their closest match."""
    findings: list[Finding] = []
    if not len(a):
        return findings, 0, 0
    uf = UnionFind(len(rows))
    uf.union_edges(a, b)
    strength = sim.mean(axis=1)
    best_edge: dict[int, int] = {}
    for e in np.argsort(-strength, kind="stable").tolist():
        for x in (int(a[e]), int(b[e])):
            best_edge.setdefault(x, e)
    groups = uf.groups(np.concatenate([a, b]))
    for grp in groups:
        rep = grp[np.argmin(rows[grp])]
        rep_row = int(rows[rep])
        for x in grp.tolist():
            if x == rep:
                continue
            e = best_edge[x]
            y = int(b[e]) if int(a[e]) == x else int(a[e])
            findings.append(Finding(
                int(rows[x]), "near_duplicate_pair", None, float(round(float(strength[e]), 6)), rep_row,
                f"near duplicate of row {int(rows[y])} ({explain(sim[e], cos[e], lex[e], why[e])}); "
                f"group of {len(grp)} kept as row {rep_row}"))
    return findings, len(groups), int(sum(len(g) for g in groups))


def contradiction_findings(rows: np.ndarray, a: np.ndarray, b: np.ndarray, sim: np.ndarray, cos: np.ndarray,
                           lex: np.ndarray, why: np.ndarray) -> tuple[list[Finding], int]:
    """Every row of a group of crosswise matches gets a finding; ``group`` = smallest row of the group."""
    findings: list[Finding] = []
    if not len(a):
        return findings, 0
    uf = UnionFind(len(rows))
    uf.union_edges(a, b)
    partners: dict[int, list[tuple[int, int]]] = {}
    for e, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        partners.setdefault(x, []).append((y, e))
        partners.setdefault(y, []).append((x, e))
    groups = uf.groups(np.concatenate([a, b]))
    names = ("prompt", "chosen~their rejected", "rejected~their chosen")
    for grp in groups:
        g = int(rows[grp].min())
        for x in grp.tolist():
            ps = sorted(partners[x], key=lambda t: int(rows[t[0]]))
            y, e = ps[0]
            others = ", ".join(str(int(rows[p])) for p, _ in ps[:5])
            findings.append(Finding(
                int(rows[x]), "contradictory_pair", None, round(float(sim[e].mean()), 6), g,
                f"near-same prompt and responses preferred the other way in row(s) {others} "
                f"(row {int(rows[y])}: {explain(sim[e], cos[e], lex[e], why[e], names)})"))
    return findings, len(groups)

"""Field-by-field verification of candidate row pairs (the groups and findings they give: ``groups``).

The similarity of one field of two rows is 1 when the normalised texts are equal (casefolded,
punctuation -> space, whitespace collapsed: "same text"), else the larger of the embedding cosine
("cosine") and the wording similarity (rapidfuzz ``token_sort_ratio`` of the normalised texts, so a moved
sentence costs little: "wording"). Two rows match when the prompts' similarity is ``>= min_prompt`` and
EACH response's is ``>= min_response`` (a copy or paraphrase of its counterpart); between
``min_response_flag`` and ``min_response`` the match is unsure and only flagged. There is no mean over the
fields: in data with several pairs per prompt the prompt and one response are shared by design, and they
must not vouch for a third field that is a different answer. Two responses that some row compares with
each other (its chosen and its rejected) are different answers by construction and never match.
``min_response`` is calibrated per dataset (``calibrate``); docs/near_duplicates.md has the measurements;
every finding's ``detail`` says, per field, why it matched.

Texts are represented by a *sketch* (the normalised text when <= 256 UTF-8 bytes, else its first and
last 128 bytes) plus the normalised length: the lexical similarity of long texts is computed on the
sketches and capped by the ratio of their lengths.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from pairaudit.stages.near_duplicates.search import rowdot
from pairaudit.stages.near_duplicates.texts import text_hash
from pairaudit.stages.near_duplicates.threads import native_threads

SKETCH_BYTES = 256
HALF = SKETCH_BYTES // 2
_PUNCT = re.compile(r"[^\w\s]+")
_SPACE = re.compile(r"\s")
LONG_PIECE = 1 << 16  # characters normalised at a time
SAME, COSINE, WORDING = 1, 2, 3  # why a field matched (0: it did not)
# a verified pair's outcome (``match_pairs(outcome=...)``; ``reasons`` words them): the rule that decided it
MATCHED, UNSURE, APART, OTHER_NUMBERS, COMPARED, UNDER_LOCAL, WORDED_APART, COSINE_APART, OTHER_WAY, LONE_APART = range(10)
OUTCOME_FIELDS = ("code", "field", "value", "limit")
LOOSE = 32  # added to the code of a pair the loose candidate rule (hybrid mode's static search) turned down
MATCH_CHUNK = 1 << 16  # candidate pairs compared at a time (their sketches are copied, ~1.4 KB a pair): ~90 MB


def normalise(text: str) -> str:
    """Casefold, punctuation -> space, collapse whitespace: the runs of word characters (``\\w``) of the
    casefolded text joined by single spaces. A long text is done a piece at a time (cut before a whitespace
    character, which no run crosses), with no list of all its words."""
    if len(text) <= LONG_PIECE:
        return " ".join(_PUNCT.sub(" ", text.casefold()).split())
    out, pos = [], 0
    while pos < len(text):
        m = _SPACE.search(text, pos + LONG_PIECE) if len(text) - pos > LONG_PIECE else None
        end = m.start() if m else len(text)
        piece = " ".join(_PUNCT.sub(" ", text[pos:end].casefold()).split())
        if piece:
            out.append(piece)
        pos = end
    return " ".join(out)


def sketch(text: str) -> tuple[bytes, int]:
    """Compact stand-in for a text in the lexical comparison: (sketch bytes, normalised length)."""
    return _cut(normalise(text).encode("utf-8", "surrogatepass"))


def _cut(b: bytes) -> tuple[bytes, int]:
    """A normalised text's UTF-8 bytes -> (its sketch: whole when <= ``SKETCH_BYTES``, else the first and last
    ``HALF`` bytes; its length)."""
    return (b if len(b) <= SKETCH_BYTES else b[:HALF] + b"\n" + b[-HALF:]), len(b)


def text_facts(text: str) -> tuple[bytes, int, int, int]:
    """What the stage keeps of a text, from one normalisation: ``sketch(text)``, the digest of the normalised
    text (a response's: same normalised text, same answer) and of the text itself (a prompt's).

    Args:
        text: a prompt or response.

    Returns:
        (sketch bytes, normalised length, ``text_hash(normalise(text))``, ``text_hash(text)``).

    Example:
        >>> sk, n, h_norm, h_raw = text_facts("Hello,  World!")
        >>> (sk, n, h_norm == text_facts("hello world")[2], h_raw == text_facts("hello world")[3])
        (b'hello world', 11, True, False)
    """
    norm = normalise(text)
    return (*_cut(norm.encode("utf-8", "surrogatepass")), text_hash(norm), text_hash(text))


def lexical(sa: bytes, la: int, sb: bytes, lb: int) -> float:
    """Word-order-insensitive similarity of two sketches (0..1); for long texts capped by their length ratio."""
    from rapidfuzz import fuzz

    r = fuzz.token_sort_ratio(sa.decode("utf-8", "ignore"), sb.decode("utf-8", "ignore")) / 100.0
    if max(la, lb) > SKETCH_BYTES:
        r = min(r, min(la, lb) / max(la, lb))
    return r


def lexical_many(sa: np.ndarray, la: np.ndarray, sb: np.ndarray, lb: np.ndarray, scorer: str = "token_sort_ratio",
                 below: float | None = None, cutoff: bool = False) -> np.ndarray:
    """``lexical`` (``scorer="ratio"``: ``char_ratio``) of many sketch pairs at once (float64, the same values:
    rapidfuzz's ``cpdist`` runs the same scorer over the pairs in C++ instead of one Python call per pair).

    ``below``: a pair of long texts whose length-ratio cap is under it gets the cap itself (an upper bound of
    its value, so also under ``below``) without running the scorer: for a caller that only asks whether the
    value reaches ``below`` (the verification's field floors), the answer is the same and ~40% of random
    response pairs need no scorer. ``cutoff`` (with ``below``): the scorer's ``score_cutoff`` too, so it may stop
    early and return 0 for a pair under ``below``; values from ``below`` up are exact."""
    from rapidfuzz import fuzz, process

    if not len(sa):
        return np.zeros(0, dtype=np.float64)
    la, lb = np.asarray(la, dtype=np.int64), np.asarray(lb, dtype=np.int64)
    hi, lo = np.maximum(la, lb), np.minimum(la, lb)
    long = hi > SKETCH_BYTES
    cap = np.ones(len(la), dtype=np.float64)
    cap[long] = lo[long] / hi[long]
    r = cap.copy()
    run = np.arange(len(la)) if below is None else np.flatnonzero(cap >= below)
    if len(run):
        kw = {"score_cutoff": below * 100.0} if cutoff and below is not None else {}
        r[run] = np.minimum(cap[run], process.cpdist([x.decode("utf-8", "ignore") for x in sa[run].tolist()],
                                                     [x.decode("utf-8", "ignore") for x in sb[run].tolist()],
                                                     scorer=getattr(fuzz, scorer), dtype=np.float64,
                                                     workers=native_threads(), **kw) / 100.0)
    return r


def char_ratio(sa: bytes, la: int, sb: bytes, lb: int) -> float:
    """rapidfuzz ratio of two sketches (0..1), capped by the length ratio for long texts."""
    from rapidfuzz import fuzz

    r = fuzz.ratio(sa.decode("utf-8", "ignore"), sb.decode("utf-8", "ignore")) / 100.0
    if max(la, lb) > SKETCH_BYTES:
        r = min(r, min(la, lb) / max(la, lb))
    return r


def token_sorted(sk: Any, chunk: int = 4096, out: Any = None) -> Any:
    """Each sketch of ``sk`` ((n, 3), or one per text: (n,)) with its words sorted (``" ".join(sorted(words))``, UTF-8): what rapidfuzz's
    ``token_sort_ratio`` compares. The character ratio of two of them is exactly the ``token_sort_ratio`` of
    the sketches (tested), so the verification sorts each row's words once instead of once per candidate pair
    (~40 pairs a row at 1M rows; the per-pair sort was most of ``cpdist``'s time). ``out``: where to write
    them (e.g. a spill file), else a new array. ``chunk`` rows at a time: their Python strings are the
    transient working set (65,536 rows a chunk: ~60 MB of them)."""
    n = len(sk)
    out = np.empty(sk.shape, dtype=f"S{SKETCH_BYTES + 1}") if out is None else out
    for lo in range(0, n, chunk):
        part = np.asarray(sk[lo:lo + chunk])
        out[lo:lo + chunk] = np.array([" ".join(sorted(x.decode("utf-8", "ignore").split())).encode("utf-8")
                                       for x in part.ravel().tolist()],
                                      dtype=f"S{SKETCH_BYTES + 1}").reshape(part.shape)
    return out


def pair_key(h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
    """Order-free 64-bit key of two response digests."""
    lo, hi = np.minimum(h1, h2).astype(np.uint64), np.maximum(h1, h2).astype(np.uint64)
    with np.errstate(over="ignore"):
        return (lo * np.uint64(0x9E3779B97F4A7C15) ^ hi).astype(np.int64)


def compared_keys(hresp: np.ndarray) -> np.ndarray:
    """Sorted keys of the response pairs some row compares (its chosen vs its rejected, different texts):
    two different answers by construction, so never a copy of each other."""
    diff = hresp[:, 0] != hresp[:, 1]
    return np.unique(pair_key(hresp[diff, 0], hresp[diff, 1]))


def match_pairs(P: np.ndarray, C: np.ndarray, R: np.ndarray, sk: np.ndarray, ln: np.ndarray,
                a: np.ndarray, b: np.ndarray, rule: dict[str, Any], straight: bool,
                compared: tuple[np.ndarray, np.ndarray] | None = None, ts: Any = None,
                two_rows: np.ndarray | None = None, outcome: dict[str, np.ndarray] | None = None,
                prompts: tuple[np.ndarray, ...] | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Verify candidate row pairs (a[i], b[i]); ``sk``/``ln``: (n, 3) sketches / lengths (``ts``: the sketches'
    ``token_sorted`` forms when the caller made them: the same values, faster); ``rule``:
    ``min_prompt`` (the prompts), ``min_response`` (each response: a copy) and ``min_response_flag`` (each
    response at least this: the unsure band, flagged); ``prompt_wording_from`` (hybrid mode's candidate rule):
    the prompts' wording counts only from this value up, below it their cosine alone.

    ``straight``: prompt~prompt, chosen~chosen, rejected~rejected; else crosswise (chosen_a~rejected_b,
    rejected_a~chosen_b). No mean: every field must pass on its own, so two identical fields never vouch for
    a third. ``compared``: (per-row response digests (n, 2), ``compared_keys``): two responses that some row
    compares with each other are different answers and never match, however close their embeddings.
    When no response is shared verbatim, a pair's copy threshold is ``max(chosen~rejected of either row) +
    local_margin``, between ``floor_response`` and ``min_response`` (the rows' own different answers are
    the local baseline). Rows with the same prompt text: each differing response needs wording (here the
    larger of token_sort_ratio and the character ratio) >= ``floor_response_flag`` (the embedding alone is
    what different answers to one prompt reach), and in the unsure band its cosine as well; ``two_rows`` (per
    row: its prompt text has exactly two rows): the lone-pair rule of ``_one_prompt_rule``. A differing field of
    two short texts that both hold numbers matches only when they hold the same numbers (``other_numbers``).
    Returns (ok mask: passes the band's floor, sure mask: every response >= its threshold, similarities (m, 3),
    cosines (m, 3), wording similarities (m, 3; NaN where not computed), why (m, 3), each pair's copy threshold).
    Pairs are dropped field by field as soon as one field fails, so most wording similarities are never
    computed. ``outcome``: a dict filled with ``OUTCOME_FIELDS`` arrays, per pair the rule that decided it
    (``code``: ``MATCHED`` ... ``COSINE_APART``), the field it read (0 prompt, 1 chosen, 2 rejected), the value
    and the limit it was held to. ``prompts``: the prompt field of every pair as ``prompt_field`` gives it for
    this rule (both orientations read the prompts alike: ``verify.match_edges`` reads them once for both)."""
    pairs = [(P, P, 0, 0), (C, C, 1, 1), (R, R, 2, 2)] if straight else [(P, P, 0, 0), (C, R, 1, 2), (R, C, 2, 1)]
    m = len(a)
    sim = np.zeros((m, 3), dtype=np.float32)
    cos = np.zeros((m, 3), dtype=np.float32)
    lex = np.full((m, 3), np.nan, dtype=np.float32)
    why = np.zeros((m, 3), dtype=np.int8)
    ok = np.ones(m, dtype=bool)
    out = new_outcome(m) if outcome is not None else None
    t_glob, tf_glob = float(rule["min_response"]), float(rule["min_response_flag"])
    fl, flf = float(rule.get("floor_response", t_glob)), float(rule.get("floor_response_flag", tf_glob))
    floors = (float(rule["min_prompt"]),) + (min(fl, flf, tf_glob),) * 2
    lone = _lone_candidates(a, b, rule, compared, two_rows)
    for f, (A, B, fa, fb) in enumerate(pairs):
        idx = np.flatnonzero(ok)
        if not len(idx):
            break
        floor = _field_floor(floors[f], f, idx, lone, rule)
        if f == 0 and prompts is not None:  # every pair is still in (idx is all of them)
            equal, differ, c, lx, s, better = prompts
            s = s.copy()  # _other_answers writes into it
        else:
            equal, differ, c, lx, s, better = field_similarity(A, B, sk, ln, ts, (a[idx], fa), (b[idx], fb), floor,
                                                               rule)
        ia, ib = a[idx[differ]], b[idx[differ]]
        cos[idx, f] = c
        lex[idx[differ], f] = np.where(lx >= 0, lx, np.nan)
        w = np.where(equal, SAME, COSINE).astype(np.int8)
        w[differ[better]] = WORDING
        value = s.copy()
        code = _other_answers(s, floor, (differ, equal), (ia, fa), (ib, fb), (a[idx], b[idx]), sk, ln, rule,
                              compared if f else None)
        sim[idx, f] = s
        why[idx, f] = w
        ok[idx] = s >= floor - 1e-6
        if out is not None:
            fail = ~ok[idx]
            record(out, idx[fail], code[fail], f, value[fail], floor[fail])
        if f == 0 and lone is not None:  # the lone-pair rule is for two rows of one prompt text
            lone &= why[:, 0] == SAME
    thr, thr_f = _copy_thresholds(ok, why, C, R, a, b, rule, (t_glob, tf_glob, fl, flf))
    ok, sure = _thresholds_and_prompt_rule(ok, (sim, cos, lex, why), (thr, thr_f), (a, b), sk, ln, rule, straight,
                                           lone, out)
    if out is not None:
        outcome.update(out)  # type: ignore[union-attr]
    return ok, sure, sim, cos, lex, why, thr


def prompt_field(P: Any, sk: Any, ln: Any, ts: Any, a: np.ndarray, b: np.ndarray, rule: dict[str, Any]
                 ) -> tuple[np.ndarray, ...]:
    """The prompt field of the pairs ``(a[i], b[i])`` under ``rule`` (``field_similarity``'s tuple), as
    ``match_pairs`` reads it first: the same for the straight and the crosswise orientation."""
    return field_similarity(P, P, sk, ln, ts, (a, 0), (b, 0), np.full(len(a), float(rule["min_prompt"])), rule)


def same_prompt_reading(r1: dict[str, Any], r2: dict[str, Any]) -> bool:
    """Whether two rules read the prompt field alike (``prompt_field`` gives the same for both)."""
    return all(r1.get(k) == r2.get(k) for k in ("min_prompt", "prompt_wording_from"))


def field_similarity(A: Any, B: Any, sk: Any, ln: Any, ts: Any, xa: tuple[np.ndarray, int],
                     xb: tuple[np.ndarray, int], floor: np.ndarray, rule: dict[str, Any]) -> tuple[np.ndarray, ...]:
    """One field of the pairs (rows ``xa[0][i]`` field ``xa[1]``, rows ``xb[0][i]`` field ``xb[1]``) as the
    verification reads it, each pair held to ``floor[i]``: whether the texts are the same (normalised), the
    positions of the pairs whose texts differ, the cosine (1 for the same text: its vector is never read), the
    wording of the differing pairs (-1 where it does not count: the candidate rule's prompts under
    ``prompt_wording_from``), the similarity (1 for the same text, else the larger of cosine and wording;
    float32) and, of the differing pairs, where the wording was the larger. ``match_pairs`` reads every field
    with it, ``verify.prompts_pass`` the prompts."""
    (x, fa), (y, fb) = xa, xb
    equal = (sk[x, fa] == sk[y, fb]) & (ln[x, fa] == ln[y, fb])
    c = np.ones(len(x), dtype=np.float32)
    differ = np.flatnonzero(~equal)
    ia, ib = x[differ], y[differ]
    c[differ] = rowdot(A, B, ia, ib)
    if fa == 0 and "prompt_wording_from" in rule:  # the candidate rule: wording counts where it decides alone
        lx = _deciding_wording(sk, ln, ts, (ia, fa), (ib, fb), c[differ] < floor[differ] - 1e-6,
                               float(rule["prompt_wording_from"]))
    else:  # a pair whose length ratio keeps its wording under the field's floor fails or passes on its cosine
        lx = wording(sk, ln, ts, (ia, fa), (ib, fb), float(floor.min()) - 1e-4)
    s = np.where(equal, 1.0, c).astype(np.float32)
    better = lx > s[differ].astype(np.float64)
    s[differ[better]] = lx[better]
    return equal, differ, c, lx, s, better


def wording(sk: np.ndarray, ln: np.ndarray, ts: Any, xa: tuple[np.ndarray, int], xb: tuple[np.ndarray, int],
            below: float, cutoff: bool = False) -> np.ndarray:
    """The wording similarity of rows ``xa[0]`` field ``xa[1]`` and ``xb[0]`` field ``xb[1]`` (a pair whose length
    ratio keeps it under ``below`` gets that cap: it fails or passes on its cosine alone; ``cutoff``: any value
    under ``below`` may come back as 0, ``lexical_many``)."""
    (ia, fa), (ib, fb) = xa, xb
    if ts is None:
        return lexical_many(sk[ia, fa], ln[ia, fa], sk[ib, fb], ln[ib, fb], below=below, cutoff=cutoff)
    # token_sort_ratio = the character ratio of the word-sorted sketches
    return lexical_many(ts[ia, fa], ln[ia, fa], ts[ib, fb], ln[ib, fb], scorer="ratio", below=below, cutoff=cutoff)


def _deciding_wording(sk: np.ndarray, ln: np.ndarray, ts: Any, xa: tuple[np.ndarray, int],
                      xb: tuple[np.ndarray, int], short: np.ndarray, at: float) -> np.ndarray:
    """The candidate rule's prompt wording: where the cosine is ``short`` of the floor, the wording when it reaches
    ``at`` (where it passes the deciding rule alone), else -1 (it does not count); -1 where the cosine passes
    (the wording is not needed: a passed field's value is never reported). Only the pairs short of the floor
    run the scorer, with ``at`` as its cutoff."""
    (ia, fa), (ib, fb) = xa, xb
    out = np.full(len(ia), -1.0)
    need = np.flatnonzero(short)
    if len(need):
        v = wording(sk, ln, ts, (ia[need], fa), (ib[need], fb), at - 1e-4, cutoff=True)
        out[need] = np.where(v >= at - 1e-6, v, -1.0)
    return out


def _other_answers(s: np.ndarray, floor: np.ndarray, masks: tuple[np.ndarray, np.ndarray], xa: tuple[np.ndarray, int],
                   xb: tuple[np.ndarray, int], rows: tuple[np.ndarray, np.ndarray], sk: np.ndarray, ln: np.ndarray,
                   rule: dict[str, Any], compared: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """Set ``s`` to 0 where one field of the pairs gives another answer: short texts with other numbers (the
    deciding rule, read only where the field would pass: few pairs), two responses some row compares with each
    other (``compared``, response fields only). Returns each pair's code (``APART`` where neither applies)."""
    differ, equal = masks
    (ia, fa), (ib, fb) = xa, xb
    code = np.full(len(s), APART, dtype=np.int8)
    if "floor_response_flag" in rule:
        near = np.flatnonzero(s[differ] >= floor[differ] - 1e-6)
        x, y = ia[near], ib[near]
        moved = differ[near[other_numbers(sk[x, fa], ln[x, fa], sk[y, fb], ln[y, fb])]]
        s[moved], code[moved] = 0.0, OTHER_NUMBERS
    if compared is not None and len(compared[1]):
        h, keys = compared
        k = pair_key(h[rows[0], fa - 1], h[rows[1], fb - 1])
        pos = np.minimum(np.searchsorted(keys, k), len(keys) - 1)
        moved = (keys[pos] == k) & ~equal
        s[moved], code[moved] = 0.0, COMPARED
    return code


def _thresholds_and_prompt_rule(ok: np.ndarray, fields: tuple[np.ndarray, ...], thresholds: tuple[np.ndarray, ...],
                                ab: tuple[np.ndarray, np.ndarray], sk: np.ndarray, ln: np.ndarray, rule: dict[str, Any],
                                straight: bool, lone: np.ndarray | None, out: dict[str, np.ndarray] | None
                                ) -> tuple[np.ndarray, np.ndarray]:
    """After the field floors: each pair's flag threshold (lone pairs aside), the copy threshold (sure), the
    deciding rule's rows-of-one-prompt rule; the outcomes recorded in ``out``. Returns (ok, sure)."""
    sim, cos, lex, why = fields
    thr, thr_f = thresholds
    weakest = sim[:, 1:].min(axis=1)
    held = ok & (weakest < thr_f - 1e-6) & (True if lone is None else ~lone)
    if out is not None:
        under = np.flatnonzero(held)
        record(out, under, UNDER_LOCAL, 1 + sim[under, 1:].argmin(axis=1), weakest[under], thr_f[under])
    ok = ok & ~held
    sure = ok & (weakest >= thr - 1e-6)
    if "floor_response_flag" in rule:  # the deciding (calibrated) rule, not the candidate generator's
        ok, sure = _one_prompt_rule(ok, sure, ab, sk, ln, (lex, cos, why), rule, straight, lone, out)
    if out is not None:
        won = np.flatnonzero(ok)
        same = (why[won, 1] == SAME) & (why[won, 2] == SAME)  # a copy under any threshold: none is named (NaN)
        record(out, won, np.where(sure[won], MATCHED, UNSURE), 1 + sim[won, 1:].argmin(axis=1), weakest[won],
               np.where(same, np.nan, thr[won]))
    return ok, sure


def _lone_candidates(a: np.ndarray, b: np.ndarray, rule: dict[str, Any],
                     compared: tuple[np.ndarray, np.ndarray] | None, two_rows: np.ndarray | None) -> np.ndarray | None:
    """Pairs that may be a prompt's only two rows sharing no response (``two_rows``; the same prompt text is
    checked on the prompt field): the deciding rule reads them with ``floor_wording_two_rows``. None when the
    rule has no such floor or the caller gave no ``two_rows``."""
    if two_rows is None or compared is None or "floor_wording_two_rows" not in rule:
        return None
    return two_rows[a] & two_rows[b] & ~shares_response(compared[0], a, b)


def _field_floor(floor: float, f: int, idx: np.ndarray, lone: np.ndarray | None, rule: dict[str, Any]) -> np.ndarray:
    """The floor each pair ``idx`` must reach on field ``f``: a response of a lone pair (``_lone_candidates``)
    needs only ``floor_wording_two_rows`` here (``_one_prompt_rule`` then asks its wording or its cosine)."""
    out = np.full(len(idx), floor, dtype=np.float64)
    if f and lone is not None:
        out[lone[idx]] = min(floor, float(rule["floor_wording_two_rows"]))
    return out


def new_outcome(m: int) -> dict[str, np.ndarray]:
    """``m`` pairs' outcomes, none decided yet (``code`` -1)."""
    return {"code": np.full(m, -1, np.int8), "field": np.zeros(m, np.int8), "value": np.zeros(m, np.float32),
            "limit": np.zeros(m, np.float32)}


def record(out: dict[str, np.ndarray], idx: np.ndarray, code: Any, field: Any, value: Any, limit: Any) -> None:
    """The pairs ``idx`` were decided by ``code`` on ``field`` (``value`` against ``limit``)."""
    out["code"][idx], out["field"][idx], out["value"][idx], out["limit"][idx] = code, field, value, limit


def _one_prompt_rule(ok: np.ndarray, sure: np.ndarray, ab: tuple[np.ndarray, np.ndarray], sk: np.ndarray,
                     ln: np.ndarray, fields: tuple[np.ndarray, np.ndarray, np.ndarray], rule: dict[str, Any],
                     straight: bool, lone: np.ndarray | None, out: dict[str, np.ndarray] | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Rows of one prompt (same text): their differing responses are the across-row negatives the copy
    threshold is calibrated on, different answers to that prompt, which can agree in meaning (a high cosine)
    but are worded apart. A copy there needs the wording too: each differing response's wording >= the band
    floor, and in the unsure band its cosine as well (wording here: the larger of token_sort_ratio and the
    plain character ratio: sorting the tokens moves a changed word of a short answer, "anything" -> "thing":
    0.79 vs 0.96). The prompt's only two rows sharing no response (``lone``: nothing in the data says the prompt
    was asked twice by design) need, per differing response, its wording >= ``floor_wording_two_rows`` or its
    cosine >= the band floor (a copy in words or in meaning: a sentence replaced, "No." -> "Nope."), and are
    flagged unless the wording is sure. ``out``: the pairs it turns down are recorded there. Returns (ok, sure)."""
    a, b = ab
    lex, cos, why = fields
    flf = float(rule["floor_response_flag"])
    fw2 = float(rule.get("floor_wording_two_rows", flf))
    m = _same_prompt_minima(np.flatnonzero(ok & (why[:, 0] == SAME)), len(a), a, b, sk, ln, lex, cos, why, straight,
                            (fw2, flf))
    wmin, cmin, wfield, cfield, apart_lone, lone_field, lone_w = m
    worded = wmin >= flf - 1e-6
    lone = np.zeros(len(a), bool) if lone is None else lone
    rest = ~lone & ok
    if out is not None:
        apart = np.flatnonzero(rest & ~worded)
        record(out, apart, WORDED_APART, wfield[apart], wmin[apart], flf)
        unsure = np.flatnonzero(rest & worded & ~(sure | (cmin >= flf - 1e-6)))
        record(out, unsure, COSINE_APART, cfield[unsure], cmin[unsure], flf)
        apart = np.flatnonzero(lone & ok & apart_lone)
        record(out, apart, LONE_APART, lone_field[apart], lone_w[apart], fw2)
    ok = np.where(lone, ok & ~apart_lone, ok & worded & (sure | (cmin >= flf - 1e-6)))
    return ok, sure & ok & worded


def shares_response(h: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether rows a[i] and b[i] have a response text in common (``h``: per-row response digests (n, 2))."""
    ha, hb = h[a], h[b]
    return ((ha[:, :1] == hb) | (ha[:, 1:] == hb)).any(axis=1)


_DIGITS = re.compile(rb"\d+")


def other_numbers(sa: np.ndarray, la: np.ndarray, sb: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """Per pair of short texts (both sketches whole: <= ``SKETCH_BYTES`` normalised): both hold numbers and not
    the same ones (sorted: a moved sentence keeps them). A short answer whose number changed is another answer
    ("$2.50" vs "$47.50", two Sudoku grids); in a long text one changed number is left to the similarity.

    Args:
        sa, sb: sketches (``sketch``), one per pair.
        la, lb: their normalised lengths.

    Returns:
        A bool array, True where the two texts give other numbers.

    Example:
        >>> import numpy as np
        >>> other_numbers(np.array([b"it costs 2 50"]), np.array([13]), np.array([b"it costs 47 50"]), np.array([14]))
        array([ True])
    """
    out = np.zeros(len(sa), dtype=bool)
    for i, (x, nx, y, ny) in enumerate(zip(sa.tolist(), la.tolist(), sb.tolist(), lb.tolist())):
        if x != y and max(nx, ny) <= SKETCH_BYTES:
            na, nb = sorted(_DIGITS.findall(x)), sorted(_DIGITS.findall(y))
            out[i] = bool(na) and bool(nb) and na != nb
    return out


def _copy_thresholds(ok: np.ndarray, why: np.ndarray, C: np.ndarray, R: np.ndarray, a: np.ndarray, b: np.ndarray,
                     rule: dict[str, Any], limits: tuple[float, float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's copy threshold and flag threshold. No response shared verbatim (a copy of the whole row: every
    field reworded, or a paraphrased answer pair): the rows' own chosen~rejected is the local "different answers"
    level; the calibrated threshold stays the ceiling, the floor the bottom."""
    t_glob, tf_glob, fl, flf = limits
    m = len(a)
    thr = np.full(m, t_glob, dtype=np.float32)
    thr_f = np.full(m, tf_glob, dtype=np.float32)
    local = ok & (why[:, 1] != SAME) & (why[:, 2] != SAME)
    if "local_margin" in rule and local.any():
        j = np.flatnonzero(local)
        within = np.maximum(rowdot(C, R, a[j], a[j]), rowdot(C, R, b[j], b[j]))
        thr[j] = np.clip(within + float(rule["local_margin"]), fl, t_glob)
        thr_f[j] = np.minimum(thr[j], np.maximum(flf, thr[j] - 0.05))
    return thr, thr_f


def _same_prompt_minima(one: np.ndarray, m: int, a: np.ndarray, b: np.ndarray, sk: np.ndarray, ln: np.ndarray,
                        lex: np.ndarray, cos: np.ndarray, why: np.ndarray, straight: bool,
                        either: tuple[float, float]) -> tuple[np.ndarray, ...]:
    """For the pairs ``one`` (rows with the same prompt text): the smallest wording (the larger of
    token_sort_ratio and the character ratio) and the smallest cosine over their differing responses; 1 elsewhere;
    the fields (1 chosen, 2 rejected) they come from; and whether a differing response has neither its wording
    >= ``either[0]`` nor its cosine >= ``either[1]`` (with that response's field and wording)."""
    wmin, cmin = np.ones(m, dtype=np.float32), np.ones(m, dtype=np.float32)
    wfield, cfield = np.ones(m, dtype=np.int8), np.ones(m, dtype=np.int8)
    apart, afield, aw = np.zeros(m, dtype=bool), np.ones(m, dtype=np.int8), np.ones(m, dtype=np.float32)
    for f, (fa, fb) in enumerate(((1, 1), (2, 2)) if straight else ((1, 2), (2, 1))):
        i = one[why[one, f + 1] != SAME]
        x, y = a[i], b[i]
        lx = lex[i, f + 1].astype(np.float64)
        cr = lexical_many(sk[x, fa], ln[x, fa], sk[y, fb], ln[y, fb], scorer="ratio")
        w = np.where(cr > lx, cr, lx)  # max(lex, char ratio), NaN kept as max() keeps it
        c = cos[i, f + 1].astype(np.float64)
        neither = ~((w >= either[0] - 1e-6) | (c >= either[1] - 1e-6)) & ~apart[i]
        afield[i[neither]], aw[i[neither]], apart[i[neither]] = f + 1, w[neither], True
        wfield[i] = np.where(w < wmin[i], f + 1, wfield[i])
        cfield[i] = np.where(c < cmin[i], f + 1, cfield[i])
        wmin[i] = np.where(w < wmin[i], w, wmin[i])
        cmin[i] = np.where(c < cmin[i], c, cmin[i])
    return wmin, cmin, wfield, cfield, apart, afield, aw


def strength(sim: np.ndarray) -> np.ndarray:
    """A match's strength: its weakest response (the prompt is shared by design in multi-pair data)."""
    return sim[:, 1:].min(axis=1) if sim.ndim == 2 else sim[1:].min()

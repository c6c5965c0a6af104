"""Where the static model is sure in hybrid mode: the static figures of every candidate pair next to the
transformer's decision (issue 36).

Usage: python scripts/eval_hybrid_agreement.py [--sets hh_planted,held1,...] [--pairs OUT.jsonl]

For each quality set the near-duplicate stage runs in hybrid mode (both checks on, as a default scan) and,
for every candidate pair the static model's loose rule passed, this prints what the transformer decided
(``drop``: a sure match, ``flag``: the unsure band, ``contra``: the crosswise match won, ``no``: turned down)
next to the static model's figures for the same pair: per field 1 for the same words, else
max(static cosine, wording), the weakest response of the better orientation (``s_resp``: straight or
crosswise), the prompt's (``s_prompt``), the weakest response's wording alone (``w_resp``), and the static
model's own decision under the transformer's calibrated rule (``static``). The table bins ``s_resp``; a "sure"
region is a range of the static figures where the transformer's decision never differed from what the static
figures alone say, on every set. Sets: ``hh_planted`` (scripts/bench_dedup.py's planted HH set, default
``--plant-frac 0.1``), ``held1``..``held7`` (data/precision/neardup_heldout*.jsonl; held6 and held7 reword the prompts), ``example``
(examples/hh-rlhf-helpful-base-500.jsonl), ``multipair`` (data/precision/multipair.jsonl).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "scripts")]

SETS = ("hh_planted", "held1", "held2", "held3", "held4", "held5", "held6", "held7", "example", "multipair")
FINDINGS: list[dict[str, Any]] = []  # every set's findings (--findings)
BINS = (0.55, 0.60, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90, 0.95, 0.98, 1.0001)


def set_rows(name: str) -> list[tuple[str, str, str]]:
    """The (prompt, chosen, rejected) rows of a quality set."""
    if name == "hh_planted":
        from bench_dedup import planted_hh

        return planted_hh(None, 0.1)["rows"]
    path = {"example": ROOT / "examples/hh-rlhf-helpful-base-500.jsonl",
            "multipair": ROOT / "data/precision/multipair.jsonl",
            "held1": ROOT / "data/precision/neardup_heldout.jsonl"}.get(
        name, ROOT / f"data/precision/neardup_heldout{name[4:]}.jsonl")
    rows = [json.loads(line) for line in path.open()]
    return [(r.get("prompt") or "", r["chosen"], r["rejected"]) for r in rows]


DUP: dict[str, float] = {}  # near_duplicate_pair parameters replacing the declared ones (--set)


def capture_run(rows: list[tuple[str, str, str]], cache: Path) -> tuple[list[dict[str, Any]], Any]:
    """Run the stage in hybrid mode and keep the arguments and results of its two ``find_groups`` calls
    (the static candidate pass, the transformer's deciding pass)."""
    from support.nd_support import run_stage, to_pairs

    import pairaudit.stages.near_duplicates.stage as st

    calls: list[dict[str, Any]] = []
    real = st.find_groups

    def spy(*args: Any, **kw: Any) -> dict[str, Any]:
        out = real(*args, **kw)
        calls.append({"args": args, "kw": kw, "out": out})
        return out

    st.find_groups = spy
    try:
        res, stage = run_stage(to_pairs(rows), cache, mode="hybrid", batch=1000, dup=DUP)
    finally:
        st.find_groups = real
    return calls, res


def static_figures(P: Any, C: Any, R: Any, sk: np.ndarray, ln: np.ndarray, ts: Any, a: np.ndarray,
                   b: np.ndarray) -> dict[str, np.ndarray]:
    """Per pair: per field (straight, and the crosswise responses) 1 for the same words, else
    max(static cosine, wording); the weakest response of the better orientation and its wording."""
    from pairaudit.stages.near_duplicates.match import lexical_many
    from pairaudit.stages.near_duplicates.search import rowdot

    def field(A: Any, B: Any, fa: int, fb: int) -> tuple[np.ndarray, np.ndarray]:
        same = (sk[a, fa] == sk[b, fb]) & (ln[a, fa] == ln[b, fb])
        cos = rowdot(A, B, a, b).astype(np.float64)
        w = np.maximum(lexical_many(ts[a, fa], ln[a, fa], ts[b, fb], ln[b, fb]),
                       lexical_many(sk[a, fa], ln[a, fa], sk[b, fb], ln[b, fb], scorer="ratio"))
        return np.where(same, 1.0, np.maximum(cos, w)), np.where(same, 1.0, w)

    p, pw = field(P, P, 0, 0)
    p_cos = np.where(pw == 1.0, 1.0, rowdot(P, P, a, b).astype(np.float64))  # the static cosine alone
    cc, wc = field(C, C, 1, 1)
    rr, wr = field(R, R, 2, 2)
    cr, wcr = field(C, R, 1, 2)
    rc, wrc = field(R, C, 2, 1)
    straight, cross = np.minimum(cc, rr), np.minimum(cr, rc)
    use_x = cross > straight
    s_resp = np.where(use_x, cross, straight)
    w_resp = np.where(use_x, np.minimum(wcr, wrc), np.minimum(wc, wr))
    return {"s_prompt": p, "s_resp": s_resp, "w_resp": w_resp, "crosswise": use_x, "c_prompt": p_cos, "w_prompt": pw}


DECISION = {"drop": "drop", "flag": "flag", "contra": "contra"}


def decisions(code: np.ndarray) -> list[str]:
    from pairaudit.stages.near_duplicates.match import MATCHED, OTHER_WAY, UNSURE

    names = {MATCHED: "drop", UNSURE: "flag", OTHER_WAY: "contra"}
    return [names.get(int(c), "no") for c in code]


def measure(name: str, cache: Path) -> list[dict[str, Any]]:
    """Every candidate pair of one set: the static figures and both models' decisions."""
    from pairaudit.stages.near_duplicates.verify import pair_outcomes

    rows = set_rows(name)
    calls, res = capture_run(rows, cache)
    FINDINGS.extend({"set": name, "row": f.row, "check": f.check, "action": f.action, "group": f.group,
                     "detail": f.detail} for f in res.findings)
    t = res.timings
    fields = t.get("near_duplicates:transformer_fields_planned", 0.0) + t.get(
        "near_duplicates:transformer_fields_unplanned", 0.0)
    print(f"\n== {name}: {len(rows)} rows; the transformer embedded {int(fields)} texts; candidate rows "
          f"{res.stats['near_duplicates'].get('hybrid_candidate_rows')}; findings {len(res.findings)}")
    if len(calls) < 2:  # below min_rows_static, or no candidates: the transformer never decided a pair here
        return []
    first, second = calls[0], calls[1]
    _, P, C, R, sk, ln, dup0, con0 = first["args"][:8]
    kw0 = first["kw"]
    a, b = first["out"]["a"], first["out"]["b"]
    rows_idx, Pt, Ct, Rt, sk_i, ln_i, dup, con = second["args"][:8]
    kw = second["kw"]
    pa, pb = kw["candidates"]
    want = {"want_dups": True, "want_contradictions": True}
    tr = pair_outcomes(Pt, Ct, Rt, sk_i, ln_i, pa, pb, dup, con, compared=kw["compared"], ts=kw["ts"],
                       two_rows=kw["two_rows"], **want)
    stat = pair_outcomes(P, C, R, sk, ln, a, b, dup, con, compared=kw0["compared"], ts=kw0["ts"],
                         two_rows=kw0["two_rows"], **want)
    fig = static_figures(P, C, R, sk, ln, kw0["ts"], a, b)
    from pairaudit.stages.near_duplicates.search import rowdot

    t_prompt = rowdot(Pt, Pt, pa, pb)  # the transformer's prompt cosine (read for every pair: the prompts are embedded)
    td, sd = decisions(tr["code"]), decisions(stat["code"])
    return [{"set": name, "a": int(a[i]), "b": int(b[i]), "transformer": td[i], "static": sd[i],
             "t_code": int(tr["code"][i]), "s_prompt": round(float(fig["s_prompt"][i]), 4),
             "s_resp": round(float(fig["s_resp"][i]), 4), "w_resp": round(float(fig["w_resp"][i]), 4),
             "c_prompt": round(float(fig["c_prompt"][i]), 4), "w_prompt": round(float(fig["w_prompt"][i]), 4),
             "t_prompt": round(float(t_prompt[i]), 4),
             "crosswise": bool(fig["crosswise"][i]), "min_response": float(dup["min_response"])}
            for i in range(len(a))]


def table(pairs: list[dict[str, Any]]) -> None:
    """The agreement table: static weakest response (binned) x the transformer's decision, and where the
    static decision under the same rule differs."""
    print(f"{'static s_resp':>14s} {'pairs':>6s} {'t:drop':>6s} {'t:flag':>6s} {'t:contra':>8s} {'t:no':>6s} "
          f"{'static=transformer':>18s}")
    for lo, hi in zip(BINS[:-1], BINS[1:]):
        sel = [p for p in pairs if lo <= p["s_resp"] < hi]
        if not sel:
            continue
        n = {d: sum(p["transformer"] == d for p in sel) for d in ("drop", "flag", "contra", "no")}
        agree = sum(p["transformer"] == p["static"] for p in sel)
        rng = f"[{lo:.2f},{min(hi, 1.0):.2f}{']' if hi > 1 else ')'}"
        print(f"{rng:>14s} {len(sel):6d} {n['drop']:6d} {n['flag']:6d} {n['contra']:8d} {n['no']:6d} "
              f"{agree:>10d} of {len(sel):<5d}")


def bounds(pairs: list[dict[str, Any]]) -> None:
    """The figures at the edges: the lowest static s_resp of a pair the transformer matched, the highest of one
    it turned down, and the same for the wording alone."""
    hit = [p for p in pairs if p["transformer"] != "no"]
    miss = [p for p in pairs if p["transformer"] == "no"]
    if hit:
        lo = min(hit, key=lambda p: p["s_resp"])
        print(f"  lowest static s_resp the transformer matched: {lo['s_resp']:.4f} ({lo['set']} rows {lo['a']},"
              f"{lo['b']}: {lo['transformer']}, s_prompt {lo['s_prompt']:.3f}, wording {lo['w_resp']:.3f})")
    if miss:
        hi = max(miss, key=lambda p: p["s_resp"])
        hw = max(miss, key=lambda p: p["w_resp"])
        print(f"  highest static s_resp the transformer turned down: {hi['s_resp']:.4f} ({hi['set']} rows "
              f"{hi['a']},{hi['b']}, code {hi['t_code']}, wording {hi['w_resp']:.3f})")
        print(f"  highest wording of a pair the transformer turned down: {hw['w_resp']:.4f} ({hw['set']} rows "
              f"{hw['a']},{hw['b']}, code {hw['t_code']}, s_resp {hw['s_resp']:.3f})")
    if hit:
        lp = min(hit, key=lambda p: p["s_prompt"])
        print(f"  lowest static s_prompt the transformer matched: {lp['s_prompt']:.4f} ({lp['set']} rows {lp['a']},"
              f"{lp['b']}: {lp['transformer']}, s_resp {lp['s_resp']:.3f})")
    dis = [p for p in pairs if p["static"] != p["transformer"]]
    print(f"  static decision (same calibrated rule) differs from the transformer's on {len(dis)} of {len(pairs)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", type=lambda s: s.split(","), default=list(SETS))
    ap.add_argument("--pairs", default=None, help="write every candidate pair's figures here (JSONL)")
    ap.add_argument("--findings", default=None, help="write every set's findings here (JSONL), to compare runs")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a near_duplicate_pair parameter for this run (e.g. candidate_min_response=0.7)")
    ap.add_argument("--cache", default=None, help="cache folder (kept; default: a temporary one)")
    args = ap.parse_args()
    DUP.update({k: float(v) for k, v in (x.split("=", 1) for x in args.set)})
    everything: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sets:
            pairs = measure(name, Path(args.cache or tmp))  # one cache: the static model is distilled once
            thr = pairs[0]["min_response"] if pairs else float("nan")
            print(f"{len(pairs)} candidate pairs (transformer's copy threshold {thr:.3f})")
            if pairs:
                table(pairs)
                bounds(pairs)
            everything += pairs
            sys.stdout.flush()
    print(f"\n== all sets: {len(everything)} candidate pairs")
    table(everything)
    bounds(everything)
    if args.pairs:
        Path(args.pairs).write_text("".join(json.dumps(p) + "\n" for p in everything))
    if args.findings:
        Path(args.findings).write_text("".join(json.dumps(f) + "\n" for f in FINDINGS))


if __name__ == "__main__":
    main()

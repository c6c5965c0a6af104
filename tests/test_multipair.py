"""Several pairs per prompt (real UltraFeedback rows): every response of a prompt compared with every other,
same-topic answers among them; planted exact and paraphrased copies, opposite-label repeats and cycles; and
two answers to one prompt that agree in meaning but were never compared with each other, beside a paraphrased
copy of one of their rows. The default scan must find the planted faults and leave the normal multi-pair
structure alone."""

from __future__ import annotations

import itertools
import json
import random
import re
from pathlib import Path

import pytest
from support.planting import UF, paraphrase, plant_copies, renumbered, reword_question, uf_rows

import pairaudit

N_PROMPTS = 24
AGREE_FROM, AGREE_TO, N_AGREE = 400, 540, 8  # UltraFeedback rows used nowhere else in the fixture
CHECKS = ["duplicate_pair", "near_duplicate_pair", "contradictory_pair", "preference_cycle"]


@pytest.fixture(scope="module")
def multipair(tmp_path_factory: pytest.TempPathFactory) -> dict:
    if not UF.exists():
        pytest.fail(f"{UF} is missing: the tests need ../shared/data beside the checkout")
    from rapidfuzz import fuzz, process

    src = uf_rows(400)
    rng = random.Random(25)
    rows: list[tuple[str, str, str]] = []
    prompts = [p for p, _, _ in src]
    for g in range(N_PROMPTS):
        p, c, r = src[g]
        # the answers of the most similar other prompt: same-topic "different answers to the same question"
        near = process.extractOne(p, prompts[N_PROMPTS:300], scorer=fuzz.token_set_ratio)[2] + N_PROMPTS
        answers = [c, r, src[near][1], src[near][2]]
        rank = rng.sample(range(4), 4)  # a consistent total order: no cycle, no contradiction
        for i, j in itertools.combinations(range(4), 2):
            hi, lo = (i, j) if rank[i] < rank[j] else (j, i)
            rows.append((p, answers[hi], answers[lo]))
    n = len(rows)
    plant = plant_copies(rows, rng, {"exact": 5, "para": 8, "swap": 5, "para_swap": 3})
    cycles = []
    for k in range(4):
        p, x, y = src[320 + k]
        z = src[360 + k][1]
        cycles.append([len(rows), len(rows) + 1, len(rows) + 2])
        rows += [(p, x, y), (p, y, z), (p, z, x)]
    agree = _agreeing_rows(rows, plant, rng)
    path = tmp_path_factory.mktemp("multipair") / "multipair.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for p, c, r in rows:
            fh.write(json.dumps({"prompt": p, "chosen": c, "rejected": r}, ensure_ascii=False) + "\n")
    audit = pairaudit.scan(str(path), path.parent / "out", progress=False, log=lambda m: None, only=CHECKS)
    by_row: dict[int, dict[str, dict]] = {}
    for f in audit.findings.iter_rows(named=True):
        by_row.setdefault(f["row"], {})[f["check"]] = f
    return {"n": n, "plant": plant, "cycles": cycles, "by_row": by_row, "report": audit.report,
            "rows": rows, "path": Path(path), "agree": agree}


def _agreeing_rows(rows: list[tuple[str, str, str]], plant: dict[str, dict[int, int]], rng: random.Random
                   ) -> list[tuple[int, int, int, float]]:
    """The case of PandaLM's unjustified findings, on real rows: UltraFeedback rows whose chosen x and rejected
    x2 agree in meaning (all-MiniLM-L6-v2 cosine >= 0.88, above the 0.85 floor) but are no copy (rapidfuzz
    ratio < 85) become S = (p, x, z) and R = (p, x2, z), z a third, weaker answer: two different answers to
    one prompt, never compared with each other. Every S gets a planted paraphrased copy (even: straight, a
    near duplicate; odd: swapped, a contradiction). Appends to ``rows`` / ``plant``; returns (S, R, copy,
    cosine of x and x2) per case."""
    from rapidfuzz import fuzz

    from pairaudit.config import default_cache_dir
    from pairaudit.models.embedder import Embedder

    src = uf_rows(AGREE_TO + N_AGREE)
    cand = [row for row in src[AGREE_FROM:AGREE_TO] if fuzz.ratio(row[1].strip(), row[2].strip()) < 85]
    V = Embedder(cache_dir=default_cache_dir()).encode([t for _, x, x2 in cand for t in (x, x2)])
    cos = (V[0::2] * V[1::2]).sum(axis=1)
    picked = [(row, float(c)) for row, c in zip(cand, cos.tolist()) if c >= 0.88][:N_AGREE]
    out = []
    for k, ((p, x, x2), c) in enumerate(picked):
        z = src[AGREE_TO + k][1]
        s = len(rows)
        rows += [(p, x, z), (p, x2, z)]
        if k % 2 == 0:
            rows.append((reword_question(p, rng), paraphrase(x, rng), paraphrase(z, rng)))
            plant["para"][len(rows) - 1] = s
        else:
            rows.append((reword_question(p, rng), paraphrase(z, rng), paraphrase(x, rng)))
            plant["para_swap"][len(rows) - 1] = s
        out.append((s, s + 1, len(rows) - 1, c))
    return out


def test_normal_multipair_structure_is_left_alone(multipair: dict) -> None:
    """Same prompt, one shared response, a different (same-topic) other: not a duplicate; X > Y and Y > Z:
    not a contradiction. Only planted rows and their sources get findings, and a planted swap inside a
    complete ordering closes real cycles with the rows of its prompt (X > Y > Z plus Z > X)."""
    rows, plant = multipair["rows"], multipair["plant"]
    swapped = set(plant["swap"].values()) | set(plant["para_swap"].values())
    swap_prompts = {rows[o][0] for o in plant["swap"].values()}
    planted = set(range(multipair["n"], len(rows)))
    hits = {}
    for r, v in multipair["by_row"].items():
        if r >= multipair["n"] or r in swapped:
            continue
        for check, f in v.items():
            if check == "preference_cycle" and rows[r][0] in swap_prompts:
                continue
            partners = {int(x) for x in re.findall(r"\d+", f["detail"].split("row(s) ")[-1].split(" (")[0])}
            if f["action"] == "flag" and partners and partners <= planted:
                continue  # unsure band next to a planted paraphrase: flagged, never dropped
            hits.setdefault(r, []).append((check, f["action"], f["detail"][:160]))
    assert hits == {}


def test_planted_copies_repeats_and_cycles_found(multipair: dict) -> None:
    by_row, plant = multipair["by_row"], multipair["plant"]
    assert all("duplicate_pair" in by_row.get(r, {}) for r in plant["exact"])
    rows = multipair["rows"]
    # the planter's paraphrase changes a number: in a short response another answer, never merged (renumbered)
    changed = {r for r, o in plant["para"].items() if renumbered(rows[r], rows[o])}
    copies = {r: o for r, o in plant["para"].items() if r not in changed}
    para = [r for r, o in copies.items() if by_row.get(r, {}).get("near_duplicate_pair", {}).get("group") == o]
    assert len(para) >= len(copies) - 1 and len(copies) >= 6, sorted(set(copies) - set(para))
    assert changed and not any("near_duplicate_pair" in by_row.get(r, {}) for r in changed)
    swapped = {r: o for r, o in plant["para_swap"].items() if not renumbered(rows[r], rows[o], swapped=True)}
    for kind, planted in (("swap", plant["swap"]), ("para_swap", swapped)):
        for r, o in planted.items():
            assert "contradictory_pair" in by_row.get(r, {}) and "contradictory_pair" in by_row.get(o, {}), (kind, r, o)
    assert not any("contradictory_pair" in by_row.get(r, {}) for r in set(plant["para_swap"]) - set(swapped))
    for cyc in multipair["cycles"]:
        got = [by_row.get(r, {}).get("preference_cycle") for r in cyc]
        assert all(g is not None and g["group"] == cyc[0] and g["action"] == "flag" for g in got), got


def test_report_holds_calibration_and_multipair_profile(multipair: dict) -> None:
    stats = multipair["report"]["stats"]
    cal = stats["near_duplicates"]["calibration"]
    assert cal["negatives_across_rows"] > 0 and cal["negatives_within_rows"] > 0
    assert cal["floor"] <= cal["min_response"] <= cal["cap"] and cal["min_response_flag"] <= cal["min_response"]
    prof = stats["preference_graph"]
    assert prof["pairs_per_prompt"]["max"] >= 6 and prof["responses_per_prompt"]["median"] >= 2
    on_cycles = sum("preference_cycle" in v for v in multipair["by_row"].values())
    assert prof["rows_on_cycles"] == on_cycles >= 3 * len(multipair["cycles"])
    dropped = {r for r, v in multipair["by_row"].items() if any(f["action"] == "drop" for f in v.values())}
    planted = set().union(*(set(d) for d in multipair["plant"].values()))
    swapped = set(multipair["plant"]["swap"].values()) | set(multipair["plant"]["para_swap"].values())
    assert dropped <= planted | swapped
    totals = multipair["report"]["totals"]
    assert totals["kept"] + totals["dropped"] == totals["input"] and totals["dropped"] == len(dropped)


def test_agreeing_answers_of_one_prompt_are_no_copies(multipair: dict) -> None:
    """R = (p, x2, z) beside S = (p, x, z), x and x2 two answers that agree in meaning: R is no copy of S nor
    of S's paraphrased copy (a paraphrase of x is about as close to x2 as x is), and no contradiction of the
    swapped copy: no finding at all, not even a flag. The copies themselves are found."""
    agree, by_row = multipair["agree"], multipair["by_row"]
    assert len(agree) >= 6, f"only {len(agree)} agreeing answer pairs in UltraFeedback rows {AGREE_FROM}-{AGREE_TO}"
    assert min(c for *_, c in agree) >= 0.88
    hits = {r: by_row[r] for _, r, _, _ in agree if r in by_row}
    assert hits == {}
    for k, (s, _, copy, _) in enumerate(agree):
        if k % 2 == 0:
            assert by_row.get(copy, {}).get("near_duplicate_pair", {}).get("group") == s, (s, copy)
        else:
            assert "contradictory_pair" in by_row.get(copy, {}) and "contradictory_pair" in by_row.get(s, {})

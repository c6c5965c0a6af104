"""near_duplicate_pair / near contradictory_pair: real HH rows, real default embedder, planted copies."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

import numpy as np
import pytest

from pairaudit.config import Context, ScanConfig
from pairaudit.stages.near_duplicates import (
    NEAR_CONTRADICTION_INFO,
    NEAR_DUPLICATE_INFO,
    NearDuplicateStage,
    find_groups,
    sketch,
)
from pairaudit.types import Finding, Pair, StageResult

os.environ.setdefault("HF_HUB_OFFLINE", "1")

HH = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "hh-rlhf" / "helpful-base-test.jsonl"
N_ORIG = 300
SEP = "\n\nAssistant:"


def parse_hh(line: str) -> tuple[str, str, str]:
    d = json.loads(line)
    c, r = d["chosen"], d["rejected"]
    k = c.rfind(SEP) + len(SEP)
    return c[:k], c[k:], r[r.rfind(SEP) + len(SEP):]


def perturb(text: str, kind: str, rng: random.Random) -> str:
    words = text.split(" ")
    content = [i for i, w in enumerate(words) if re.fullmatch(r"[A-Za-z]{3,}", w)]
    if kind in ("drop", "change") and len(content) >= 4:
        i = rng.choice(content)
        if kind == "drop":
            del words[i]
        else:
            words[i] = "thing" if words[i].lower() != "thing" else "stuff"
        return " ".join(words)
    if kind == "punct":
        out = re.sub(r"[.,!?;:]", "", text)
        if out != text:
            return out
    if kind == "space":
        return text.replace(" ", "  ") + " "
    return text.upper() if text.lower() == text else text.lower()  # case


KINDS = ("case", "punct", "space", "drop", "change")


@pytest.fixture(scope="module")
def planted() -> dict:
    """300 real rows + planted near duplicates, exact duplicates and swapped (contradictory) copies."""
    if not HH.exists():
        pytest.fail(f"{HH} is missing: the tests need ../shared/data beside the checkout")
    with open(HH, encoding="utf-8") as fh:
        orig = [parse_hh(next(fh)) for _ in range(N_ORIG)]
    rng = random.Random(7)
    pairs = [Pair(row=i, format="standard", prompt=p, chosen=c, rejected=r) for i, (p, c, r) in enumerate(orig)]
    ids = list(range(N_ORIG))
    rng.shuffle(ids)
    near_src, exact_src, swap_src, nswap_src = ids[:60], ids[60:75], ids[75:90], ids[90:95]
    near, exact, swap = {}, {}, {}

    def add(p: str, c: str, r: str) -> int:
        row = len(pairs)
        pairs.append(Pair(row=row, format="standard", prompt=p, chosen=c, rejected=r))
        return row

    for j, o in enumerate(near_src):
        p, c, r = orig[o]
        near[add(*(perturb(t, KINDS[(j + f) % 5], rng) for f, t in enumerate((p, c, r))))] = o
    for o in exact_src:
        exact[add(*orig[o])] = o
    for o in swap_src:
        p, c, r = orig[o]
        swap[add(p, r, c)] = o
    for j, o in enumerate(nswap_src):  # swapped and lightly edited
        p, c, r = orig[o]
        swap[add(perturb(p, KINDS[j % 3], rng), perturb(r, "case", rng), perturb(c, "punct", rng))] = o
    # a near-identical pair (chosen vs rejected) and a pre-tokenized row the stage must skip
    p, c, _ = orig[ids[95]]
    ni_row = add(p, c, c.rstrip(".!") + " ")
    pairs.append(Pair(row=len(pairs), format="pretokenized", prompt=None, chosen=None, rejected=None,
                      ids={"chosen_input_ids": [1, 2], "rejected_input_ids": [1, 3]}))
    planted_src = set(near.values()) | set(exact.values()) | set(swap.values()) | {ids[95]}
    return {"pairs": pairs, "near": near, "exact": exact, "swap": swap, "ni_row": ni_row,
            "clean": [i for i in range(N_ORIG) if i not in planted_src]}


def run_stage(pairs: list[Pair], cache: Path, batch: int = 128) -> tuple[StageResult, NearDuplicateStage, Context]:
    ctx = Context(config=ScanConfig(), cache_dir=cache,
                  params={"near_duplicate_pair": dict(NEAR_DUPLICATE_INFO.thresholds),
                          "contradictory_pair": dict(NEAR_CONTRADICTION_INFO.thresholds),
                          "near_identical_pair": {"min_cosine": 0.98}})
    stage = NearDuplicateStage(ctx, {"near_duplicate_pair", "contradictory_pair"})
    for lo in range(0, len(pairs), batch):
        stage.observe(pairs[lo:lo + batch], None)
    return stage.finalize(), stage, ctx


@pytest.fixture(scope="module")
def first_run(planted: dict, tmp_path_factory: pytest.TempPathFactory) -> tuple:
    cache = tmp_path_factory.mktemp("nd-cache")
    res, stage, ctx = run_stage(planted["pairs"], cache)
    return res, stage, ctx, cache


def by_check(findings: list[Finding], check: str) -> dict[int, Finding]:
    return {f.row: f for f in findings if f.check == check}


def test_planted_near_and_exact_duplicates_found(planted: dict, first_run: tuple) -> None:
    res = first_run[0]
    nd = by_check(res.findings, "near_duplicate_pair")
    found = [r for r, o in planted["near"].items() if r in nd and nd[r].group == o]
    assert len(found) >= 0.95 * len(planted["near"]), (
        f"found {len(found)}/{len(planted['near'])} planted near duplicates; missed: "
        f"{[(r, planted['near'][r]) for r in planted['near'] if r not in found]}")
    for r, o in planted["exact"].items():
        assert r in nd and nd[r].group == o, f"exact copy {r} of row {o} not grouped: {nd.get(r)}"
        assert nd[r].score == pytest.approx(1.0, abs=1e-3)
    # representatives keep no finding; every finding points at a smaller representative
    for o in list(planted["near"].values()) + list(planted["exact"].values()):
        assert o not in nd
    assert all(f.group is not None and f.group < f.row and f.field is None for f in nd.values())
    assert "near duplicate of row" in next(iter(nd.values())).detail


def test_swapped_copies_are_contradictory_both_ways(planted: dict, first_run: tuple) -> None:
    res = first_run[0]
    cp = by_check(res.findings, "contradictory_pair")
    nd = by_check(res.findings, "near_duplicate_pair")
    for r, o in planted["swap"].items():
        assert r in cp and o in cp, f"swapped copy {r} of row {o}: {cp.get(r)} / {cp.get(o)}"
        assert cp[r].group == cp[o].group == o
        assert r not in nd  # a swapped copy is not a duplicate


def test_unmodified_rows_get_almost_no_findings(planted: dict, first_run: tuple) -> None:
    res = first_run[0]
    clean = set(planted["clean"])
    hits = [f for f in res.findings if f.row in clean and f.check in ("near_duplicate_pair", "contradictory_pair")]
    assert len(hits) <= 1, hits


def test_scores_near_identical_and_stats(planted: dict, first_run: tuple) -> None:
    res, stage, ctx, _ = first_run
    n_text = len(planted["pairs"]) - 1  # the pre-tokenized row is skipped
    assert res.rows == list(range(n_text))
    assert set(res.scores) == {"pair_cosine", "near_duplicate_pair_score"}
    pc = np.asarray(res.scores["pair_cosine"])
    nd_score = np.asarray(res.scores["near_duplicate_pair_score"])
    assert pc.shape == nd_score.shape == (n_text,)
    assert np.all(nd_score[list(planted["exact"])] > 0.999)
    ni = by_check(res.findings, "near_identical_pair")
    assert planted["ni_row"] in ni and ni[planted["ni_row"]].field == "rejected"
    assert all(pc[r] >= 0.98 for r in ni)
    st = res.stats["near_duplicates"]
    assert st["n_skipped_pretokenized"] == 1 and st["index"].startswith("flat")
    # exact copies and swapped copies share their prompt with the original
    assert st["prompts_with_several_pairs"] >= len(planted["exact"]) + 15
    assert st["max_pairs_per_prompt"] == 2
    assert ctx.models["embedder"]["id"] == "bundled:all-MiniLM-L6-v2"
    assert len(ctx.models["embedder"]["sha256"]) == 64


def test_rerun_hits_cache_and_gives_identical_findings(planted: dict, first_run: tuple) -> None:
    res1, stage1, _, cache = first_run
    assert stage1.embedder.n_encoded > 0
    res2, stage2, _ = run_stage(planted["pairs"], cache, batch=100)  # other batches: same answer
    assert stage2.embedder.n_encoded == 0
    assert stage2.embedder.n_cached == 3 * (len(planted["pairs"]) - 1)
    assert res2.findings == res1.findings
    assert np.array_equal(res2.scores["pair_cosine"], res1.scores["pair_cosine"])


def test_disabled_checks_produce_nothing(planted: dict, first_run: tuple) -> None:
    cache = first_run[3]
    ctx = Context(config=ScanConfig(skip=["near_identical_pair"]), cache_dir=cache)
    stage = NearDuplicateStage(ctx, {"contradictory_pair"})
    stage.observe(planted["pairs"], None)
    res = stage.finalize()
    assert {f.check for f in res.findings} == {"contradictory_pair"}


# -- the search on synthetic vectors (no model) -------------------------------------------------

def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float16)


@pytest.mark.parametrize("index", ["flat", "ivf"])
def test_find_groups_on_synthetic_vectors(index: str) -> None:
    rng = np.random.default_rng(0)
    n, d = 3000, 64
    P, C, R = (_unit(rng.normal(size=(n, d))) for _ in range(3))
    texts = [[f"prompt {i}", f"chosen {i} " * 3, f"rejected {i} " * 3] for i in range(n)]
    # rows 10, 500, 2999 copy row 3 with noise; row 7 is row 1200 swapped
    for j in (10, 500, 2999):
        for A in (P, C, R):
            A[j] = _unit(A[3:4].astype(np.float32) + 0.05 * rng.normal(size=(1, d)))[0]
        texts[j] = list(texts[3])
    P[7], C[7], R[7] = P[1200], R[1200], C[1200]
    texts[7] = [texts[1200][0], texts[1200][2], texts[1200][1]]
    sk = np.array([[sketch(t)[0] for t in row] for row in texts], dtype="S257")
    ln = np.array([[sketch(t)[1] for t in row] for row in texts], dtype=np.int32)
    rows = np.arange(n, dtype=np.int64) + 100  # row numbers need not be indices
    params = dict(NEAR_DUPLICATE_INFO.thresholds)
    out = find_groups(rows, P, C, R, sk, ln, params, params, force_index=index)
    got = {(f.row, f.check, f.group) for f in out["findings"]}
    assert got == {(110, "near_duplicate_pair", 103), (600, "near_duplicate_pair", 103),
                   (3099, "near_duplicate_pair", 103), (107, "contradictory_pair", 107),
                   (1300, "contradictory_pair", 107)}
    assert out["stats"]["index"].startswith(index)


def test_sketch_keeps_head_and_tail() -> None:
    s, n = sketch("Hello,   WORLD!")
    assert s == b"hello world" and n == 11
    long = "start " + "middle " * 100 + "end"
    s, n = sketch(long)
    assert n > 256 and len(s) == 257 and s.startswith(b"start middle") and s.endswith(b"middle end")


def test_state_export_absorb_matches_single_process(planted: dict, first_run: tuple) -> None:
    """Engines that observe in workers (Ray) merge exported states on the driver: same findings."""
    res1, _, _, cache = first_run
    ctx = Context(config=ScanConfig(), cache_dir=cache)
    enabled = {"near_duplicate_pair", "contradictory_pair"}
    driver, w1, w2 = (NearDuplicateStage(ctx, enabled) for _ in range(3))
    w1.observe(planted["pairs"][:200], None)
    w2.observe(planted["pairs"][200:], None)
    for w in (w1, w2):
        driver.absorb_state(w.export_state())
    assert w1._rows == [] and w1.n_skipped == 0
    assert driver.finalize().findings == res1.findings

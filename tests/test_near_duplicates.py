"""near_duplicate_pair / near contradictory_pair: real HH and UltraFeedback rows, the real bundled embedder
and the static model distilled from it, planted light edits, paraphrases, exact and swapped copies."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.nd_support import by_check, fresh_cache, run_stage, to_pairs
from support.planting import (
    HH,
    LIGHT_KINDS,
    hh_rows,
    light_edit,
    paraphrase,
    renumbered,
    reword_prompt,
    uf_rows,
)

from pairaudit.datatypes import Pair
from pairaudit.stages.near_duplicates.infos import NEAR_DUPLICATE_INFO
from pairaudit.stages.near_duplicates.match import sketch
from pairaudit.stages.near_duplicates.search import center, field_mean
from pairaudit.stages.near_duplicates.stage import NearDuplicateStage
from pairaudit.stages.near_duplicates.verify import find_groups

N_ORIG = 300


@pytest.fixture(scope="module")
def planted() -> dict:
    """300 real HH rows + planted light edits, paraphrases, exact copies and swapped (contradictory) copies."""
    if not HH.exists():
        pytest.fail(f"{HH} is missing: the tests need ../shared/data beside the checkout")
    orig = hh_rows(N_ORIG)
    rng = random.Random(7)
    rows = list(orig)
    ids = list(range(N_ORIG))
    rng.shuffle(ids)
    light_src, para_src, exact_src, swap_src, nswap_src = ids[:40], ids[40:100], ids[100:110], ids[110:120], ids[120:125]
    light, para, exact, swap = {}, {}, {}, {}

    def add(p: str, c: str, r: str) -> int:
        rows.append((p, c, r))
        return len(rows) - 1

    for j, o in enumerate(light_src):
        light[add(*(light_edit(t, LIGHT_KINDS[(j + f) % 5], rng) for f, t in enumerate(orig[o])))] = o
    other = {}  # paraphrases whose short response got another number: another answer, never merged
    for o in para_src:
        p, c, r = orig[o]
        row = add(reword_prompt(p, rng), paraphrase(c, rng), paraphrase(r, rng))
        (other if renumbered(rows[row], orig[o]) else para)[row] = o
    for o in exact_src:
        exact[add(*orig[o])] = o
    for o in swap_src:
        p, c, r = orig[o]
        swap[add(p, r, c)] = o
    for j, o in enumerate(nswap_src):  # swapped and lightly edited
        p, c, r = orig[o]
        swap[add(light_edit(p, LIGHT_KINDS[j % 3], rng), light_edit(r, "case", rng), light_edit(c, "punct", rng))] = o
    p, c, _ = orig[ids[125]]
    ni_row = add(p, c, c.replace(" ", "  ") + " ")  # chosen ~ rejected (only whitespace differs)
    pairs = to_pairs(rows)
    pairs.append(Pair(row=len(pairs), format="pretokenized", prompt=None, chosen=None, rejected=None,
                      ids={"chosen_input_ids": [1, 2], "rejected_input_ids": [1, 3]}))
    planted_src = set(ids[:126])
    return {"pairs": pairs, "light": light, "para": para, "other": other, "exact": exact, "swap": swap, "ni_row": ni_row,
            "clean": [i for i in range(N_ORIG) if i not in planted_src]}


@pytest.fixture(scope="module")
def runs(planted: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The default (hybrid) stage on a cold cache, and the static (--fast) one."""
    cache = fresh_cache(tmp_path_factory.mktemp("nd-cache"))
    progress: list = []
    res, stage = run_stage(planted["pairs"], cache, progress=progress)
    fast, _ = run_stage(planted["pairs"], cache, mode="static")
    return {"hybrid": res, "stage": stage, "static": fast, "cache": cache, "progress": progress}


def found(res: object, planted_rows: dict[int, int]) -> list[int]:
    nd = by_check(res.findings, "near_duplicate_pair")  # type: ignore[attr-defined]
    return [r for r, o in planted_rows.items() if r in nd and nd[r].group == o]


@pytest.mark.parametrize("mode", ["hybrid", "static"])
def test_planted_light_edits_paraphrases_and_exact_copies_found(planted: dict, runs: dict, mode: str) -> None:
    res = runs[mode]
    for kind, need in (("light", 1.0), ("para", 0.95), ("exact", 1.0)):
        got = found(res, planted[kind])
        assert len(got) >= need * len(planted[kind]), (
            f"{mode}: {len(got)}/{len(planted[kind])} planted {kind} copies grouped with their source; missed "
            f"{[(r, o) for r, o in planted[kind].items() if r not in got]}")
    nd = by_check(res.findings, "near_duplicate_pair")
    assert planted["other"] and not set(planted["other"]) & set(nd), sorted(set(planted["other"]) & set(nd))
    for r in planted["exact"]:
        assert nd[r].score == pytest.approx(1.0, abs=1e-3) and "prompt: same words" in nd[r].detail
    for o in planted["light"].values():  # representatives keep no finding
        assert o not in nd
    assert all(f.group is not None and f.group < f.row and f.field is None for f in nd.values())
    assert any("cosine" in f.detail and "copy threshold" in f.detail for f in nd.values())


def test_swapped_copies_are_contradictory_both_ways(planted: dict, runs: dict) -> None:
    res = runs["hybrid"]
    cp = by_check(res.findings, "contradictory_pair")
    nd = by_check(res.findings, "near_duplicate_pair")
    for r, o in planted["swap"].items():
        assert r in cp and o in cp, f"swapped copy {r} of row {o}: {cp.get(r)} / {cp.get(o)}"
        assert cp[r].group == cp[o].group == o
        assert r not in nd  # a swapped copy is not a duplicate
        assert "chosen~their rejected" in cp[r].detail


@pytest.mark.parametrize("mode", ["hybrid", "static"])
def test_unmodified_rows_get_no_findings(planted: dict, runs: dict, mode: str) -> None:
    clean = set(planted["clean"])
    hits = [f for f in runs[mode].findings if f.row in clean]
    assert hits == []


def test_scores_stats_progress_and_timings(planted: dict, runs: dict) -> None:
    res, stage = runs["hybrid"], runs["stage"]
    n_text = len(planted["pairs"]) - 1  # the pre-tokenized row is skipped
    assert res.rows == list(range(n_text))
    assert set(res.scores) == {"pair_cosine", "near_duplicate_pair_score", "near_duplicate_pair_reason"}
    nd_score = np.asarray(res.scores["near_duplicate_pair_score"])
    assert nd_score.shape == (n_text,) and np.all(nd_score[list(planted["exact"])] > 0.999)
    ni = by_check(res.findings, "near_identical_pair")
    assert planted["ni_row"] in ni and ni[planted["ni_row"]].field == "rejected"
    st = res.stats["near_duplicates"]
    assert st["mode"] == "hybrid" and st["n_skipped_pretokenized"] == 1 and st["index"].startswith("flat")
    # the transformer only embedded the candidates: planted copies and their sources, a few more at most
    assert 2 * 125 <= st["hybrid_candidate_rows"] <= 2 * 125 + 40
    assert st["prompts_with_several_pairs"] >= len(planted["exact"]) + 10
    # run-specific figures are timings, never stats (report.json stays byte-identical between runs)
    assert not any(k.endswith("_s") or "cached" in k for k in st)
    assert res.timings["near_duplicates:transformer_texts_encoded"] > 0
    models = stage.ctx.models
    assert models["embedder"]["id"] == "bundled:all-MiniLM-L6-v2" and "n_cached" not in models["embedder"]
    assert models["static_embedder"]["source_sha256"] == models["embedder"]["sha256"]
    # progress: absolute counts per phase, ending at the total when it is known
    phases = {p for p, _, _ in runs["progress"]}
    assert {"embed_static", "embed"} <= phases
    static_done = [d for p, d, _ in runs["progress"] if p == "embed_static"]
    assert static_done == sorted(static_done) and static_done[-1] == 3 * n_text
    last = [(d, t) for p, d, t in runs["progress"] if p == "embed"][-1]
    assert last[1] is not None and last[0] == last[1]


def test_a_score_at_the_flag_floor_says_what_the_verification_made_of_it(planted: dict, runs: dict) -> None:
    """``near_duplicate_pair_reason``: every row whose score reaches ``min_response_flag`` says what the
    verification made of its nearest pair (a copy, or the rule that turned it down, naming the other row);
    the words agree with the findings: a planted exact copy "a copy of" its source, an untouched row with a
    high score and no finding "not a copy of" some row, with the rule."""
    res = runs["hybrid"]
    score = np.asarray(res.scores["near_duplicate_pair_score"])
    reason = [r.decode() for r in res.scores["near_duplicate_pair_reason"].tolist()]
    floor = NEAR_DUPLICATE_INFO.thresholds["min_response_flag"]
    shown = {i for i, r in enumerate(reason) if r}
    assert shown == {i for i, s in enumerate(score) if s >= floor}
    for r, o in planted["exact"].items():
        assert reason[r].startswith(f"a copy of row {o} ") or reason[o].startswith(f"a copy of row {r} ")
    nd = by_check(res.findings, "near_duplicate_pair")
    cp = by_check(res.findings, "contradictory_pair")
    for i in shown:
        if reason[i].startswith("not a copy of row"):
            assert i not in nd and ": " in reason[i] and "not verified" not in reason[i], reason[i]
    for r in planted["swap"]:
        assert r in cp and ("other way" in reason[r] or "copy" in reason[r]), reason[r]
    turned_down = [reason[i] for i in sorted(shown - set(nd) - set(cp)) if reason[i].startswith("not a copy")]
    assert turned_down, "a real HH sample has rows near each other that are not copies"


def test_rerun_hits_cache_and_gives_identical_findings(planted: dict, runs: dict) -> None:
    res2, stage2 = run_stage(planted["pairs"], runs["cache"], batch=100)  # other batches: same answer
    assert res2.timings["near_duplicates:transformer_texts_encoded"] == 0
    assert res2.findings == runs["hybrid"].findings
    assert res2.stats == runs["hybrid"].stats
    assert np.array_equal(res2.scores["pair_cosine"], runs["hybrid"].scores["pair_cosine"])


def test_small_input_is_decided_by_the_transformer(planted: dict, runs: dict) -> None:
    """Below min_rows_static every mode lets the transformer decide (a mean of few rows is no baseline)."""
    copies = dict(list(planted["light"].items())[:5])
    keep = sorted(set(range(20)) | set(copies) | set(copies.values()))
    pairs = [planted["pairs"][i] for i in keep]
    res, _ = run_stage(pairs, runs["cache"])
    assert res.stats["near_duplicates"]["mode"].startswith("transformer")
    nd = by_check(res.findings, "near_duplicate_pair")
    assert {r: nd[r].group for r in nd} == copies


def test_disabled_checks_produce_nothing(planted: dict, runs: dict) -> None:
    res, _ = run_stage(planted["pairs"], runs["cache"], mode="static", enabled={"contradictory_pair"},
                       skip=["near_identical_pair"])
    assert {f.check for f in res.findings} == {"contradictory_pair"}


def test_closest_real_hh_neighbours_stay_apart(runs: dict) -> None:
    """On the whole HH file, the 30 closest pairs of different rows (templated prompts with other answers,
    same-topic conversations) are not merged, in either mode; exact copies in the file still are."""
    rows = hh_rows()
    pairs = to_pairs(rows)
    for mode in ("static", "hybrid"):
        res, stage = run_stage(pairs, runs["cache"], mode=mode, batch=1000)
        flagged = {f.row for f in res.findings if f.check in ("near_duplicate_pair", "contradictory_pair")}
        copies = {i for i, r in enumerate(rows) if rows.index(r) != i}  # exact repeats of an earlier row
        assert flagged <= copies | {rows.index(rows[i]) for i in copies}, (mode, sorted(flagged - copies)[:10])
    # the 30 closest different rows by the static search vectors (mean removed), none flagged
    from pairaudit.models.static_embedder import StaticEmbedder

    emb = stage.static
    assert isinstance(emb, StaticEmbedder)
    V = emb.encode([t for r in rows for t in r]).astype(np.float16)
    P, C, R = (center(A, field_mean(A)) for A in (V[0::3], V[1::3], V[2::3]))
    S = (P.astype(np.float32) + C + R) / 3
    G = S @ S.T
    iu = np.triu_indices(len(rows), 1)
    order = np.argsort(-G[iu])
    closest = [(int(iu[0][k]), int(iu[1][k])) for k in order[:200] if rows[iu[0][k]] != rows[iu[1][k]]][:30]
    assert len(closest) == 30 and not any(i in flagged or j in flagged for i, j in closest)


@pytest.mark.parametrize("floor, found_it", [(None, True), (0.85, False)], ids=["static_min_prompt", "at_0.85"])
def test_static_mode_decides_prompts_with_its_own_floor(runs: dict, floor: float | None, found_it: bool) -> None:
    """--fast decides prompts with ``static_min_prompt`` (0.80): a copy whose short prompt got two words in
    front (static similarity ~0.82: a bag of token vectors moves far when a short text changes) is found; with
    the transformer's floor 0.85 it is not. The two rows are a planted copy that bench_dedup.py (seed 12) missed
    in static mode before; nothing else is merged."""
    rows = hh_rows(200)
    chosen = (" I have a name, but I\u2019d rather you called me \u201cyou\u201d, since it is a good human practice to "
              "refer to other humans by their name.")
    rows.append(("\n\nHuman: Do you have a name?\n\nAssistant:", chosen, " Yes I do, it\u2019s Angelica"))
    rows.append(("\n\nHuman: Quick question: Do you have a name?\n\nAssistant:", " Well," + chosen,
                 " Yes I do, it\u2019s Angelica"))
    res, _ = run_stage(to_pairs(rows), runs["cache"], mode="static", batch=1000, enabled={"near_duplicate_pair"},
                       skip=["near_identical_pair"], dup=None if floor is None else {"static_min_prompt": floor})
    got = {(f.row, f.group) for f in res.findings if f.check == "near_duplicate_pair"}
    assert ((201, 200) in got) is found_it, got
    assert got <= {(201, 200)}
    assert res.stats["near_duplicates"]["mode"] == "static"


def test_ultrafeedback_paraphrases_found_and_templated_tasks_kept_apart(runs: dict) -> None:
    """UltraFeedback holds templated tasks (the same instructions, another input, answers of the same shape):
    both modes find the paraphrased copies and keep the templated tasks apart (the static model brings such
    tasks closer than the transformer; the calibrated response threshold keeps them apart)."""
    rows = uf_rows(250)
    rng = random.Random(11)
    src = rng.sample(range(len(rows)), 25)
    planted = {}
    for o in src:
        p, c, r = rows[o]
        rows.append((reword_prompt("Human: " + p, rng)[len("Human: "):], paraphrase(c, rng), paraphrase(r, rng)))
        planted[len(rows) - 1] = o
    other = {r: o for r, o in planted.items() if renumbered(rows[r], rows[o])}  # another answer (renumbered)
    planted = {r: o for r, o in planted.items() if r not in other}
    for mode in ("hybrid", "static"):
        res, _ = run_stage(to_pairs(rows), runs["cache"], mode=mode, skip=["near_identical_pair"])
        got = found(res, planted)
        assert len(got) >= 0.95 * len(planted), (mode, sorted(set(planted) - set(got)))
        assert not found(res, other), mode
        assert not [f for f in res.findings if f.row < 250 and f.row not in src], mode


# -- the search and verification on synthetic vectors (no model) -------------------------------

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
    assert not any(k.endswith("_s") for k in out["stats"])


def test_one_distant_field_blocks_a_match() -> None:
    """Same prompt and chosen but an unrelated rejected: two different comparisons, not duplicates."""
    rng = np.random.default_rng(1)
    n, d = 200, 32
    P, C, R = (_unit(rng.normal(size=(n, d))) for _ in range(3))
    P[1], C[1] = P[0], C[0]
    texts = [[f"p{i}", f"c{i}", f"r{i}"] for i in range(n)]
    texts[1][:2] = texts[0][:2]
    sk = np.array([[sketch(t)[0] for t in row] for row in texts], dtype="S257")
    ln = np.array([[sketch(t)[1] for t in row] for row in texts], dtype=np.int32)
    params = dict(NEAR_DUPLICATE_INFO.thresholds)
    out = find_groups(np.arange(n), P, C, R, sk, ln, params, params)
    assert out["findings"] == []


def test_sketch_keeps_head_and_tail() -> None:
    s, n = sketch("Hello,   WORLD!")
    assert s == b"hello world" and n == 11
    long = "start " + "middle " * 100 + "end"
    s, n = sketch(long)
    assert n > 256 and len(s) == 257 and s.startswith(b"start middle") and s.endswith(b"middle end")


def test_text_facts_is_sketch_and_both_digests() -> None:
    """The stage's one normalisation per text gives what sketch() and the two digests gave separately."""
    from pairaudit.stages.near_duplicates.match import normalise, text_facts
    from pairaudit.stages.near_duplicates.texts import text_hash

    rows = [json.loads(x) for x in (Path(__file__).resolve().parent.parent / "examples" / "hh-rlhf-helpful-base-500.jsonl").read_text(encoding="utf-8").splitlines()[:200]]
    texts = [r[k] for r in rows for k in ("chosen", "rejected")] + ["", "  ", "Café — naïve?", "x" * 70_000 + " y"]
    for t in texts:
        sk, n, h_norm, h_raw = text_facts(t)
        assert (sk, n) == sketch(t)
        assert h_norm == text_hash(normalise(t)) and h_raw == text_hash(t)
    assert text_facts("Hello, World")[2] == text_facts("hello world")[2] != text_facts("hello there")[2]


def test_state_export_absorb_matches_single_process(planted: dict, runs: dict) -> None:
    """Engines that observe in workers (Ray) merge exported states on the driver: same findings."""
    from pairaudit.config import Context, ScanConfig

    ctx = Context(config=ScanConfig(embed_mode="static"), cache_dir=runs["cache"])
    enabled = {"near_duplicate_pair", "contradictory_pair"}
    driver, w1, w2 = (NearDuplicateStage(ctx, enabled) for _ in range(3))
    w1.observe(planted["pairs"][:200], None)
    w2.observe(planted["pairs"][200:], None)
    for w in (w1, w2):
        driver.absorb_state(w.export_state())
    assert w1._rows == [] and w1.n_skipped == 0
    assert driver.finalize().findings == runs["static"].findings


def test_the_distillation_is_announced_once_a_process_when_no_cache_keeps_it(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Two stages (near duplicates, likely_flipped) ask for the static model; with a cache that cannot keep it
    (full disk: issue 38's checker saw the line twice) it is distilled once a process, and said once."""
    from pairaudit.models import static_embedder
    from pairaudit.models.embedder import Embedder

    monkeypatch.setattr(static_embedder, "_ANNOUNCED", set())
    emb = Embedder()
    logs: list[str] = []
    for _ in range(2):
        static_embedder.StaticEmbedder.for_embedder(emb, tmp_path / "empty-cache", purpose="test", fix="-",
                                                    log=logs.append)
    assert sum("distilling" in m for m in logs) == 1, logs


def _held6_sketches() -> tuple[list[dict], np.ndarray, np.ndarray]:
    """The held-out set of reworded prompts (held6): its rows, and their sketches and lengths (n, 3)."""
    path = Path(__file__).resolve().parent.parent / "data" / "precision" / "neardup_heldout6.jsonl"
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    sks = [[sketch(r[f]) for f in ("prompt", "chosen", "rejected")] for r in rows]
    sk = np.array([[s[0] for s in row] for row in sks])
    ln = np.array([[s[1] for s in row] for row in sks], dtype=np.int32)
    return rows, sk, ln


def _held6_vectors(seed: int, spread: tuple[float, float]) -> tuple[Any, ...]:
    """held6's rows, sketches and lengths, vectors in which a plant leans towards its base row's (``spread``: the
    range of the noise's weight), every pair of rows and the response digests."""
    rows, sk, ln = _held6_sketches()
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(len(rows), 3, 64)).astype(np.float32)
    for i, r in enumerate(rows):
        if r.get("plant_of") is not None:
            base[i] = base[int(r["plant_of"])] + rng.uniform(*spread) * base[i]
    P, C, R = (base[:, f] / np.linalg.norm(base[:, f], axis=1, keepdims=True) for f in range(3))
    a, b = (x.astype(np.int64) for x in np.triu_indices(len(rows), 1))
    hresp = np.array([[hash(r["chosen"]), hash(r["rejected"])] for r in rows], dtype=np.int64)
    return rows, sk, ln, P, C, R, a, b, hresp


def test_responses_reach_holds_every_pair_that_any_calibration_reads_past_the_floors() -> None:
    """``verify.responses_reach`` at ``lowest_response_floor`` decides whether hybrid mode embeds the calibration
    sample: a pair it leaves out must be turned down on a field floor (prompt or response) under every copy
    threshold the calibration can give, so its outcome never depends on the calibration. Real HH texts (held6:
    reworded copies, same-topic requests, unrelated rows), vectors that follow the plants plus noise, and
    several calibrated rules, floors to cap."""
    from pairaudit.stages.near_duplicates.calibrate import with_calibration
    from pairaudit.stages.near_duplicates.match import (
        APART,
        COMPARED,
        MATCHED,
        OTHER_NUMBERS,
        OUTCOME_FIELDS,
        compared_keys,
    )
    from pairaudit.stages.near_duplicates.verify import lowest_response_floor, pair_outcomes, responses_reach

    rows, sk, ln, P, C, R, a, b, hresp = _held6_vectors(5, (0.1, 1.5))  # responses land around the floors
    th = dict(NEAR_DUPLICATE_INFO.thresholds)
    two = np.zeros(len(rows), dtype=bool)
    two[: len(rows) // 3] = True  # some rows read with the lone-pair floor (floor_wording_two_rows)
    reach = responses_reach(C, R, sk, ln, a, b, lowest_response_floor(th, th, True), True)
    assert reach.any() and (~reach).any()
    outs = []
    for t, tf in ((0.85, 0.8), (0.9, 0.85), (0.98, 0.98), (0.85, 0.85)):
        dup, con = with_calibration(th, th, {"min_response": t, "min_response_flag": tf})
        out = pair_outcomes(P, C, R, sk, ln, a, b, dup, con, True, True, compared=(hresp, compared_keys(hresp)),
                            two_rows=two)
        floors = np.isin(out["code"], (APART, OTHER_NUMBERS, COMPARED))  # turned down on a field floor
        same = (out["code"] == MATCHED) & np.isnan(out["limit"])  # a copy in the same words: no threshold named
        assert (floors | same)[~reach].all(), (t, np.flatnonzero(~reach & ~floors & ~same)[:5])
        assert (~floors & reach).any()  # some reached pairs are read past the floors
        outs.append(out)
    assert same[~reach].any()  # copies whose responses are the base row's words: left out, matched all the same
    for out in outs[1:]:  # what is left out reads the same under every calibration, threshold and all
        for k in OUTCOME_FIELDS:
            assert np.array_equal(out[k][~reach], outs[0][k][~reach], equal_nan=True), k


def test_prompts_pass_holds_every_pair_the_deciding_rule_reads_past_its_prompt() -> None:
    """``verify.prompts_pass`` decides which candidate pairs' responses hybrid mode embeds and calibrates on: every
    pair the deciding rule does not turn down on its prompt (outcome field > 0, or a match) must be among them,
    and a pair outside them is turned down on field 0. Real HH prompts (held6: reworded copies, same-topic
    requests for something else, unrelated rows; numbers in some), vectors that follow the wording plus noise."""
    from pairaudit.stages.near_duplicates.match import MATCHED, OTHER_WAY, UNSURE, compared_keys
    from pairaudit.stages.near_duplicates.verify import pair_outcomes, prompts_pass

    rows, sk, ln, P, C, R, a, b, hresp = _held6_vectors(3, (0.2, 1.2))  # some prompts land near the floor
    dup = {**NEAR_DUPLICATE_INFO.thresholds, "floor_response": 0.85, "floor_response_flag": 0.8}
    live = prompts_pass(P, sk, ln, a, b, dup, dup, True)
    out = pair_outcomes(P, C, R, sk, ln, a, b, dup, dup, True, True, compared=(hresp, compared_keys(hresp)))
    past = (out["field"] > 0) | np.isin(out["code"], (MATCHED, UNSURE, OTHER_WAY))
    assert past.any() and (~live).any() and live.any()
    assert not (past & ~live).any()
    assert (out["field"][~live] == 0).all()


def test_the_candidate_rule_reads_the_prompts_cosine_and_only_a_deciding_wording() -> None:
    """Hybrid mode's loose rule: the prompts pass on the static cosine (>= candidate_min_prompt) or on a wording that
    passes the deciding rule alone (>= min_prompt); a wording below that (two HH prompts share their "Human: ...
    Assistant:" frame word for word) no longer makes a candidate (docs/near_duplicates.md, "The prompts")."""
    from pairaudit.stages.near_duplicates.verify import _rules

    frame = "\n\nHuman: {}\n\nAssistant: Sure, happy to help.\n\nHuman: {}\n\nAssistant:"
    prompts = [frame.format("How do I bake bread?", "And how long?"),
               frame.format("Who won the cup in 1998?", "And in 2002?"),  # the frame's words: wording ~0.6
               frame.format("How do I bake bread ?", "And how long??"),  # the same words: wording 1
               frame.format("Best way to learn piano?", "Any apps?")]
    sks = [sketch(t) for t in prompts]
    resp = sketch(" Preheat the oven to 220C.")
    sk = np.array([[s[0], resp[0], resp[0]] for s in sks])
    ln = np.array([[s[1], resp[1], resp[1]] for s in sks], dtype=np.int32)
    # static prompt cosines with row 0: 0.1 (row 1), 1 (row 2), 0.6 (row 3); the responses are the same
    P = np.array([[1.0, 0.0], [0.1, np.sqrt(0.99)], [1.0, 0.0], [0.6, 0.8]], np.float32)
    C = R = np.ones((4, 2), np.float32) / np.sqrt(2)
    rule, _ = _rules(dict(NEAR_DUPLICATE_INFO.thresholds), {}, candidates_only=True)
    from pairaudit.stages.near_duplicates.match import match_pairs, wording

    a, b = np.array([0, 0, 0]), np.array([1, 2, 3])
    w = wording(sk, ln, None, (a, 0), (b, 0), 0.0)
    assert 0.5 <= w[0] < 0.85 and w[1] >= 0.85  # the frame alone lifts the wording of two unrelated prompts
    ok = match_pairs(P, C, R, sk, ln, a, b, rule, straight=True)[0]
    assert ok.tolist() == [False, True, True]  # frame only: out; same words: in; static cosine 0.6: in


def test_match_edges_on_threads_is_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of candidate pairs verified on threads give the edges and outcomes of one thread, in pair order
    (held6's real HH texts, every pair of rows, both kinds wanted, chunks of 500 pairs)."""
    from pairaudit.stages.near_duplicates import verify
    from pairaudit.stages.near_duplicates.match import OUTCOME_FIELDS, compared_keys

    rows, sk, ln, P, C, R, a, b, hresp = _held6_vectors(9, (0.1, 1.5))
    th = dict(NEAR_DUPLICATE_INFO.thresholds)
    monkeypatch.setattr(verify, "MATCH_CHUNK", 500)
    runs = []
    for threads in (1, 2, 4):
        outcome: dict[str, np.ndarray] = {}
        es, ex = verify.match_edges(P, C, R, sk, ln, a, b, th, th, True, True,
                                    compared=(hresp, compared_keys(hresp)), outcome=outcome, threads=threads)
        runs.append((es, ex, outcome))
    assert len(a) > 20 * 500 and len(runs[0][0]["a"]) > 10  # held6 has copies, no swapped rows
    for es, ex, outcome in runs[1:]:
        for got, want in ((es, runs[0][0]), (ex, runs[0][1])):
            for k in want:
                np.testing.assert_array_equal(got[k], want[k])
        for k in OUTCOME_FIELDS:
            np.testing.assert_array_equal(outcome[k], runs[0][2][k])


def test_packed_texts_round_trip_and_compress_a_repeat_once() -> None:
    """``texts.pack`` with a memo: rows sharing a prompt compress it once; every row unpacks to its own three
    texts (empty, non-ASCII and lone-surrogate texts included), with or without the memo."""
    from pairaudit.stages.near_duplicates.texts import pack, unpack
    from pairaudit.trainer.memo import TextMemo

    prompt = "\n\nHuman: How do I keep basil alive indoors?\n\nAssistant:"
    rows = [[prompt, " Water it when the top inch of soil is dry.", " Put it in the fridge."],
            [prompt, " Give it six hours of sun.", ""],
            ["", " café \udc80 naïve", " ok"]]
    memo: TextMemo[bytes] = TextMemo()
    blobs = [pack(r, memo) for r in rows]
    assert [unpack(b) for b in blobs] == rows
    assert [pack(r) for r in rows] == blobs  # the memo changes no byte
    assert memo.hits == 2  # the shared prompt and the empty text, each compressed once

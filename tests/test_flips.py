"""likely_flipped / dpo_overflow_risk: the cross-fitted flip model (learned signs, calibration, verdict,
flip-rate interval), precision limits, and the real default reference model (bundled SmolLM2)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pairaudit.config import Context, ScanConfig
from pairaudit.datatypes import Pair
from pairaudit.stages.flips.overflow import half_ulp
from pairaudit.stages.flips.stage import DPO_OVERFLOW_INFO, LIKELY_FLIPPED_INFO, FlipStage

pytest.importorskip("sklearn")


def test_likely_flipped_is_on_by_default_and_overflow_opt_in() -> None:
    assert LIKELY_FLIPPED_INFO.default_enabled and LIKELY_FLIPPED_INFO.default_action == "flag"
    assert not DPO_OVERFLOW_INFO.default_enabled and DPO_OVERFLOW_INFO.extra == "models"
    assert "removing" in LIKELY_FLIPPED_INFO.why


def test_half_ulp_matches_real_rounding() -> None:
    torch = pytest.importorskip("torch")
    xs = np.array([-1000.3, -3.7, -70000.0, -0.01, 517.0])
    for bits, dtype in ((7, torch.bfloat16), (10, torch.float16)):
        rounded = torch.tensor(xs, dtype=torch.float64).to(dtype).double().numpy()
        err = np.abs(rounded - xs)
        bound = half_ulp(xs, bits)
        finite = np.isfinite(rounded)
        assert np.all(err[finite] <= bound[finite] + 1e-12)
        assert np.all(err[finite] >= 0)
    assert half_ulp(np.array([1000.0]), 7)[0] == 2.0  # bf16 spacing in [512, 1024) is 4


def _planted(n: int, rate: float, seed: int, strength: float = 1.5) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Antisymmetric features of ``n`` pairs, a share ``rate`` flipped (every feature changes sign)."""
    rng = np.random.default_rng(seed)
    flipped = np.zeros(n, bool)
    flipped[rng.choice(n, int(round(rate * n)), replace=False)] = True
    sign = np.where(flipped, -1.0, 1.0)
    feats = {
        # informative but inverted: the preferred side has the *lower* value (like a reference model that
        # dislikes the longer, better answer)
        "inverted": sign * (-strength + rng.normal(size=n)),
        "weak": sign * (0.2 + rng.normal(size=n)),
        "noise_a": rng.normal(size=n), "noise_b": rng.normal(size=n),
    }
    return feats, flipped


def test_inverted_informative_feature_is_learned_not_fought() -> None:
    from sklearn.metrics import roc_auc_score

    from pairaudit.stages.flips.model import fit_flip_model

    feats, flipped = _planted(600, 0.1, seed=1)
    fit = fit_flip_model(feats, folds=5)
    assert fit.weights["inverted"] < 0 < fit.weights["weak"]  # signs learned from the labels themselves
    combined = roc_auc_score(flipped, 1 - fit.p_correct)
    assert combined > 0.9
    # a fixed-sign reading of the inverted feature is worse than chance; the model is not
    assert roc_auc_score(flipped, -feats["inverted"]) < 0.2
    # rows missing a feature (NaN) are still scored from the others
    feats["inverted"][:100] = np.nan
    fit2 = fit_flip_model(feats, folds=5)
    assert np.isfinite(fit2.p_correct).all() and roc_auc_score(flipped, 1 - fit2.p_correct) > 0.85


@pytest.mark.parametrize("rate", [0.1, 0.2])
def test_flip_rate_interval_covers_the_planted_rate(rate: float) -> None:
    from pairaudit.stages.flips.verdict import flip_result

    feats, flipped = _planted(800, rate, seed=2, strength=2.5)
    raw = {"chars": feats["inverted"], "words": feats["weak"], "lines": feats["noise_a"],
           "ends_punct": feats["noise_b"]}
    params = {**LIKELY_FLIPPED_INFO.thresholds}
    findings, scores, stats = flip_result(np.arange(800), raw, None, None, params, {})
    assert stats["status"] == "informative", stats
    lo, hi = stats["flip_rate_interval"]
    assert lo <= rate <= hi and hi - lo < 0.1, stats
    flagged = {f.row for f in findings}
    assert flagged and len(flagged & set(np.nonzero(flipped)[0])) / len(flagged) > 0.8
    assert all("driven by" in f.detail for f in findings)


def test_a_weak_model_ranks_rows_but_flags_none() -> None:
    """A model only a little better than chance (the CPU default on real sets: AUROC proxy 0.60-0.67) flags
    mostly its own errors; it says so and flags nothing unless asked, while the scores still rank the rows."""
    from sklearn.metrics import roc_auc_score

    from pairaudit.stages.flips.verdict import flip_result

    feats, flipped = _planted(1000, 0.1, seed=6, strength=0.35)
    raw = {"chars": feats["inverted"], "words": feats["weak"], "lines": feats["noise_a"],
           "ends_punct": feats["noise_b"]}
    params = {**LIKELY_FLIPPED_INFO.thresholds}
    findings, scores, stats = flip_result(np.arange(1000), raw, None, None, params, {})
    assert stats["status"] == "informative" and stats["auroc_proxy"] < 0.75 and not stats["flags"], stats
    assert findings == [] and "no row is flagged" in stats["verdict"] and "min_auroc_for_flags" in stats["flags_note"]
    assert roc_auc_score(flipped, scores["likely_flipped_score"]) > 0.55  # the ranking is still there
    asked, _, stats2 = flip_result(np.arange(1000), raw, None, None, {**params, "min_auroc_for_flags": 0.0}, {})
    assert stats2["flags"] and "leads to review" in stats2["verdict"]
    assert asked and {f.row for f in asked} == set(np.flatnonzero(scores["likely_flipped_score"] >= params["threshold"]))


def test_random_labels_are_at_chance_and_flag_nothing() -> None:
    from pairaudit.stages.flips.verdict import flip_result

    rng = np.random.default_rng(3)
    raw = {k: rng.normal(size=500) for k in ("chars", "words", "lines", "ends_punct")}
    findings, scores, stats = flip_result(np.arange(500), raw, rng.normal(size=(500, 32)).astype(np.float16), None,
                                          {**LIKELY_FLIPPED_INFO.thresholds}, {})
    assert stats["status"] == "at_chance" and "at chance" in stats["verdict"]
    assert findings == [] and stats["estimated_flip_rate"] is None
    assert np.nanmax(scores["likely_flipped_score"]) < 0.7  # calibrated: no confident noise


def test_too_few_rows_give_no_scores() -> None:
    from pairaudit.stages.flips.verdict import flip_result

    feats, _ = _planted(50, 0.1, seed=4, strength=3.0)
    raw = {"chars": feats["inverted"], "words": feats["weak"], "lines": feats["noise_a"], "ends_punct": feats["noise_b"]}
    findings, scores, stats = flip_result(np.arange(50), raw, None, None, {**LIKELY_FLIPPED_INFO.thresholds}, {})
    assert stats["status"] == "not_enough_rows" and "not enough rows to judge labels" in stats["verdict"]
    assert findings == [] and np.isnan(scores["likely_flipped_score"]).all()


def test_auroc_proxy_matches_sklearn() -> None:
    from sklearn.metrics import roc_auc_score

    from pairaudit.stages.flips.stats import auroc_proxy

    d = np.random.default_rng(5).normal(0.3, 1, size=300).round(1)  # with ties
    assert auroc_proxy(d) == pytest.approx(roc_auc_score(np.r_[np.ones(300), np.zeros(300)], np.r_[d, -d]))


GOOD = ["The capital of France is Paris, which is also its largest city.", "Red is a primary colour."]
BAD = ["Purple seventeen the of banana quickly sideways Paris blorf.", "Colour I name a red primary, is?"]
PROMPTS = ["What is the capital of France?", "Name a primary colour."]


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory):
    pytest.importorskip("torch")
    pairs = []
    for k in range(2):  # each gibberish-chosen pair next to its twin
        pairs.append(Pair(2 * k, "standard", PROMPTS[k], GOOD[k], BAD[k]))
        pairs.append(Pair(2 * k + 1, "standard", PROMPTS[k], BAD[k], GOOD[k]))
    cfg = ScanConfig(device="cpu")  # default reference: the bundled SmolLM2-135M-Instruct GGUF
    logs: list[str] = []
    ctx = Context(cfg, tmp_path_factory.mktemp("cache"), logs.append, params={})
    stage = FlipStage(ctx, {"dpo_overflow_risk"})
    stage.observe(pairs[:2], None)
    stage.observe(pairs[2:], None)
    return stage, stage.finalize(), ctx, logs, pairs


def test_real_reference_logps_and_pooled_states(real_run) -> None:
    stage, res, ctx, logs, pairs = real_run
    assert res.rows == [0, 1, 2, 3]
    lc, lr = np.asarray(res.scores["ref_logp_chosen"]), np.asarray(res.scores["ref_logp_rejected"])
    assert np.all(lc < 0) and np.all(lr < 0)
    assert lc[0] == pytest.approx(lr[1]) and lc[1] == pytest.approx(lr[0])  # same sequences, same cache key
    # the reference prefers the fluent answer per token
    mean = np.asarray(res.scores["ref_mean_logp_chosen"]) - np.asarray(res.scores["ref_mean_logp_rejected"])
    assert mean[0] > 0 > mean[1] and mean[2] > 0 > mean[3]
    # pooled hidden states come from the same forward and are antisymmetric across twins
    hid = np.concatenate(stage._hid).astype(np.float32)
    assert hid.shape == (4, 576) and np.isfinite(hid).all() and np.abs(hid).max() > 0.1
    np.testing.assert_allclose(hid[0], -hid[1], atol=1e-2)
    assert ctx.models["reference"]["sha256"] and any("tokens" in m for m in logs)
    assert res.stats["dpo_overflow_risk"]["reference"]["rows_scored"] == 4
def test_real_reference_overflow_and_cache(real_run) -> None:
    stage, res, ctx, _, pairs = real_run
    risk = np.asarray(res.scores["dpo_overflow_risk_score"])
    assert np.all((risk >= 0) & (risk <= 1))
    assert np.all(np.isnan(res.scores["policy_logit"]))
    assert res.timings["flips:reference:sequences_computed"] == 4  # 8 sequences, 4 distinct (prompt, answer)
    # rerun over the same cache: nothing computed, identical scores, hidden states from the cache
    again = FlipStage(ctx, {"dpo_overflow_risk"})
    again.observe(pairs, None)
    res2 = again.finalize()
    assert res2.timings["flips:reference:sequences_computed"] == 0
    np.testing.assert_allclose(res2.scores["ref_logp_chosen"], res.scores["ref_logp_chosen"])
    np.testing.assert_array_equal(np.concatenate(again._hid), np.concatenate(stage._hid))


def test_reference_joins_by_default_only_where_it_is_cheap(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    from pairaudit.stages.flips.stage import wants_reference

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # this machine has no GPU to show it
    assert wants_reference(ScanConfig(), {"likely_flipped"})
    assert not wants_reference(ScanConfig(device="cpu"), {"likely_flipped"})
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert not wants_reference(ScanConfig(), {"likely_flipped"})
    assert wants_reference(ScanConfig(reference="default"), {"likely_flipped"})
    assert wants_reference(ScanConfig(), {"likely_flipped", "dpo_overflow_risk"})


def test_a_reference_cap_without_a_reference_says_it_does_nothing(tmp_path: Path) -> None:
    """--reference-max-rows on a CPU scan without --reference once passed silently (exit 0, only report.json knew)."""
    said: list[str] = []
    FlipStage(Context(ScanConfig(device="cpu", reference_max_rows=10), tmp_path, said.append, params={}),
              {"likely_flipped"})
    assert [m for m in said if "--reference-max-rows 10 has no effect: no reference model runs" in m], said
    said.clear()  # likewise --engine ray's fitting sample under the local engine, when the user set it
    asked = {"likely_flipped": {"fit_sample_rows": 9}}
    FlipStage(Context(ScanConfig(device="cpu", thresholds=asked), tmp_path, said.append, params=asked),
              {"likely_flipped"})
    assert [m for m in said if "fit_sample_rows 9 has no effect with --engine local: it fits every row" in m], said
    said.clear()  # the default (in every scan's params) says nothing: it once warned on every default local scan
    defaults = {"likely_flipped": {"fit_sample_rows": 100_000}}
    FlipStage(Context(ScanConfig(device="cpu"), tmp_path, said.append, params=defaults), {"likely_flipped"})
    assert not [m for m in said if "fit_sample_rows" in m], said


def test_hub_embedder_leaves_the_length_signal_with_a_note(tmp_path: Path) -> None:
    pytest.importorskip("model2vec")
    ctx = Context(ScanConfig(embedder="org/not-a-local-folder", device="cpu"), tmp_path, params={})
    stage = FlipStage(ctx, {"likely_flipped"})
    assert stage.static is None
    assert any("embedding features skipped" in n and "hub id" in n for n in stage._notes)


def test_the_pairs_of_one_prompt_share_a_fold() -> None:
    """Multi-pair data: a model fitted on one pair of a prompt must not score another pair of it (they share a
    response and its features; the out-of-fold AUROC proxy would read the leak as evidence). Rows alone in
    their group keep the folds they have without groups."""
    from pairaudit.stages.flips.model import _folds

    n = 400
    groups = np.arange(n, dtype=np.int64)
    groups[100:160] = 7  # one prompt with 60 pairs
    groups[200:260:2] = 9  # another, its pairs spread out
    plain, k = _folds(n, 5, 0)
    grouped, k2 = _folds(n, 5, 0, groups)
    assert k == k2 == 5
    for g in (7, 9):
        assert len(set(grouped[groups == g].tolist())) == 1
    alone = np.isin(groups, [7, 9], invert=True)
    assert (grouped[alone] == plain[alone]).all()
    assert len(set(plain[groups == 7].tolist())) > 1  # without groups the prompt's pairs are spread


def test_the_c_search_fits_each_model_as_sklearn_on_both_orientations() -> None:
    """The regularisation search copies and standardises the given orientation of a fold's rows once for every C
    (a buffer the folds share, no negated copy: weight 2 and a zero row of the other class) and runs L-BFGS-B with
    scipy's own BLAS at one thread; each fold model, so the out-of-fold log-odds and the weights, is the one a
    fresh StandardScaler + LogisticRegression per C and fold gives on both orientations (2m rows), to the solver's
    tolerance, and the same C wins."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from pairaudit.stages.flips.model import C_GRID, _folds, oof_logodds
    from pairaudit.stages.flips.stats import auroc_proxy

    rng = np.random.default_rng(3)
    n, dim = 600, 24
    x = (rng.normal(size=(n, dim)) + 0.4 * rng.normal(size=dim)).astype(np.float32)
    x *= np.where(rng.random(n) < 0.2, -1.0, 1.0).astype(np.float32)[:, None]  # a fifth flipped
    groups = rng.integers(0, 400, n)
    linear: list[np.ndarray] = []
    got = oof_logodds(x, folds=5, linear=linear, groups=groups)
    fold, k = _folds(n, 5, 0, groups)
    best: tuple[float, np.ndarray, list[np.ndarray]] | None = None
    for c in C_GRID:
        d, lin = np.zeros(n), []
        for f in range(k):
            tr, te = fold != f, fold == f
            both = np.concatenate([x[tr], -x[tr]])
            sc = StandardScaler(with_mean=False).fit(both)
            y = np.r_[np.ones(tr.sum()), np.zeros(tr.sum())]
            w = LogisticRegression(C=c, fit_intercept=False, max_iter=2000).fit(sc.transform(both), y).coef_[0]
            d[te] = sc.transform(x[te]) @ w
            lin.append(w / sc.scale_)
        auc = auroc_proxy(d)
        if best is None or auc > best[0] + 1e-9:
            best = (auc, d, lin)
    assert best is not None
    scale = np.abs(best[1]).max()  # the two fits stop where L-BFGS-B's tolerance (gtol 1e-4) lets them
    assert scale > 0.05
    np.testing.assert_allclose(got, best[1], rtol=0, atol=2e-3 * scale)
    assert np.corrcoef(np.argsort(np.argsort(got)), np.argsort(np.argsort(best[1])))[0, 1] > 0.9999
    assert len(linear) == len(best[2])
    for a, b in zip(linear, best[2]):
        np.testing.assert_allclose(a, b, rtol=0, atol=2e-3 * np.abs(b).max())


def test_the_solver_blas_at_one_thread_gives_the_same_weights() -> None:
    """``one_thread_solver`` limits scipy's own BLAS (L-BFGS-B's small vector and matrix work), never numpy's
    (the products with the data, whose thread split changes the rounding of some rows): the same weights."""
    from sklearn.linear_model import LogisticRegression

    from pairaudit.stages.flips import model

    rng = np.random.default_rng(5)
    x = rng.normal(size=(3000, 64)).astype(np.float32)
    y = (x @ rng.normal(size=64) + rng.normal(size=3000) > 0).astype(np.float64)
    want = LogisticRegression(C=1.0, fit_intercept=False, max_iter=2000).fit(x, y).coef_
    sel = model._scipy_blas()
    before = {lib["filepath"]: lib["num_threads"] for lib in sel.info()} if sel is not None else {}
    with model.one_thread_solver():
        got = LogisticRegression(C=1.0, fit_intercept=False, max_iter=2000).fit(x, y).coef_
        if sel is not None:
            assert all(lib["num_threads"] == 1 for lib in sel.info())
            assert not any("numpy" in Path(lib["filepath"]).parent.name for lib in sel.info())
    assert got.tobytes() == want.tobytes()
    if sel is not None:
        assert {lib["filepath"]: lib["num_threads"] for lib in sel.info()} == before


@pytest.mark.parametrize("rows_per_slice", [1, 7, 333, None])
def test_flip_scale_matches_sklearn_on_both_orientations(rows_per_slice: int | None,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``Scale.fit_symmetric`` sums the squares of the given rows a slice at a time, in float64: sklearn's scale of
    the rows and their negations together (the 2m rows it would copy) to ~1e-14 whatever the slice, on values
    spread over twelve orders of magnitude, a column of zeros kept at 1; a non-finite value is named."""
    from sklearn.preprocessing import StandardScaler

    from pairaudit.stages.flips.model import Scale

    if rows_per_slice is not None:
        monkeypatch.setattr(Scale, "BUFFER_BYTES", 8 * 16 * rows_per_slice)
    rng = np.random.default_rng(11)
    x = (rng.normal(size=(2500, 16)) * 10.0 ** rng.uniform(-6, 6, size=(2500, 16))).astype(np.float32)
    x[:, 4] = 0.0
    both = np.concatenate([x, -x])
    got = Scale.fit_symmetric(x)
    want = StandardScaler(with_mean=False).fit(both)
    np.testing.assert_allclose(got.scale_, want.scale_, rtol=1e-12)
    assert got.scale_[4] == want.scale_[4] == 1.0
    x[17, 2] = np.nan
    with pytest.raises(ValueError, match="feature row 17 is not finite"):
        Scale.fit_symmetric(x)

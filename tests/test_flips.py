"""likely_flipped / dpo_overflow_risk: score combination, precision limits, the pair classifier, and the
real default reference model (bundled SmolLM2) on planted gibberish pairs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from pairaudit.config import Context, ScanConfig
from pairaudit.stages.flips import DPO_OVERFLOW_INFO, LIKELY_FLIPPED_INFO, FlipStage, combine, half_ulp
from pairaudit.types import Pair


def test_infos_are_opt_in_global_flags() -> None:
    for info in (LIKELY_FLIPPED_INFO, DPO_OVERFLOW_INFO):
        assert info.kind == "global" and info.default_action == "flag" and not info.default_enabled
        assert info.extra == "models"
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


def test_combine_weighted_log_odds() -> None:
    probs = {"policy": np.array([0.9, np.nan, 0.5]), "reference": np.array([0.5, 0.8, np.nan])}
    score, den = combine(probs, {"policy": 1.0, "reference": 0.5})
    lo = math.log(0.9 / 0.1)
    assert score[0] == pytest.approx(1 / (1 + math.exp(-(lo * 1.0 + 0.0) / 1.5)))
    # a weak signal alone (total weight 0.5 < 1) is shrunk toward 0.5 in log-odds
    assert score[1] == pytest.approx(1 / (1 + math.exp(-0.5 * math.log(0.8 / 0.2))))
    assert score[2] == pytest.approx(0.5)
    assert list(den) == [1.5, 0.5, 1.0]


def test_pair_classifier_finds_planted_flips() -> None:
    pytest.importorskip("sklearn")
    from pairaudit.stages.pair_classifier import cross_validated_p_correct

    rng = np.random.default_rng(0)
    n, d = 400, 8
    direction = rng.normal(size=d)
    x = rng.normal(size=(n, d)) + 1.5 * direction / np.linalg.norm(direction)  # better side along `direction`
    flipped = np.zeros(n, bool)
    flipped[rng.choice(n, 40, replace=False)] = True
    x[flipped] *= -1  # a flip swaps chosen and rejected: antisymmetric features change sign
    out = cross_validated_p_correct(x, folds=5)
    p = out["p_correct"]
    assert p[flipped].mean() < 0.35 < 0.65 < p[~flipped].mean()
    from sklearn.metrics import roc_auc_score

    assert roc_auc_score(flipped, 1 - p) > 0.85
    assert 0.03 < out["flip_rate"] < 0.25  # true rate 0.10
    # no signal at all: near chance, no flip-rate claim
    noise = cross_validated_p_correct(rng.normal(size=(200, d)), folds=5)
    assert noise["flip_rate"] is None and "chance" in noise["flip_rate_note"]


GOOD = ["The capital of France is Paris, which is also its largest city.", "Red is a primary colour."]
BAD = ["Purple seventeen the of banana quickly sideways Paris blorf.", "Colour I name a red primary, is?"]
PROMPTS = ["What is the capital of France?", "Name a primary colour."]


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    pytest.importorskip("torch")
    pairs = []
    for k in range(2):  # each planted flip (gibberish chosen) next to its unflipped twin
        pairs.append(Pair(2 * k, "standard", PROMPTS[k], GOOD[k], BAD[k]))
        pairs.append(Pair(2 * k + 1, "standard", PROMPTS[k], BAD[k], GOOD[k]))
    cfg = ScanConfig(device="cpu")  # default reference: the bundled SmolLM2-135M-Instruct GGUF
    logs: list[str] = []
    ctx = Context(cfg, tmp_path_factory.mktemp("cache"), logs.append,
                  params={"likely_flipped": {"use_classifier": False, "threshold": 0.5}})
    stage = FlipStage(ctx, {"likely_flipped", "dpo_overflow_risk"})
    stage.observe(pairs[:2], None)
    stage.observe(pairs[2:], None)
    return stage, stage.finalize(), ctx, logs


def test_real_reference_scores_gibberish_chosen_as_flipped(real_run) -> None:  # noqa: ANN001
    stage, res, ctx, logs = real_run
    s = np.asarray(res.scores["likely_flipped_score"])
    assert res.rows == [0, 1, 2, 3]
    assert s[1] > s[0] and s[3] > s[2]
    assert {f.row for f in res.findings if f.check == "likely_flipped"} == {1, 3}
    f = next(f for f in res.findings if f.row == 1)
    assert f.field is None and "reference per-token margin" in f.detail
    lc, lr = np.asarray(res.scores["ref_logp_chosen"]), np.asarray(res.scores["ref_logp_rejected"])
    assert np.all(lc < 0) and np.all(lr < 0)
    assert lc[0] == pytest.approx(lr[1]) and lc[1] == pytest.approx(lr[0])  # same sequences, same cache key
    assert res.stats["signals_used"] == ["reference"] and res.stats["rows_scored_reference"] == 4
    assert ctx.models["reference"]["sha256"] and any("tokens" in m for m in logs)


def test_real_reference_overflow_and_cache(real_run, tmp_path: Path) -> None:  # noqa: ANN001
    stage, res, ctx, _ = real_run
    risk = np.asarray(res.scores["dpo_overflow_risk_score"])
    assert np.all((risk >= 0) & (risk <= 1))
    assert np.all(np.isnan(res.scores["policy_logit"]))
    # rerun over the same cache: nothing computed, identical scores
    again = FlipStage(ctx, {"likely_flipped", "dpo_overflow_risk"})
    pairs = [Pair(r, "standard", PROMPTS[r // 2], *((GOOD[r // 2], BAD[r // 2]) if r % 2 == 0
                                                       else (BAD[r // 2], GOOD[r // 2]))) for r in range(4)]
    again.observe(pairs, None)
    res2 = again.finalize()
    assert res2.stats["reference_cache"]["sequences_computed"] == 0
    np.testing.assert_allclose(res2.scores["likely_flipped_score"], res.scores["likely_flipped_score"])

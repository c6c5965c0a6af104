"""Reference/policy log-probs: masking, padding, truncation and the DPO logit against a hand loop,
plus the on-disk cache. Uses tiny randomly initialised Llama models built from a config and a tiny
word-level tokenizer (pad == eos, like SmolLM2), saved to folders and loaded by path."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from support.tiny_lm import build_model, build_tokenizer  # noqa: E402

from pairaudit.config import Context, ScanConfig  # noqa: E402
from pairaudit.datatypes import Pair  # noqa: E402
from pairaudit.models.logp_kernel import make_batches  # noqa: E402
from pairaudit.models.reference import LogpScorer, pretokenized_parts  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny")
    out = {}
    for name, seed in (("ref", 0), ("policy", 1)):
        folder = root / name
        tok = build_tokenizer(folder)
        build_model(folder, seed, len(tok))
        out[name] = folder
    return out


PAIRS = [
    Pair(0, "standard", "what is the capital of france ?", "paris is the capital .", "blorf zork ."),
    Pair(1, "standard", "why is the sky blue ?", "very good question .", "the sky is not blue and the grass "
         "is not green and the cat sat on the mat and the dog ran fast"),
    Pair(2, "conversational", "who sat ?", "x", "y", [{"role": "user", "content": "who sat on the mat ?"}],
         [{"role": "assistant", "content": "the cat sat ."}], [{"role": "assistant", "content": "a dog ."}]),
    Pair(3, "standard", "", "the cat", "the dog ran"),  # empty prompt: first completion token unscored
]


def hand_logp(model, prompt: list[int], completion: list[int]) -> tuple[float, int]:
    """Explicit loop over positions of one unpadded sequence."""
    full = prompt + completion
    with torch.no_grad():
        logits = model(torch.tensor([full])).logits[0].double()
    total, n = 0.0, 0
    for t in range(len(prompt), len(full)):
        if t == 0:
            continue
        total += torch.log_softmax(logits[t - 1], -1)[full[t]].item()
        n += 1
    return total, n


def kept_by_hand(scorer: LogpScorer, pair: Pair) -> list[tuple[list[int], list[int]]]:
    """TRL rules written out: render, encode, EOS appended, prompt keeps its end, completion its start."""
    d = scorer.dtok
    p, c, r = d.render(pair)
    pid = d.tok(p, add_special_tokens=False)["input_ids"]
    out = []
    for text in (c, r):
        cid = d.tok(text, add_special_tokens=False)["input_ids"] + [d.eos_id]
        pk = pid[len(pid) - min(len(pid), d.max_prompt_length):] if d.max_prompt_length else pid
        ck = cid
        if d.max_length is not None and len(pk) + len(ck) > d.max_length:
            over = len(pk) + len(ck) - d.max_length  # keep_end: drop from the left, prompt first
            cut = min(over, len(pk))
            pk = pk[cut:]
            ck = ck[over - cut:]
        out.append((pk, ck))
    return out


@pytest.mark.parametrize("max_length,max_prompt", [(None, None), (12, 6)])
def test_logps_match_hand_loop(tiny: dict[str, Path], tmp_path: Path, max_length, max_prompt) -> None:
    scorer = LogpScorer(str(tiny["ref"]), cache_dir=tmp_path, device="cpu", precision="fp32",
                        max_length=max_length, max_prompt_length=max_prompt, batch_tokens=64)
    res = scorer.score_pairs(PAIRS)
    model = scorer.model
    assert scorer.dtok.pad_id == scorer.dtok.eos_id  # pad == eos: masks must come from lengths
    for i, pair in enumerate(PAIRS):
        (pc, cc), (pr, cr) = kept_by_hand(scorer, pair)
        assert cc[-1] == scorer.dtok.eos_id or max_length is not None
        want_c, n_c = hand_logp(model, pc, cc)
        want_r, n_r = hand_logp(model, pr, cr)
        assert res.tokens_chosen[i] == n_c and res.tokens_rejected[i] == n_r
        assert res.logp_chosen[i] == pytest.approx(want_c, abs=1e-3)
        assert res.logp_rejected[i] == pytest.approx(want_r, abs=1e-3)
    # an empty prompt leaves the first completion token without context: not scored
    (_, cc), _ = kept_by_hand(scorer, PAIRS[3])
    assert res.tokens_chosen[3] == len(cc) - 1
    # summed log-probs differ from a uniform model: the random model is really used
    assert abs(res.logp_chosen[0] - (-res.tokens_chosen[0] * math.log(len(scorer.dtok.tok)))) > 0.1


def test_cache_hit_on_rerun(tiny: dict[str, Path], tmp_path: Path) -> None:
    first = LogpScorer(str(tiny["ref"]), cache_dir=tmp_path, device="cpu", precision="fp32")
    a = first.score_pairs(PAIRS)
    assert first.n_computed == 2 * len(PAIRS) and first.n_cached == 0
    again = LogpScorer(str(tiny["ref"]), cache_dir=tmp_path, device="cpu", precision="fp32")
    b = again.score_pairs(PAIRS)
    assert again.n_computed == 0 and again.n_cached == 2 * len(PAIRS)
    assert again._model is None  # nothing computed, so the model was never loaded
    np.testing.assert_array_equal(a.logp_chosen, b.logp_chosen)
    np.testing.assert_array_equal(a.tokens_rejected, b.tokens_rejected)
    # another truncation changes the token ids, hence the keys: recomputed, not served stale
    other = LogpScorer(str(tiny["ref"]), cache_dir=tmp_path, device="cpu", precision="fp32", max_length=8)
    other.score_pairs(PAIRS[1:2])
    assert other.n_computed >= 1


def test_policy_dpo_logit_by_hand(tiny: dict[str, Path], tmp_path: Path) -> None:
    from pairaudit.stages.flips.stage import FlipStage

    beta = 0.25
    cfg = ScanConfig(tokenizer=str(tiny["ref"]), reference=str(tiny["ref"]), policy=str(tiny["policy"]),
                     beta=beta, max_length=None, max_prompt_length=None, device="cpu", precision="fp32")
    ctx = Context(cfg, tmp_path, params={"likely_flipped": {"use_embedding": False}})
    stage = FlipStage(ctx, {"likely_flipped", "dpo_overflow_risk"})
    stage.observe(PAIRS[:3], None)
    res = stage.finalize()
    ref_m = stage.ref.model
    pol_m = stage.policy.model
    for i, pair in enumerate(PAIRS[:3]):
        (pc, cc), (pr, cr) = kept_by_hand(stage.ref, pair)
        lr_c, _ = hand_logp(ref_m, pc, cc)
        lr_r, _ = hand_logp(ref_m, pr, cr)
        lp_c, _ = hand_logp(pol_m, pc, cc)
        lp_r, _ = hand_logp(pol_m, pr, cr)
        want = beta * ((lp_c - lr_c) - (lp_r - lr_r))
        assert res.scores["policy_logit"][i] == pytest.approx(want, abs=1e-3)
    z = np.asarray(res.scores["policy_logit"])
    assert np.all(np.abs(z) > 1e-3) and ctx.models["policy"]["sha256"]
    # three rows are far too few for the flip model: it says so and emits no scores
    assert res.stats["likely_flipped"]["status"] == "not_enough_rows"
    assert np.isnan(res.scores["likely_flipped_score"]).all()
    risk = np.asarray(res.scores["dpo_overflow_risk_score"])
    assert np.all((risk >= 0) & (risk <= 1))


def test_pretokenized_parts_and_batches() -> None:
    p = Pair(0, "pretokenized", None, None, None, ids={"prompt_input_ids": [5, 6], "chosen_input_ids": [7, 1],
                                                        "rejected_input_ids": [8, 9, 1]})
    assert pretokenized_parts(p) == ([5, 6], [7, 1], [8, 9, 1])
    q = Pair(0, "pretokenized", None, None, None, ids={"chosen_input_ids": [5, 6, 7, 1], "rejected_input_ids": [5, 6, 8, 1],
                                                        "chosen_labels": [-100, -100, 7, 1]})
    assert pretokenized_parts(q) == ([5, 6], [7, 1], [8, 1])
    batches = make_batches([10, 3, 7, 10, 1], batch_tokens=20, max_batch=8)
    assert sorted(i for b in batches for i in b) == [0, 1, 2, 3, 4]
    assert all(len(b) * max([10, 3, 7, 10, 1][i] for i in b) <= 20 for b in batches)


def test_reward_margins_match_single_sequences(tiny: dict[str, Path], tmp_path: Path) -> None:
    from pairaudit.models.reward import RewardScorer

    folder = tmp_path / "rm"
    tok = build_tokenizer(folder)
    torch.manual_seed(3)
    cfg = transformers.LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                   num_attention_heads=2, num_key_value_heads=1, num_labels=1, pad_token_id=1)
    transformers.LlamaForSequenceClassification(cfg).save_pretrained(str(folder))
    rs = RewardScorer(str(folder), cache_dir=tmp_path / "cache", device="cpu", precision="fp32", batch_tokens=64)
    got = rs.margins(PAIRS)
    model = rs.model
    for i, pair in enumerate(PAIRS):
        want = []
        for text in rs.render(pair):
            ids = tok(text, add_special_tokens=False)["input_ids"]
            with torch.no_grad():
                want.append(model(torch.tensor([ids])).logits[0, -1].item())
        assert got[i] == pytest.approx(want[0] - want[1], abs=1e-4)
    assert "<assistant>" in rs.render(PAIRS[0])[0]  # the reward model's chat template was applied
    again = RewardScorer(str(folder), cache_dir=tmp_path / "cache", device="cpu", precision="fp32")
    np.testing.assert_allclose(again.margins(PAIRS), got)
    assert again.n_computed == 0 and again._model is None


def test_pooled_hidden_state_is_the_completion_mean(tiny: dict[str, Path], tmp_path: Path) -> None:
    """The pooled state (reward-probe input) is the mean last-layer state over the completion tokens,
    from the same padded, batched forward that scores log-probs, and it is cached with them."""
    scorer = LogpScorer(str(tiny["ref"]), cache_dir=tmp_path, device="cpu", precision="fp32", max_length=None,
                        max_prompt_length=None)
    res = scorer.score_pairs(PAIRS)
    model = scorer.model
    for i, pair in enumerate(PAIRS):
        for (p, c), got in zip(kept_by_hand(scorer, pair), (res.hidden_chosen[i], res.hidden_rejected[i])):
            with torch.no_grad():
                h = model(torch.tensor([p + c]), output_hidden_states=True).hidden_states[-1][0]
            want = h[len(p):].mean(0).numpy()
            np.testing.assert_allclose(got.astype(np.float32), want, rtol=2e-2, atol=2e-2)
    again = LogpScorer(str(tiny["ref"]), cache_dir=tmp_path, device="cpu", precision="fp32", max_length=None,
                       max_prompt_length=None)
    res2 = again.score_pairs(PAIRS)
    assert again.n_computed == 0 and again._model is None  # all from the cache, model never loaded
    np.testing.assert_array_equal(res2.hidden_chosen, res.hidden_chosen)


def test_a_batch_out_of_device_memory_is_scored_in_smaller_batches(tiny: dict[str, Path], tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A forward that runs out of device memory (raised as CUDA raises it: no GPU here) halves the batch budget
    for the rest of the scan and scores the same values; a lone sequence that does not fit is an error."""
    want = LogpScorer(str(tiny["ref"]), cache_dir=tmp_path / "a", device="cpu", precision="fp32",
                      max_length=None, batch_tokens=4096).score_pairs(PAIRS)
    said: list[str] = []
    scorer = LogpScorer(str(tiny["ref"]), cache_dir=tmp_path / "b", device="cpu", precision="fp32",
                        max_length=None, batch_tokens=4096, log=said.append)
    seen: list[int] = []

    def small_device(decoder, room: int):  # room for ``room`` padded tokens a batch
        real = decoder.forward

        def forward(input_ids, **kw):
            seen.append(input_ids.numel())
            if input_ids.numel() > room:
                raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
            return real(input_ids=input_ids, **kw)
        monkeypatch.setattr(decoder, "forward", forward)

    small_device(scorer.model.get_decoder(), 40)
    got = scorer.score_pairs(PAIRS)
    for a, b in ((got.logp_chosen, want.logp_chosen), (got.logp_rejected, want.logp_rejected),
                 (got.tokens_chosen, want.tokens_chosen)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    assert scorer.batch_tokens <= 40 < seen[0]  # the budget the device allowed, kept for the next calls
    assert sum(x > 40 for x in seen) <= 3  # 240 padded tokens, then 120, then 60: no retry of the same size
    assert [m for m in said if "out of cpu memory; scoring continues with batches of at most 30 tokens" in m]
    lone = LogpScorer(str(tiny["ref"]), cache_dir=tmp_path / "c", device="cpu", precision="fp32", max_length=None)
    small_device(lone.model.get_decoder(), 8)
    with pytest.raises(torch.cuda.OutOfMemoryError):
        lone.score_pairs(PAIRS[1:2])  # its rejected alone is longer than 8 tokens

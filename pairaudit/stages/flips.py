"""``likely_flipped`` and ``dpo_overflow_risk``: model-based evidence about a pair's label and its
DPO logit (see docs/flips.md for the full explanation and measured quality).

Signals (each turned into P(flipped) for one row; missing signals are simply absent):
- reference: per-token mean log-prob margin ``m = mean_logp_c - mean_logp_r`` under the reference
  model (exact DPO tokens). ``p = sigmoid(-m / s)`` with ``s`` the dataset's robust scale of ``m``
  (1.4826 * MAD, floored at 0.05). Likelihood is a weak proxy for quality: it catches garbled,
  off-language or broken chosen responses, little else.
- reward (``--reward-model``): Bradley-Terry ``p = sigmoid(-(r_c - r_r))``.
- policy (``--policy``): the DPO implicit reward; ``p = sigmoid(-z)`` with the DPO logit
  ``z = beta * ((logpi_c - logref_c) - (logpi_r - logref_r))``: the trained model's own probability
  that the label is wrong.
- classifier: 1 - out-of-fold P(label right) of a logistic regression on embedding differences and
  length features (``pair_classifier``); needs the embed and flips extras, no language model.

``likely_flipped_score = sigmoid(sum_s w_s * logit(p_s) / max(sum_s w_s, 1))``: a weighted average of
the available signals in log-odds (defaults: policy 1, reward 1, classifier 1, reference 0.5), so one
confident signal does not get outvoted by a weak one at 0.5, and a weak signal alone (total weight
< 1) is shrunk toward 0.5: the reference alone reaches 0.8 only at p_ref >= 0.94.

Per row the stage keeps ~13 floats (~100 bytes) plus, for the classifier, a float16 embedding
difference (768 bytes for a 384-d embedder): about 0.9 GB per million rows.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from pairaudit.checks.base import CheckInfo, Stage
from pairaudit.errors import MissingDependency, require
from pairaudit.types import Finding, Pair, StageResult

LN_FP16_MAX = math.log(65504.0)  # 11.09: exp() of anything larger overflows float16
FP16_TINY_LOGP = math.log(2.0 ** -24)  # -16.64: smallest float16 subnormal; p below it is 0 in fp16

LIKELY_FLIPPED_INFO = CheckInfo(
    "likely_flipped",
    "evidence that the rejected response is better than the chosen one, from the signals available: the "
    "reference model's per-token log-prob margin, a reward model's margin, a DPO policy's implicit reward, and a "
    "cross-validated pair classifier on embedding differences; likely_flipped_score in [0, 1] is their weighted "
    "log-odds average, flagged at or above `threshold`",
    "flag",
    kind="global",
    extra="models",
    default_enabled=False,
    thresholds={"threshold": 0.8, "use_reference": True, "use_classifier": True, "classifier_folds": 5,
                "w_reference": 0.5, "w_reward": 1.0, "w_policy": 1.0, "w_classifier": 1.0},
    why="studies of noisy preference data find that removing suspected flips is safer than flipping them back "
        "(a wrong flip injects a new error, and weak detectors have many false positives); flag for review, "
        "drop with --drop likely_flipped, or flip with --flip likely_flipped when the evidence is strong",
)
DPO_OVERFLOW_INFO = CheckInfo(
    "dpo_overflow_risk",
    "pairs whose DPO logit (with --policy: the real one at --beta) or whose summed log-probs are extreme enough to "
    "overflow, saturate or lose the margin in fp16/bf16; without a policy only what the reference model supports: "
    "half-precision rounding of the log-prob sums, outlier margins and near-impossible tokens",
    "flag",
    kind="global",
    extra="models",
    default_enabled=False,
    thresholds={"threshold": 1.0, "logit_limit": round(LN_FP16_MAX, 3), "noise_limit": 0.5,
                "margin_mad_limit": 10.0, "token_logp_limit": -25.0},
    why="these pairs train fine with a numerically stable loss in fp32; flagging shows where half-precision "
        "training or a naive loss would break, and extreme pairs are often broken data",
)

SIGNALS = ("reference", "reward", "policy", "classifier")


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -50, 50)))


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p) - np.log1p(-p)


def half_ulp(x: np.ndarray, mantissa_bits: int) -> np.ndarray:
    """Largest rounding error of ``x`` stored with ``mantissa_bits`` explicit bits (bf16: 7, fp16: 10)."""
    x = np.abs(np.asarray(x, dtype=np.float64))
    _, e = np.frexp(x)  # x = m * 2**e, m in [0.5, 1)
    return np.where(x > 0, np.ldexp(1.0, e - 2 - mantissa_bits), 0.0)


def robust_scale(x: np.ndarray, floor: float) -> float:
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return floor
    return max(float(1.4826 * np.median(np.abs(x - np.median(x)))), floor)


def combine(probs: dict[str, np.ndarray], weights: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Weighted log-odds average of per-signal P(flipped): ``sigmoid(sum w*logit(p) / max(sum w, 1))``.

    Weights are evidence strengths: with total weight below 1 (e.g. the reference alone, weight 0.5)
    the log-odds are shrunk toward 0.5 instead of being taken at face value. Returns (score, total
    weight per row).
    """
    n = len(next(iter(probs.values()))) if probs else 0
    num, den = np.zeros(n), np.zeros(n)
    for name, p in probs.items():
        ok = np.isfinite(p)
        w = float(weights.get(name, 1.0))
        num[ok] += w * _logit(p[ok])
        den[ok] += w
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(den > 0, _sigmoid(num / np.maximum(den, 1.0)), np.nan)
    return score, den


class FlipStage(Stage):
    infos = (LIKELY_FLIPPED_INFO, DPO_OVERFLOW_INFO)
    # under --engine ray every actor applies reference_max_rows to the shards it sees
    state_attrs = ("_rows", "_cols", "_emb", "_lenf", "_emb_ok", "_n_ref", "_ref_rows", "_skipped", "_notes")

    def __init__(self, ctx, enabled):  # noqa: ANN001
        super().__init__(ctx, enabled)
        require("torch", "models", "likely_flipped / dpo_overflow_risk (reference-model scoring)")
        cfg = ctx.config
        self.p_flip = {**LIKELY_FLIPPED_INFO.thresholds, **ctx.params.get("likely_flipped", {})}
        self.p_over = {**DPO_OVERFLOW_INFO.thresholds, **ctx.params.get("dpo_overflow_risk", {})}
        self.cap = cfg.reference_max_rows
        self.beta = float(cfg.beta)
        self._rows: list[np.ndarray] = []
        self._cols: dict[str, list[np.ndarray]] = {}
        self._emb: list[np.ndarray] = []
        self._lenf: list[np.ndarray] = []
        self._emb_ok: list[np.ndarray] = []
        self._n_ref = 0
        self._ref_rows: list[int] = []
        self._skipped: dict[str, int] = {}
        self._notes: list[str] = []
        self.ref = self.policy = self.reward = self.embedder = None
        self._same_tok = False
        use_ref = bool(self.p_flip.get("use_reference", True)) or "dpo_overflow_risk" in enabled
        if use_ref or cfg.policy:
            from pairaudit.models.loading import resolve_model
            from pairaudit.models.reference import LogpScorer

            self.ref = LogpScorer(cfg.reference, cache_dir=ctx.cache_dir, device=cfg.device, precision=cfg.precision,
                                  trust_remote_code=cfg.trust_remote_code, max_length=cfg.max_length,
                                  max_prompt_length=cfg.max_prompt_length,
                                  max_completion_length=cfg.max_completion_length,
                                  truncation_mode=cfg.truncation_mode, log=ctx.log, role="reference")
            train = resolve_model(cfg.tokenizer)
            self._same_tok = (train.path, train.gguf_file) == (self.ref.spec.path, self.ref.spec.gguf_file)
            ctx.models["reference"] = self.ref.to_json()
            if cfg.policy:
                self.policy = LogpScorer(cfg.policy, cache_dir=ctx.cache_dir, device=cfg.device,
                                         precision=self.ref.precision, trust_remote_code=cfg.trust_remote_code,
                                         dpo_tokenizer=self.ref.dtok, log=ctx.log, role="policy")
                ctx.models["policy"] = self.policy.to_json()
        if cfg.reward_model and "likely_flipped" in enabled:
            from pairaudit.models.reward import RewardScorer

            self.reward = RewardScorer(cfg.reward_model, cache_dir=ctx.cache_dir, device=cfg.device,
                                       precision=cfg.precision, trust_remote_code=cfg.trust_remote_code, log=ctx.log)
            ctx.models["reward_model"] = self.reward.to_json()
        if self.p_flip.get("use_classifier", True) and "likely_flipped" in enabled:
            try:
                require("sklearn", "flips", "the likely_flipped pair classifier")
                from pairaudit.models.embedder import Embedder

                self.embedder = Embedder(cfg.embedder, device=cfg.device, precision=cfg.precision,
                                         batch_size=cfg.embed_batch_size, cache_dir=ctx.cache_dir)
            except MissingDependency as exc:
                self._notes.append(f"pair classifier skipped: {exc.what}")
                ctx.log(f"likely_flipped: pair classifier skipped ({exc.what})")

    # -- observe -------------------------------------------------------------------------------
    def _add(self, name: str, values: np.ndarray) -> None:
        self._cols.setdefault(name, []).append(np.asarray(values, dtype=np.float64))

    def observe(self, pairs: list[Pair], encoded: list[Any] | None) -> None:
        n = len(pairs)
        if n == 0:
            return
        self._rows.append(np.fromiter((p.row for p in pairs), np.int64, n))
        nan = np.full(n, np.nan)
        cols = {k: nan.copy() for k in ("ref_logp_chosen", "ref_logp_rejected", "ref_tokens_chosen",
                                        "ref_tokens_rejected", "ref_min_logp_chosen", "ref_min_logp_rejected",
                                        "policy_logp_chosen", "policy_logp_rejected", "reward_margin")}
        if self.ref is not None:
            take = n if self.cap is None else max(0, min(n, self.cap - self._n_ref))
            if take:
                sub = pairs[:take]
                enc = encoded[:take] if (encoded is not None and self._same_tok) else None
                seqs, skipped = self.ref.sequences(sub, enc, pretokenized_ok=self._same_tok)
                for reason in skipped.values():
                    key = reason.split(":")[0]
                    self._skipped[key] = self._skipped.get(key, 0) + 1
                flat = [x for pair_seqs in seqs if pair_seqs for x in pair_seqs]
                n_seq, ntok = self.ref.pending(flat)
                if n_seq or (self.policy is not None and self.policy.pending(flat)[0]):
                    self._log_estimate(take, len(flat), n_seq, ntok)
                r = self.ref.score_pairs(sub, seqs=seqs)
                cols["ref_logp_chosen"][:take], cols["ref_logp_rejected"][:take] = r.logp_chosen, r.logp_rejected
                cols["ref_tokens_chosen"][:take], cols["ref_tokens_rejected"][:take] = r.tokens_chosen, r.tokens_rejected
                cols["ref_min_logp_chosen"][:take], cols["ref_min_logp_rejected"][:take] = r.min_chosen, r.min_rejected
                if self.policy is not None:
                    pr = self.policy.score_pairs(sub, seqs=seqs)
                    cols["policy_logp_chosen"][:take], cols["policy_logp_rejected"][:take] = (pr.logp_chosen,
                                                                                              pr.logp_rejected)
                self._ref_rows.extend(p.row for p in sub)
                self._n_ref += take
        if self.reward is not None:
            cols["reward_margin"] = self.reward.margins(pairs)
        for k, v in cols.items():
            self._add(k, v)
        if self.embedder is not None:
            self._observe_classifier(pairs)

    def _observe_classifier(self, pairs: list[Pair]) -> None:
        from pairaudit.stages.pair_classifier import length_features

        ok = np.array([not p.pretokenized for p in pairs], dtype=bool)
        idx = np.nonzero(ok)[0]
        c = [pairs[i].chosen or "" for i in idx]
        r = [pairs[i].rejected or "" for i in idx]
        emb = self.embedder.encode(c + r) if len(idx) else np.empty((0, 0), np.float32)
        d = emb.shape[1] if len(idx) else 0
        diff = np.zeros((len(pairs), d), np.float16)
        lenf = np.zeros((len(pairs), 4), np.float32)
        if len(idx):
            diff[idx] = (emb[: len(idx)] - emb[len(idx):]).astype(np.float16)
            lenf[idx] = length_features(c, r)
        self._emb.append(diff)
        self._lenf.append(lenf)
        self._emb_ok.append(ok)

    def _log_estimate(self, n_pairs: int, n_seqs: int, n_new: int, n_tokens: int) -> None:
        """Log the size of the scoring work (new sequences and tokens) and its estimated time."""
        assert self.ref is not None
        if self.ref.tokens_per_s is None:
            try:  # the first estimate comes from a short timed forward; later ones from real throughput
                self.ref.measure_speed()
            except Exception:  # noqa: BLE001 - the estimate is informative only
                pass
        models = 2 if self.policy is not None else 1
        rate = self.ref.tokens_per_s
        est = f", ~{models * n_tokens / rate:.0f}s at {rate:.0f} tokens/s" if rate else ""
        self.ctx.log(f"likely_flipped: {n_pairs} pairs: {n_new} of {n_seqs} sequences to score ({n_tokens} tokens, "
                     f"{models} model(s)) on {self.ref.device}/{self.ref.precision}{est}; the rest are cached")

    # -- finalize ------------------------------------------------------------------------------
    def finalize(self) -> StageResult:
        t0 = time.perf_counter()
        res = StageResult()
        if not self._rows:
            return res
        rows = np.concatenate(self._rows)
        col = {k: np.concatenate(v) for k, v in self._cols.items()}
        n = len(rows)
        lc, lr = col["ref_logp_chosen"], col["ref_logp_rejected"]
        tc, tr = col["ref_tokens_chosen"], col["ref_tokens_rejected"]
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_c = np.where(tc > 0, lc / tc, np.nan)
            mean_r = np.where(tr > 0, lr / tr, np.nan)
        mean_margin = mean_c - mean_r
        policy_logit = self.beta * ((col["policy_logp_chosen"] - lc) - (col["policy_logp_rejected"] - lr))

        probs: dict[str, np.ndarray] = {}
        stats: dict[str, Any] = {}
        if self.ref is not None and self.p_flip.get("use_reference", True) and np.isfinite(mean_margin).any():
            s = robust_scale(mean_margin, 0.05)
            probs["reference"] = _sigmoid(-mean_margin / s)
            stats["reference_margin_scale"] = s
        if self.reward is not None:
            probs["reward"] = _sigmoid(-col["reward_margin"])
        if self.policy is not None:
            probs["policy"] = _sigmoid(-policy_logit)
        p_correct = np.full(n, np.nan)
        if self._emb:
            p_correct, cstats = self._classify()
            stats["classifier"] = cstats
            if cstats.get("folds"):
                probs["classifier"] = 1.0 - p_correct
        weights = {s: float(self.p_flip.get(f"w_{s}", 1.0)) for s in SIGNALS}
        score, den = combine(probs, weights) if probs else (np.full(n, np.nan), np.zeros(n))

        res.rows = rows.tolist()
        res.scores = {
            "ref_logp_chosen": lc, "ref_logp_rejected": lr, "ref_tokens_chosen": tc, "ref_tokens_rejected": tr,
            "ref_margin": lc - lr, "ref_mean_logp_chosen": mean_c, "ref_mean_logp_rejected": mean_r,
            "reward_margin": col["reward_margin"], "policy_logit": policy_logit,
            "classifier_p_correct": p_correct,
        }
        used = [s for s in SIGNALS if s in probs]
        if "likely_flipped" in self.enabled:
            res.scores["likely_flipped_score"] = score
            thr = float(self.p_flip["threshold"])
            for i in np.nonzero(np.nan_to_num(score, nan=-1.0) >= thr)[0]:
                parts = []
                if "reference" in probs and np.isfinite(mean_margin[i]):
                    parts.append(f"reference per-token margin {mean_margin[i]:+.2f} nats (p={probs['reference'][i]:.2f})")
                if "reward" in probs and np.isfinite(col["reward_margin"][i]):
                    parts.append(f"reward margin {col['reward_margin'][i]:+.2f} (p={probs['reward'][i]:.2f})")
                if "policy" in probs and np.isfinite(policy_logit[i]):
                    parts.append(f"policy DPO logit {policy_logit[i]:+.2f} at beta={self.beta:g} "
                                 f"(p={probs['policy'][i]:.2f})")
                if "classifier" in probs and np.isfinite(p_correct[i]):
                    parts.append(f"classifier P(label right) {p_correct[i]:.2f}")
                res.findings.append(Finding(int(rows[i]), "likely_flipped", None, float(score[i]),
                                            detail=f"likely_flipped_score {score[i]:.2f} >= {thr:g}: "
                                                   + "; ".join(parts)))
            stats["flagged_share"] = float(np.mean(np.nan_to_num(score, nan=0) >= thr))
        if "dpo_overflow_risk" in self.enabled:
            risk, details = self._overflow(col, mean_margin, policy_logit)
            res.scores["dpo_overflow_risk_score"] = risk
            thr = float(self.p_over["threshold"])
            for i in np.nonzero(np.nan_to_num(risk, nan=-1.0) >= thr)[0]:
                res.findings.append(Finding(int(rows[i]), "dpo_overflow_risk", None, float(risk[i]),
                                            detail=details(i)))
        ref_rows = self._ref_rows
        stats.update({
            "signals_used": used,
            "signal_weights": {s: weights[s] for s in used},
            "rows_seen": int(n),
            "rows_scored_reference": int(self._n_ref),
            "reference_rows": ("all rows" if self.cap is None or self._n_ref < self.cap else
                               f"the first {self._n_ref} rows reaching the stage, in input order (rows "
                               f"{min(ref_rows)}..{max(ref_rows)}; --reference-max-rows {self.cap})")
            if ref_rows else "none",
            "estimated_flip_rate": stats.get("classifier", {}).get("flip_rate"),
            "estimated_flip_rate_method": "confident learning on the out-of-fold pair classifier",
            "notes": self._notes,
            "skipped_reference": self._skipped,
        })
        for name, scorer in (("reference", self.ref), ("policy", self.policy)):
            if scorer is not None:
                stats[f"{name}_cache"] = {"sequences_cached": scorer.n_cached, "sequences_computed": scorer.n_computed,
                                          "tokens_computed": scorer.tokens_computed,
                                          "seconds": round(scorer.seconds, 2),
                                          "tokens_per_s": round(scorer.tokens_computed / scorer.seconds, 1)
                                          if scorer.seconds else None}
        if self.reward is not None:
            stats["reward_cache"] = {"cached": self.reward.n_cached, "computed": self.reward.n_computed,
                                     "seconds": round(self.reward.seconds, 2)}
        if self.embedder is not None:
            self.ctx.models.setdefault("embedder", self.embedder.to_json())
        stats["finalize_seconds"] = round(time.perf_counter() - t0, 3)
        res.stats = stats
        return res

    def _classify(self) -> tuple[np.ndarray, dict[str, Any]]:
        from pairaudit.stages.pair_classifier import cross_validated_p_correct, pair_features

        ok = np.concatenate(self._emb_ok)
        x = pair_features(np.concatenate(self._emb).astype(np.float32), np.concatenate(self._lenf))
        p = np.full(len(ok), np.nan)
        out = cross_validated_p_correct(x[ok], folds=int(self.p_flip.get("classifier_folds", 5)))
        p[ok] = out["p_correct"]
        stats = {k: v for k, v in out.items() if k != "p_correct"}
        stats["rows"] = int(ok.sum())
        return p, stats

    def _overflow(self, col: dict[str, np.ndarray], mean_margin: np.ndarray, z: np.ndarray):  # noqa: ANN202
        """Risk score in [0, 1]: the largest ratio of a measured quantity to its limit, capped at 1."""
        P = self.p_over
        lc, lr = col["ref_logp_chosen"], col["ref_logp_rejected"]
        have_policy = self.policy is not None
        if have_policy:
            pc, pr = col["policy_logp_chosen"], col["policy_logp_rejected"]
            noise = self.beta * (half_ulp(pc, 7) + half_ulp(lc, 7) + half_ulp(pr, 7) + half_ulp(lr, 7))
            r_logit = np.abs(z) / float(P["logit_limit"])
        else:  # at step 0 the policy is the reference: each side's sum is rounded twice
            noise = self.beta * 2 * (half_ulp(lc, 7) + half_ulp(lr, 7))
            r_logit = np.zeros_like(lc)
        r_noise = noise / float(P["noise_limit"])
        r_range = np.maximum(np.abs(lc), np.abs(lr)) / 65504.0
        m = mean_margin
        med = np.nanmedian(m) if np.isfinite(m).any() else 0.0
        s = robust_scale(m, 0.05)
        r_margin = np.abs(m - med) / (s * float(P["margin_mad_limit"]))
        mins = np.fmin(col["ref_min_logp_chosen"], col["ref_min_logp_rejected"])
        r_token = mins / float(P["token_logp_limit"])
        parts = {"logit": r_logit, "noise": r_noise, "range": r_range, "margin": r_margin, "token": r_token}
        stack = np.vstack(list(parts.values()))
        with np.errstate(invalid="ignore"):
            risk = np.where(np.isfinite(lc), np.minimum(np.nanmax(np.where(np.isfinite(stack), stack, 0), 0), 1.0),
                            np.nan)

        def details(i: int) -> str:
            out = []
            if parts["logit"][i] >= 1:
                out.append(f"DPO logit {z[i]:+.2f} at beta={self.beta:g}: |z| >= {P['logit_limit']:g} = ln(65504), "
                           "exp(|z|) overflows fp16 and sigmoid(z) is saturated in fp16 and bf16")
            if parts["noise"][i] >= 1:
                out.append(f"bf16 rounding of the summed log-probs ({lc[i]:.0f}, {lr[i]:.0f}) moves the DPO logit "
                           f"by up to {noise[i]:.2f} (limit {P['noise_limit']:g})")
            if parts["range"][i] >= 1:
                out.append("a summed log-prob exceeds the fp16 range (65504)")
            if parts["margin"][i] >= 1:
                out.append(f"outlier reference per-token margin {m[i]:+.2f} nats (median {med:+.2f}, "
                           f"> {P['margin_mad_limit']:g} robust SDs)")
            if parts["token"][i] >= 1:
                out.append(f"a token the reference gives log-prob {mins[i]:.1f} (< {P['token_logp_limit']:g}; p is 0 "
                           f"in fp16 below {FP16_TINY_LOGP:.1f}, so a naive log(softmax) gives -inf)")
            src = "policy" if have_policy else "reference only (no --policy)"
            return f"dpo_overflow_risk {risk[i]:.2f} [{src}]: " + "; ".join(out)

        return risk, details

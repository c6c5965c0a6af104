"""``likely_flipped`` (one cross-fitted model over every flip signal) and ``dpo_overflow_risk``.

Per row the stage collects antisymmetric features (chosen minus rejected), from what ran:
- always (cheap, on by default): the static (model2vec) embedding difference and length/shape
  differences (characters, words, lines, final punctuation);
- with the reference model (by default on CUDA; on CPU with ``--reference``): summed, per-token mean
  and minimum completion log-prob differences, the token-count difference, and the pooled last-layer
  hidden-state difference (the in-dataset reward probe);
- with ``--reward-model``: the reward margin; with ``--policy``: the DPO logit.

``model.fit_flip_model`` learns their signs and weights from the dataset itself, cross-fitted;
``stats.judge`` says what the result supports (not enough rows / at chance / a flip rate with an
interval or "unknown"). ``likely_flipped_score = 1 - p_correct``; rows are flagged at ``threshold``
only when the evidence is better than chance. See docs/flips.md for measured quality.

Memory per row: ~20 floats, a float16 static-embedding difference (512 B) and, with the reference
model, a float16 hidden-state difference (1.1 KB for SmolLM2-135M): under 2 GB per million rows.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from pairaudit.datatypes import Pair, StageResult
from pairaudit.errors import ConfigError, MissingDependency, require, require_installed
from pairaudit.stages.base import Stage
from pairaudit.stages.flips.deferred import pack, stack_hidden, unpack
from pairaudit.stages.flips.infos import LABELS, REF_COLS, wants_reference
from pairaudit.stages.flips.overflow import DPO_OVERFLOW_INFO, margin_center, overflow_risk
from pairaudit.stages.flips.verdict import LIKELY_FLIPPED_INFO, apply_flip_model, flip_result
from pairaudit.stages.near_duplicates.texts import text_hash
from pairaudit.stages.spill import Spill
from pairaudit.stages.state import Column, Columns, Count, Items, Tally


class FlipStage(Stage):
    infos = (LIKELY_FLIPPED_INFO, DPO_OVERFLOW_INFO)
    # _hid: hidden-state differences (batches scored without the model: width 0); _ref_todo: a pool worker's
    # batches of reference sequences for the main process, which scores them (absorb_state)
    state = {"_rows": Column(np.int64), "_cols": Columns(np.float64), "_emb": Column(np.float16),
             "_lenf": Column(np.float32), "_pkey": Column(np.int64), "_hid": Column(np.float16, join=stack_hidden),
             "_n_ref": Count(),
             "_ref_rows": Items(), "_skipped": Tally(), "_notes": Items(), "_ref_todo": Items()}
    local = ("_spill", "seqs_scored")  # per process: the spilled embedding differences; a progress count
    uses_models = True
    distribute = "sample"  # the Ray engine: fitted on a bounded seeded sample, applied where the rows are

    def __init__(self, ctx, enabled):
        super().__init__(ctx, enabled)
        cfg = ctx.config
        self.p_flip = self.params(LIKELY_FLIPPED_INFO)
        self.p_over = self.params(DPO_OVERFLOW_INFO)
        self.cap = cfg.reference_max_rows
        self.beta = float(cfg.beta)
        self.scoring_deferred = False  # a pool worker: prepare the reference sequences, the main process scores
        self.seqs_scored = 0  # reference sequences scored so far (progress only; not part of the state)
        self._spill = Spill()  # the embedding differences move to disk when large
        self.ref = self.policy = self.reward = self.static = None
        self._same_tok = False
        flips_on = "likely_flipped" in enabled
        if flips_on:
            require_installed("sklearn", "flips", "likely_flipped (the cross-fitted flip model)")  # imported to fit
        if cfg.policy or "dpo_overflow_risk" in enabled or (self.p_flip["use_reference"]
                                                            and wants_reference(cfg, enabled)):
            self._load_reference(cfg)
        if cfg.reward_model and flips_on:
            from pairaudit.models.reward import RewardScorer

            self.reward = RewardScorer(cfg.reward_model, cache_dir=ctx.cache_dir, device=cfg.device,
                                       precision=cfg.precision, trust_remote_code=cfg.trust_remote_code, log=ctx.log)
            ctx.models["reward_model"] = self.reward.to_json()
        given = (cfg.thresholds.get("likely_flipped") or {}).get("fit_sample_rows")  # as the user set it (the
        # plan's params hold every default)
        if given is not None and flips_on and cfg.engine != "ray":
            ctx.log(f"likely_flipped: fit_sample_rows {given} has no effect with --engine {cfg.engine}: it fits "
                    "every row (the setting is --engine ray's fitting sample)")
        if self.cap is not None and self.ref is None and flips_on:
            ctx.log(f"likely_flipped: --reference-max-rows {self.cap} has no effect: no reference model runs "
                    "(on CPU it runs with --reference default)")
        if flips_on and self.p_flip.get("use_embedding", True):
            try:
                from pairaudit.models.embedder import Embedder
                from pairaudit.models.static_embedder import StaticEmbedder

                require("model2vec", "embed", "the likely_flipped embedding features")
                self.static = StaticEmbedder.for_embedder(
                    Embedder(cfg.embedder, device="cpu", cache_dir=ctx.cache_dir), ctx.cache_dir,
                    purpose="likely_flipped", fix="pass --embedder PATH (a local folder)", log=ctx.log)
            except (MissingDependency, ConfigError) as exc:
                what = exc.what if isinstance(exc, MissingDependency) else str(exc).splitlines()[0]
                self._notes.append(f"embedding features skipped: {what}")
                ctx.log(f"likely_flipped: embedding features skipped ({what})")

    def _load_reference(self, cfg: Any) -> None:
        require("torch", "models", "likely_flipped / dpo_overflow_risk (reference-model scoring)")
        from pairaudit.models.loading import resolve_model
        from pairaudit.models.reference import LogpScorer

        ctx = self.ctx
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

    # -- observe -------------------------------------------------------------------------------
    def observe(self, pairs: list[Pair], encoded: list[Any] | None) -> None:
        n = len(pairs)
        if n == 0:
            return
        self._rows.append(np.fromiter((p.row for p in pairs), np.int64, n))
        cols = {k: np.full(n, np.nan) for k in REF_COLS}
        hid = None
        if self.ref is not None and self.scoring_deferred:
            enc = encoded if (encoded is not None and self._same_tok) else None
            self._ref_todo.append(pack(*self.ref.sequences(pairs, enc, pretokenized_ok=self._same_tok)))
        elif self.ref is not None:
            take = self._take(n)
            enc = encoded[:take] if (encoded is not None and self._same_tok) else None
            seqs, skipped = self.ref.sequences(pairs[:take], enc, pretokenized_ok=self._same_tok) if take else ([], {})
            hid = self._score_reference(self._rows[-1], seqs, skipped, cols)
        if self.reward is not None:
            cols["reward_margin"] = self.reward.margins(pairs)
        for k, v in cols.items():
            self._cols.setdefault(k, []).append(np.asarray(v, dtype=np.float64))
        if self.ref is not None and not self.scoring_deferred:
            self._hid.append(hid)
        if "likely_flipped" in self.enabled:
            self._observe_text(pairs)
        self._spill.maybe({"emb": self._emb})

    def spill_every_batch(self) -> None:
        self._spill.limit = 0

    def export_spilled(self) -> tuple[dict[str, Any], Any]:
        spill = self._spill.hand_over({"emb": self._emb})  # the spilled columns stay on disk, the files go with the state
        self._spill = Spill(self._spill.limit)
        return self.export_state(), spill

    def export_state(self) -> dict[str, Any]:
        self._spill.restore({"emb": self._emb})  # the whole column travels, not only what is still in memory
        return super().export_state()

    def absorb_state(self, part: dict[str, Any]) -> None:
        todo = part.pop("_ref_todo", [])
        if todo and self.ref is not None:  # a pool worker's batches: scored here, in row order
            cols = part["_cols"]
            part["_hid"] = [self._score_reference(rows, *unpack(packed, self._take(len(rows))),
                                                  {k: cols[k][j] for k in REF_COLS})
                            for j, (rows, packed) in enumerate(zip(part["_rows"], todo))]
        super().absorb_state(part)
        self._spill.maybe({"emb": self._emb})

    def one_process_reason(self) -> str | None:
        """Pool workers leave the reference model's scoring to the main process, but a reward model reads the
        texts, which stay in the workers."""
        return "a stage scores rows with a model that reads the texts (a reward model)" if self.reward else None

    def in_worker(self) -> None:
        """A pool worker's instance: it prepares the reference sequences; the main process scores them."""
        self.scoring_deferred = True

    def fresh_local(self) -> None:
        self._spill = Spill()

    def release(self) -> None:
        self._spill.close()

    def fit(self, model: dict[str, Any], totals: dict[str, Any] | None = None) -> StageResult:
        """Fit and score the rows held (a distributed engine's seeded sample); ``model`` receives what ``apply``
        needs to score the rows the fit did not see (docs/scale.md). ``totals`` (``sample_totals``): the
        reference-model figures of every row, reported instead of the sample's."""
        if totals:
            self._n_ref, self._ref_rows, self._skipped = totals["n_ref"], totals["ref_rows"], totals["skipped"]
        return self._finalize(model)

    @classmethod
    def sample_summary(cls, state: dict[str, Any]) -> dict[str, Any]:
        """What a distributed engine's driver needs of one shard's state: its rows and reference-model figures."""
        ref_rows = state.get("_ref_rows") or []
        return {"n": int(sum(len(r) for r in state["_rows"])), "n_ref": int(state.get("_n_ref", 0)),
                "ref_min": int(min(ref_rows)) if ref_rows else None,
                "ref_max": int(max(ref_rows)) if ref_rows else None, "skipped": dict(state.get("_skipped") or {})}

    @staticmethod
    def sample_totals(summaries: list[dict[str, Any]]) -> dict[str, Any]:
        """The shards' ``sample_summary`` figures added up, for ``fit(model, totals)``."""
        lo = [x["ref_min"] for x in summaries if x["ref_min"] is not None]
        hi = [x["ref_max"] for x in summaries if x["ref_max"] is not None]
        skipped: dict[str, int] = {}
        for x in summaries:
            for key, v in x["skipped"].items():
                skipped[key] = skipped.get(key, 0) + int(v)
        return {"n_ref": sum(int(x["n_ref"]) for x in summaries), "ref_rows": [min(lo), max(hi)] if lo else [],
                "skipped": skipped}

    def _take(self, n: int) -> int:
        """How many of the next ``n`` rows (in input order) the reference model scores (``--reference-max-rows``)."""
        return n if self.cap is None else max(0, min(n, self.cap - self._n_ref))

    def _score_reference(self, rows: np.ndarray, seqs: list[Any], skipped: dict[int, str], cols: dict
                         ) -> np.ndarray:
        """Score the first ``_take`` of a batch's pairs (``seqs``: their reference sequences, from
        ``LogpScorer.sequences``) into ``cols``; the hidden-state differences (n, d), d = 0 when none."""
        assert self.ref is not None
        n = len(rows)
        take = self._take(n)
        if not take:
            return np.full((n, 0), np.nan, np.float16)
        seqs = seqs[:take]
        for i, reason in skipped.items():
            if i < take:
                key = reason.split(":")[0]
                self._skipped[key] = self._skipped.get(key, 0) + 1
        flat = [x for pair_seqs in seqs if pair_seqs for x in pair_seqs]
        n_seq, ntok = self.ref.pending(flat)
        if n_seq or (self.policy is not None and self.policy.pending(flat)[0]):
            self._log_estimate(take, len(flat), n_seq, ntok)
        r = self.ref.score_sequence_pairs(seqs)
        cols["ref_logp_chosen"][:take], cols["ref_logp_rejected"][:take] = r.logp_chosen, r.logp_rejected
        cols["ref_tokens_chosen"][:take], cols["ref_tokens_rejected"][:take] = r.tokens_chosen, r.tokens_rejected
        cols["ref_min_logp_chosen"][:take], cols["ref_min_logp_rejected"][:take] = r.min_chosen, r.min_rejected
        if self.policy is not None:
            pr = self.policy.score_sequence_pairs(seqs)
            cols["policy_logp_chosen"][:take], cols["policy_logp_rejected"][:take] = pr.logp_chosen, pr.logp_rejected
        self._ref_rows.extend(rows[:take].tolist())
        self._n_ref += take
        self.seqs_scored += len(flat)  # the progress phase "reference model" (sequences; cached ones included)
        self.ctx.progress("reference", self.seqs_scored, None)
        if r.hidden_chosen is None:
            return np.full((n, 0), np.nan, np.float16)
        hid = np.full((n, r.hidden_chosen.shape[1]), np.nan, np.float16)
        hid[:take] = r.hidden_chosen.astype(np.float32) - r.hidden_rejected.astype(np.float32)
        return hid

    def _observe_text(self, pairs: list[Pair]) -> None:
        from pairaudit.stages.flips.features import length_features

        idx = [i for i, p in enumerate(pairs) if not p.pretokenized]
        c = [pairs[i].chosen or "" for i in idx]
        r = [pairs[i].rejected or "" for i in idx]
        lenf = np.full((len(pairs), 4), np.nan, np.float32)
        if idx:
            lenf[idx] = length_features(c, r)
        self._lenf.append(lenf)
        # the prompt's digest (a row without prompt text: its own group): the pairs of one prompt share a fold
        self._pkey.append(np.array([text_hash(p.prompt) if p.prompt is not None else -1 - p.row for p in pairs],
                                   np.int64))
        if self.static is not None:
            from pairaudit.models.batch_vectors import batch_vectors

            emb = batch_vectors(self.ctx.shared).encode(self.static, pairs, c + r) if idx else None
            diff = np.full((len(pairs), self.static.dim), np.nan, np.float16)
            if emb is not None:
                diff[idx] = (emb[: len(idx)] - emb[len(idx):]).astype(np.float16)
            self._emb.append(diff)

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
        rest = "; the rest are cached" if n_new < n_seqs else ""
        self.ctx.log(f"likely_flipped: {n_pairs:,} pairs: {n_new:,} of {n_seqs:,} sequences to score ({n_tokens:,} "
                     f"tokens, {models} model(s)) on {self.ref.device}/{self.ref.precision}{est}{rest}")

    # -- finalize ------------------------------------------------------------------------------
    def finalize(self) -> StageResult:
        try:
            return self._finalize()
        finally:
            self._spill.close()

    def _features(self) -> dict[str, Any]:
        """The collected columns and the features derived from them (both finalize and ``apply`` use them)."""
        rows = np.concatenate(self._rows)
        col = {k: np.concatenate(v) for k, v in self._cols.items()}
        lc, lr = col["ref_logp_chosen"], col["ref_logp_rejected"]
        tc, tr = col["ref_tokens_chosen"], col["ref_tokens_rejected"]
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_c = np.where(tc > 0, lc / tc, np.nan)
            mean_r = np.where(tr > 0, lr / tr, np.nan)
        mean_margin = mean_c - mean_r
        policy_logit = self.beta * ((col["policy_logp_chosen"] - lc) - (col["policy_logp_rejected"] - lr))
        scores = {"ref_logp_chosen": lc, "ref_logp_rejected": lr, "ref_tokens_chosen": tc,
                  "ref_tokens_rejected": tr, "ref_margin": lc - lr, "ref_mean_logp_chosen": mean_c,
                  "ref_mean_logp_rejected": mean_r, "reward_margin": col["reward_margin"],
                  "policy_logit": policy_logit}
        out: dict[str, Any] = {"rows": rows, "col": col, "mean_margin": mean_margin, "policy_logit": policy_logit,
                               "scores": scores}
        if "likely_flipped" in self.enabled:
            raw = {"ref_sum": lc - lr, "ref_mean": mean_margin,
                   "ref_min": col["ref_min_logp_chosen"] - col["ref_min_logp_rejected"],
                   "ref_tokens": np.log1p(tc) - np.log1p(tr), "reward": col["reward_margin"], "policy": policy_logit}
            lenf = np.concatenate(self._lenf)
            for j, name in enumerate(("chars", "words", "lines", "ends_punct")):
                raw[name] = lenf[:, j].astype(np.float64)
            out["groups"] = np.concatenate(self._pkey) if self._pkey else None
            out.update(raw=raw, emb=self._spill.column("emb", self._emb) if self._emb or self._spill.spilled else None,
                       hid=stack_hidden(self._hid) if self._hid else None)
        return out

    def _finalize(self, model: dict[str, Any] | None = None) -> StageResult:
        """Fit and score every row collected; ``model`` (a dict) receives what ``apply`` needs to score rows the
        fit did not see (a distributed engine fits on a bounded sample: docs/scale.md)."""
        t0 = time.perf_counter()
        res = StageResult()
        if not self._rows:
            return res
        f = self._features()
        rows = f["rows"]
        res.rows = rows.tolist()
        res.scores = f["scores"]
        stats: dict[str, Any] = {}
        if "likely_flipped" in self.enabled:
            flip_model = {} if model is not None else None
            findings, scores, stats["likely_flipped"] = flip_result(rows, f["raw"], f["emb"], f["hid"], self.p_flip,
                                                                    LABELS, model=flip_model, groups=f.get("groups"))
            if model is not None:
                model["flips"] = flip_model
            res.findings += findings
            res.scores.update(scores)
        if "dpo_overflow_risk" in self.enabled:
            center = margin_center(f["mean_margin"])
            if model is not None:
                model["overflow_center"] = list(center)
            self._overflow(res, f, center)
        ref_stats = self._reference_stats(len(rows))
        if "likely_flipped" in stats:
            stats["likely_flipped"]["reference"] = ref_stats
            stats["likely_flipped"]["notes"] = list(dict.fromkeys(self._notes))  # once each, from every worker
        if "dpo_overflow_risk" in self.enabled:
            stats["dpo_overflow_risk"] = {"reference": ref_stats}
        res.stats = stats
        res.timings = self._timings(time.perf_counter() - t0)
        if self.static is not None:
            self.ctx.models.setdefault("static_embedder", self.static.to_json())
        return res

    def _overflow(self, res: StageResult, f: dict[str, Any], center: tuple[float, float]) -> None:
        rows = f["rows"]
        risk, details = overflow_risk(self.p_over, f["col"], f["mean_margin"], f["policy_logit"], self.beta,
                                      self.policy is not None, center=center)
        res.scores[DPO_OVERFLOW_INFO.score_key] = risk
        thr = float(self.p_over["threshold"])
        for i in np.nonzero(np.nan_to_num(risk, nan=-1.0) >= thr)[0]:
            res.findings.append(DPO_OVERFLOW_INFO.finding(int(rows[i]), None, float(risk[i]), detail=details(i)))

    def apply(self, model: dict[str, Any]) -> StageResult:
        """Findings and scores of this instance's rows from a model fitted elsewhere (``fit(model)`` on a
        sample of the dataset): the same features, the fold models' mean weights, the sample's margin centre."""
        res = StageResult()
        if not self._rows:
            return res
        try:
            f = self._features()
            res.rows = f["rows"].tolist()
            res.scores = f["scores"]
            if "likely_flipped" in self.enabled:
                findings, scores = apply_flip_model(model.get("flips") or {}, f["rows"], f["raw"], f["emb"], f["hid"],
                                                    self.p_flip, LABELS)
                res.findings += findings
                res.scores.update(scores)
            if "dpo_overflow_risk" in self.enabled:
                self._overflow(res, f, tuple(model["overflow_center"]))
        finally:
            self._spill.close()
        return res

    def _reference_stats(self, n: int) -> dict[str, Any]:
        ref_rows = self._ref_rows
        if self.ref is None:
            why = ("not run: on CPU it joins with --reference default (by default it runs only on CUDA)"
                   if "likely_flipped" in self.enabled else "not run")
            return {"rows_scored": 0, "rows": why}
        return {"rows_scored": int(self._n_ref), "rows_seen": int(n), "skipped": self._skipped,
                "rows": "all rows" if self.cap is None or self._n_ref < self.cap else
                f"the first {self._n_ref} rows reaching the stage, in input order (rows {min(ref_rows)}..{max(ref_rows)}; "
                f"--reference-max-rows {self.cap})" if ref_rows else "none"}

    def _timings(self, finalize_s: float) -> dict[str, float]:
        out = {"flips:finalize": round(finalize_s, 3)}
        for name, scorer in (("reference", self.ref), ("policy", self.policy)):
            if scorer is not None:
                out.update({f"flips:{name}:sequences_cached": float(scorer.n_cached),
                            f"flips:{name}:sequences_computed": float(scorer.n_computed),
                            f"flips:{name}:tokens_computed": float(scorer.tokens_computed),
                            f"flips:{name}:seconds": round(scorer.seconds, 2)})
                out.update({f"flips:{name}:{k}_s": round(v, 2) for k, v in scorer.timings.items()})
        if self.reward is not None:
            out.update({"flips:reward:cached": float(self.reward.n_cached),
                        "flips:reward:computed": float(self.reward.n_computed),
                        "flips:reward:seconds": round(self.reward.seconds, 2)})
        return out


"""``near_duplicate_pair`` and near ``contradictory_pair`` from sentence embeddings; also the embedding view
of ``near_identical_pair`` (chosen-vs-rejected cosine, score column ``pair_cosine``).

Decision (``match``): two rows are near duplicates when the prompts' similarity
``max(embedding cosine, wording similarity)`` (1 for equal normalised texts) is at least ``min_prompt`` and
each response's is at least the copy threshold ``min_response``, calibrated on the dataset's own different
answers to one prompt (``calibrate``; report.json ``stats.near_duplicates.calibration``); between
``min_response_flag`` and it the finding only flags. Near contradictions use the same rule with the responses
compared crosswise. Responses that a row compares with each other never match.

Three ways to get the embeddings (``embed_mode``; docs/near_duplicates.md has the measurements):

* ``hybrid`` (default): a static model distilled from the embedder with model2vec embeds every text
  (thousands of texts/s on a CPU); its vectors, with each field's dataset mean removed, find the
  candidate pairs (a looser rule, ``candidate_min_prompt`` / ``candidate_min_response``); only the texts the
  decision reads are embedded by the sentence-transformers model, whose cosines decide: the prompts the
  candidate pairs do not share, then the responses of the pairs whose prompts may pass and of a calibration
  sample (``calibration_rows``), on whose rows the copy threshold is calibrated (``_hybrid_decision``).
* ``static`` (``--fast``): the static model decides alone (no transformer is loaded).
* ``transformer``: the sentence-transformers model embeds every text (the previous behaviour; slow on
  CPU), its cosines decide.

Memory per row while observing: hybrid/static keep three float16 static vectors (1,536 B for 256-d), the
three texts zlib-compressed (the candidates' texts are needed again at the end; ~40% of the raw text), the
sketches (3 x 257 B) and ~30 B of lengths, row number and prompt hash; transformer mode keeps three float16
transformer vectors (2,304 B) instead of the texts. Inputs of fewer than ``min_rows_static`` rows are
decided by the transformer in every mode (a field mean over a handful of rows is no baseline).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from pairaudit.config import EMBED_MODES
from pairaudit.datatypes import Pair, StageResult
from pairaudit.errors import ConfigError
from pairaudit.stages.base import Stage
from pairaudit.stages.exact import CONTRADICTION_INFO
from pairaudit.stages.near_duplicates.bytext import DIGEST_BYTES, ByText, TextTable
from pairaudit.stages.near_duplicates.calibrate import calibrated_rule, calibration_sample
from pairaudit.stages.near_duplicates.infos import (
    DEFAULT_MODE,
    NEAR_DUPLICATE_INFO,
    NO_CANDIDATES,
    NO_PROMPT_PASSED,
    NO_RESPONSE_REACHED,
    PROMPTS_PASSED,
    check_deps,
)
from pairaudit.stages.near_duplicates.lazy import FieldVectors, decision_plan
from pairaudit.stages.near_duplicates.match import SKETCH_BYTES, compared_keys, text_facts, token_sorted
from pairaudit.stages.near_duplicates.near_identical import near_identical_findings, near_identical_rows
from pairaudit.stages.near_duplicates.reasons import REASON_KEY, reason_texts, reverify
from pairaudit.stages.near_duplicates.search import center, field_mean, rowdot, sum_vectors
from pairaudit.stages.near_duplicates.texts import blob_bytes, pack, unpack
from pairaudit.stages.near_duplicates.verify import (
    find_groups,
    lowest_response_floor,
    pair_outcomes,
    prompts_pass,
    responses_reach,
    two_row_prompts,
)
from pairaudit.stages.spill import Spill
from pairaudit.stages.state import Column, Count
from pairaudit.trainer.memo import TextMemo

if TYPE_CHECKING:
    from pairaudit.config import Context
    from pairaudit.models.embedder import Embedder
    from pairaudit.models.static_embedder import StaticEmbedder
    from pairaudit.trainer.tokenizer import EncodedPair


class NearDuplicateStage(Stage):
    infos = (NEAR_DUPLICATE_INFO, CONTRADICTION_INFO)
    refines = frozenset({"contradictory_pair", "near_identical_pair"})  # only when near-duplicate search runs
    # _P/_C/_R: static vectors of prompt / chosen / rejected; _hresp (n, 2): digests of the normalised chosen /
    # rejected, _hraw of the texts as they are (_phash: the prompt's); _texts: per row, zlib of
    # "prompt\0chosen\0rejected" (not in transformer mode)
    state = {"_rows": Column(np.int64), "_P": Column(np.float16), "_C": Column(np.float16),
             "_R": Column(np.float16), "_sk": Column(np.bytes_), "_ln": Column(np.int32), "_phash": Column(np.int64),
             "_hresp": Column(np.int64), "_hraw": Column(np.int64), "_texts": Column(object), "n_skipped": Count(),
             "_t_embed": Count(float), "_n_texts": Count()}
    local = ("_embedder", "_static", "_spill", "_facts", "_packed")  # models loaded on first use, spill files, per process
    uses_models = True
    distribute = "cells"  # the Ray engine: search and verification in cell groups on the workers (cells.py)

    def __init__(self, ctx: Context, enabled: set[str]) -> None:
        super().__init__(ctx, enabled)
        mode = getattr(ctx.config, "embed_mode", "auto") or "auto"
        if mode == "auto":
            mode = DEFAULT_MODE
        if mode not in EMBED_MODES:
            raise ConfigError(f"embed_mode {mode!r} is not known", expected=" | ".join(("auto",) + EMBED_MODES))
        check_deps(mode)
        self.mode = mode
        self._embedder: Embedder | None = None
        self._static: StaticEmbedder | None = None
        self._embedded = 0  # texts the transformer embedded in finalize (progress)
        self._compared = 0  # texts the transformer compared, outside a FieldVectors store (report.json)
        self._cut = 0  # of them, texts cut at the transformer's maximum length
        self._spill = Spill()  # the per-row columns move to disk when large (stages/spill.py)
        self._facts: TextMemo[tuple[bytes, int, int, int]] = TextMemo()  # text_facts of a repeated text, once
        self._packed: TextMemo[bytes] = TextMemo()  # a repeated text compressed once (texts.pack)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from pairaudit.models.embedder import Embedder

            cfg = self.ctx.config
            self._embedder = Embedder(cfg.embedder, device=cfg.device, precision=cfg.precision,
                                      batch_size=cfg.embed_batch_size, cache_dir=self.ctx.cache_dir)
            self.ctx.log(f"embedder: {self._embedder.model_id}")
        return self._embedder

    @property
    def static(self) -> StaticEmbedder:
        if self._static is None:
            from pairaudit.models.static_embedder import StaticEmbedder

            self._static = StaticEmbedder.for_embedder(
                self.embedder, self.ctx.cache_dir, purpose=f"embed_mode {self.mode!r}",
                fix="pass --embedder PATH, or embed_mode=transformer", log=self.ctx.log)
        return self._static

    def observe(self, pairs: list[Pair], encoded: list[EncodedPair] | None) -> None:
        keep = [p for p in pairs if p.chosen is not None and p.rejected is not None]
        self.n_skipped += len(pairs) - len(keep)
        if not keep:
            return
        texts: list[str] = []
        for p in keep:
            texts += [p.prompt or "", p.chosen or "", p.rejected or ""]
        t = time.perf_counter()
        base = self._n_texts
        if self.mode == "transformer":
            V = self.embedder.encode(texts, progress=lambda d: self.ctx.progress("embed", base + d, None))
        else:
            from pairaudit.models.batch_vectors import batch_vectors

            V = batch_vectors(self.ctx.shared).encode(
                self.static, pairs, texts, progress=lambda d: self.ctx.progress("embed_static", base + d, None))
            blobs = [pack(texts[i:i + 3], self._packed) for i in range(0, len(texts), 3)]
            self._texts.append(np.array(blobs, dtype=object))
        self._n_texts += len(texts)
        V = V.astype(np.float16)
        self._t_embed += time.perf_counter() - t
        for f, parts in enumerate((self._P, self._C, self._R)):
            parts.append(V[f::3].copy())
        self._rows.append(np.fromiter((p.row for p in keep), dtype=np.int64, count=len(keep)))
        facts = [self._facts.get(t, text_facts) for t in texts]  # per text: sketch, length, digests
        self._sk.append(np.array([f[0] for f in facts], dtype=f"S{SKETCH_BYTES + 1}").reshape(-1, 3))
        self._ln.append(np.array([f[1] for f in facts], dtype=np.int32).reshape(-1, 3))
        self._hresp.append(np.array([[c[2], r[2]] for c, r in zip(facts[1::3], facts[2::3])],
                                    dtype=np.int64).reshape(-1, 2))
        self._hraw.append(np.array([[c[3], r[3]] for c, r in zip(facts[1::3], facts[2::3])],
                                   dtype=np.int64).reshape(-1, 2))
        self._phash.append(np.fromiter((f[3] for f in facts[0::3]), dtype=np.int64, count=len(keep)))
        self._spill.maybe(self._columns())

    def _columns(self) -> dict[str, list[np.ndarray]]:
        return {"rows": self._rows, "P": self._P, "C": self._C, "R": self._R, "sk": self._sk, "ln": self._ln,
                "phash": self._phash, "hresp": self._hresp, "hraw": self._hraw, "texts": self._texts}

    def spill_every_batch(self) -> None:
        self._spill.limit = 0

    def export_spilled(self) -> tuple[dict[str, Any], Any]:
        spill = self._spill.hand_over(self._columns())  # the spilled columns stay on disk, the files go with the state
        self._spill = Spill(self._spill.limit)
        return self.export_state(), spill

    def export_state(self) -> dict[str, Any]:
        self._spill.restore(self._columns())  # the whole column travels, not only what is still in memory
        return super().export_state()

    def absorb_state(self, part: dict[str, Any]) -> None:
        super().absorb_state(part)
        self._spill.maybe(self._columns())

    def _embed_transformer(self, texts: list[str], timings: dict[str, float], remaining: int | None = None
                           ) -> np.ndarray:
        """The transformer's unit vectors of ``texts`` (float16); progress counts every text of the stage
        (``remaining``: the texts of this pass still to embed, these included, when it is cut in calls)."""
        t = time.perf_counter()
        emb = self.embedder
        n0, c0, base = emb.n_encoded, emb.n_cached, self._embedded
        total = base + max(len(texts), remaining or 0)
        V = emb.encode(texts, progress=lambda d: self.ctx.progress("embed", base + d, total))
        self._embedded += len(texts)
        for key, v in (("embed_transformer_s", time.perf_counter() - t),
                       ("transformer_texts_encoded", emb.n_encoded - n0), ("transformer_texts_cached", emb.n_cached - c0)):
            timings[f"near_duplicates:{key}"] = timings.get(f"near_duplicates:{key}", 0.0) + float(v)
        return V.astype(np.float16)

    def _too_long(self, texts: list[str]) -> np.ndarray:
        """Which ``texts`` the transformer sees cut: it reads a text's first ``max_seq_length`` tokens only."""
        cap = self.embedder.max_seq_length
        if not cap or not texts:
            return np.zeros(len(texts), dtype=bool)
        return self.embedder.token_lengths(texts) >= cap

    def _transformer_vectors(self, texts_blobs: Any, idx: np.ndarray, timings: dict[str, float],
                             fields: tuple[int, ...] = (0, 1, 2)) -> tuple[Any, Any, Any]:
        """The transformer vectors of rows ``idx`` (texts from the compressed store), float16: P, C, R, each
        None when its field (0 prompt, 1 chosen, 2 rejected) is not in ``fields``."""
        texts: list[str] = []
        for i in idx.tolist():
            row = unpack(texts_blobs[i])
            texts += [row[f] for f in fields]
        V = self._embed_transformer(texts, timings)
        self._compared += len(texts)
        self._cut += int(self._too_long(texts).sum())
        m = len(fields)
        return tuple(V[fields.index(f)::m].copy() if f in fields else None for f in range(3))  # type: ignore[return-value]

    def _field_vectors(self, blobs: Any, rows: np.ndarray, timings: dict[str, float]) -> FieldVectors:
        """Transformer vectors of ``rows``' fields, embedded when planned or read (``lazy``)."""
        return FieldVectors(rows, lambda i: unpack(blobs[i]),
                            lambda texts, remaining: self._embed_transformer(texts, timings, remaining),
                            self._too_long)

    def deciding_mode(self, n: int) -> str:
        """The mode that decides ``n`` rows: below ``min_rows_static`` the transformer, in every mode."""
        if self.mode != "transformer" and n < int(self.params(NEAR_DUPLICATE_INFO)["min_rows_static"]):
            return "transformer (input below min_rows_static)"
        return self.mode

    def rules(self, mode: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The duplicate and contradiction rules' parameters when ``mode`` decides. The static model alone
        (``--fast``) has its own prompt floor, ``static_min_prompt``: a bag of token vectors moves further than
        the transformer when a short prompt's words are swapped for others of the same meaning (measured:
        scripts/bench_dedup.py, docs/near_duplicates.md); the responses' calibrated threshold still guards."""
        dup = self.params(NEAR_DUPLICATE_INFO)
        if mode == "static":
            dup = {**dup, "min_prompt": dup["static_min_prompt"]}
        return dup, {**dup, **self.params(CONTRADICTION_INFO)}

    def finalize(self) -> StageResult:
        res = StageResult()
        stats: dict[str, Any] = {"n_skipped_pretokenized": self.n_skipped}
        res.stats = {"near_duplicates": stats}
        if not self._rows and not self._spill.spilled:
            return res
        try:
            return self._finalize(res, stats)
        finally:
            self._spill.close()

    def _finalize(self, res: StageResult, stats: dict[str, Any]) -> StageResult:
        spill = self._spill
        has_texts = bool(self._texts) or "texts" in spill.spilled_columns
        rows, P, C, R, sk, ln, phash, hresp, hraw, blobs = (spill.column(k, v) for k, v in self._columns().items())
        rows = np.asarray(rows)
        hresp = np.asarray(hresp).reshape(-1, 2)
        compared = compared_keys(hresp)
        blobs = blobs if has_texts else None
        n = len(rows)
        timings = self._embed_timings()
        mode = self.deciding_mode(n)
        dup, con = self.rules(mode)
        if mode != self.mode:
            assert blobs is not None
            P, C, R = self._transformer_vectors(blobs, np.arange(n), timings)
        want_dups = "near_duplicate_pair" in self.enabled
        want_con = "contradictory_pair" in self.enabled
        texts = TextTable.of(phash, hraw, P.shape[1], sk.itemsize) if mode in ("static", "hybrid") else None
        if texts is not None:  # repeated texts: each one's values read once, then from memory (bytext.py)
            P, C, R = (texts.field(A, f) for f, A in enumerate((P, C, R)))
            sk, ln = texts.fields(sk), texts.fields(ln)
        pair_raw = rowdot(C, R, np.arange(n), np.arange(n))  # chosen-vs-rejected, this mode's model
        if mode in ("static", "hybrid"):  # centred copies
            P, C, R = (self._centred(A, k) for k, A in (("P", P), ("C", C), ("R", R)))
        every = np.arange(n)
        if mode != "hybrid":  # the deciding vectors exist for every row: calibrate on all of them
            dup, con, stats["calibration"] = calibrated_rule(dup, con, C, R, sk, ln, phash, every, every, mode)
        sums = spill.reopen(sum_vectors(P, C, R, out=spill.scratch("sums", P.shape, np.float32)))  # on disk if spilled
        t = time.perf_counter()
        ts = self._sorted_words(sk)
        timings["near_duplicates:token_sort_s"] = time.perf_counter() - t
        two = two_row_prompts(phash)
        out = find_groups(rows, P, C, R, sk, ln, dup, con, want_dups=want_dups, want_contradictions=want_con,
                          candidates_only=mode == "hybrid", timings=timings, compared=(hresp, compared), sums=sums,
                          prompt_keys=phash, ts=ts, two_rows=two, reasons=want_dups)
        del sums
        if mode == "hybrid":
            cand = out["candidate_rows"]
            stats["hybrid_candidate_rows"] = int(len(cand))
        if mode == "hybrid" and not len(cand):  # nothing to decide: the static space's calibration, for the report
            _, _, stats["calibration"] = calibrated_rule(dup, con, C, R, sk, ln, phash, every, every,
                                                         NO_CANDIDATES)
        near_rows = near_identical_rows(self.ctx, pair_raw, mode) if mode == "hybrid" else np.empty(0, np.int64)
        store = None
        if mode == "hybrid" and not len(cand) and len(near_rows):
            store = self._field_vectors(blobs, near_rows, timings)
            store.plan(np.repeat((np.arange(3) > 0)[:, None], len(near_rows), axis=1))  # their chosen and rejected
        elif mode == "hybrid":
            cols = {"rows": rows, "C": C, "R": R, "sk": sk, "ln": ln, "phash": phash, "hresp": hresp,
                    "compared": compared, "ts": ts, "two": two}
            store, dup, con = self._hybrid_decision(out, stats, cols, blobs, (dup, con), near_rows, timings)
        res.findings = out["findings"]
        stats["mode"] = mode
        res.findings += near_identical_findings(self.ctx, rows, pair_raw, mode,
                                                lambda idx: store.view(idx), blobs)  # type: ignore[union-attr]
        self._transformer_report(stats, store, timings)
        res.findings.sort(key=lambda f: (f.row, f.check))
        res.rows = rows.tolist()
        res.scores = self.score_columns(pair_raw, out[NEAR_DUPLICATE_INFO.score_key],
                                        out["near"] if want_dups else None, rows)
        self._record_models(mode)
        stats.update(out["stats"])
        stats.update(_shape_stats(phash, P, sk, blobs, n))
        res.timings = timings
        return res

    def _centred(self, A: Any, name: str) -> Any:
        """Unit rows of ``A`` minus its field mean: per distinct text for a ``ByText``, else on disk when the
        stage spilled."""
        if isinstance(A, ByText):
            return ByText(center(A.table, field_mean(A)), A.ids)
        return self._spill.reopen(center(A, field_mean(A), out=self._spill.scratch(f"{name}_centred", A.shape,
                                                                                   np.float16)))

    def _sorted_words(self, sk: Any) -> Any:
        """The sketches with their words sorted (``match.token_sorted``), once a distinct text or once a row."""
        if isinstance(sk, ByText):
            return ByText(token_sorted(sk.table), sk.ids)
        return self._spill.reopen(token_sorted(sk, out=self._spill.scratch("ts", sk.shape, sk.dtype)))

    def _hybrid_decision(self, out: dict[str, Any], stats: dict[str, Any], cols: dict[str, Any], blobs: Any,
                         rules: tuple[dict[str, Any], dict[str, Any]], near_rows: np.ndarray,
                         timings: dict[str, float]) -> tuple[FieldVectors, dict[str, Any], dict[str, Any]]:
        """Hybrid mode's second look at the candidate pairs (``out["a"]``, ``out["b"]``), the transformer's in two
        planned passes: first the prompts the pairs do not share (and the near_identical_pair proposals'
        responses); the deciding rule reads the responses only of the pairs whose prompts may pass
        (``verify.prompts_pass``), so then the responses of their rows and of the calibration sample, and the copy
        threshold is calibrated on those rows. When no pair's prompts pass, nothing reads the threshold: no
        response is embedded and the report gives the static space's calibration. ``out`` gets the findings, the
        stats and the deciding rule's outcome of the nearest pairs; returns the vectors and the rules used."""
        rows, C, R, sk, ln, phash = (cols[k] for k in ("rows", "C", "R", "sk", "ln", "phash"))
        dup, con = rules
        want_dups, want_con = "near_duplicate_pair" in self.enabled, "contradictory_pair" in self.enabled
        a, b, n = out["a"], out["b"], len(rows)
        sample = calibration_sample(phash, int(dup["calibration_rows"]))
        idx = np.union1d(out["candidate_rows"], sample)
        store = self._field_vectors(blobs, np.union1d(idx, near_rows), timings)
        store.plan(decision_plan(store, a, b, sk, ln, near_rows))  # the prompts, the proposals' responses
        Pt, Ct, Rt = store.view(idx)
        pos = np.full(n, -1, dtype=np.int64)
        pos[idx] = np.arange(len(idx))
        kw = {"compared": (cols["hresp"][idx], cols["compared"]), "ts": cols["ts"][idx], "two_rows": cols["two"][idx]}
        sk_i, ln_i = sk[idx], ln[idx]
        live = prompts_pass(Pt, sk_i, ln_i, pos[a], pos[b], dup, con, want_con, kw["ts"])
        timings["near_duplicates:pairs_prompts_passed"] = float(live.sum())  # run-specific: Ray counts per group
        reach = np.zeros(0, dtype=bool)
        if live.any():  # their rows' responses, then the sample's only where a response may reach the floors
            lrows = np.unique(np.concatenate([a[live], b[live]]))
            store.plan(decision_plan(store, a[live], b[live], sk, ln, lrows))
            reach = responses_reach(Ct, Rt, sk_i, ln_i, pos[a[live]], pos[b[live]],
                                    lowest_response_floor(dup, con, want_con), want_con, kw["ts"])
        timings["near_duplicates:pairs_responses_reached"] = float(reach.sum())
        if reach.any():
            cal = np.union1d(lrows, sample)
            store.plan(decision_plan(store, a[live], b[live], sk, ln, cal))  # the sample's responses
            dup, con, stats["calibration"] = calibrated_rule(dup, con, Ct, Rt, sk, ln, phash, cal, pos,
                                                             PROMPTS_PASSED)
        else:  # nothing reads the copy threshold: the static space's calibration, for the report
            every = np.arange(n)
            dup, con, stats["calibration"] = calibrated_rule(dup, con, C, R, sk, ln, phash, every, every,
                                                             NO_RESPONSE_REACHED if live.any() else NO_PROMPT_PASSED)
        out2 = find_groups(rows[idx], Pt, Ct, Rt, sk_i, ln_i, dup, con, want_dups=want_dups,
                           want_contradictions=want_con, candidates=(pos[a], pos[b]), timings=timings,
                           prompt_keys=phash[idx], **kw)
        out["findings"] = out2["findings"]
        out["stats"].update(out2["stats"])
        if want_dups:  # the nearest pairs that passed the loose rule, as the deciding rule saw them
            reverify(out["near"], lambda x, y: pair_outcomes(Pt, Ct, Rt, sk_i, ln_i, pos[x], pos[y], dup, con,
                                                             want_dups, want_con, **kw))
        return store, dup, con

    def _embed_timings(self) -> dict[str, float]:
        """Run-specific embedding counters (timings.json)."""
        timings: dict[str, float] = {"near_duplicates:embed_s": self._t_embed}
        if self.mode == "transformer":
            timings["near_duplicates:transformer_texts_encoded"] = float(self.embedder.n_encoded)
            timings["near_duplicates:transformer_texts_cached"] = float(self.embedder.n_cached)
        return timings

    def score_columns(self, pair_raw: np.ndarray, nearest: np.ndarray, near: dict[str, np.ndarray] | None,
                      rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """The stage's scores.parquet columns for its rows (both engines): ``pair_cosine``, the nearest
        neighbour's search cosine and, with ``near`` (each row's nearest pair and its outcome), the reason column.
        ``rows``: the row numbers of positions (the local engine; the Ray engine's ``near`` carries ``prow``)."""
        scores = {"pair_cosine": pair_raw.astype(np.float64), NEAR_DUPLICATE_INFO.score_key: nearest}
        if near is not None:
            prow = near["prow"] if rows is None else np.where(near["partner"] >= 0, rows[near["partner"]], -1)
            scores[REASON_KEY] = reason_texts(near, nearest, float(self.params(NEAR_DUPLICATE_INFO)["min_response_flag"]),
                                              prow)
        return scores

    def _transformer_report(self, stats: dict[str, Any], store: FieldVectors | None, timings: dict[str, float]
                            ) -> None:
        """What the transformer compared (report.json: the cap is per text, the model's own) and how the
        planned pass went (run-specific counters)."""
        compared_texts = self._compared + (store.n_read if store is not None else 0)
        cut = self._cut + (store.n_read_cut if store is not None else 0)
        if compared_texts:
            transformer_report(stats, compared_texts, cut, self.embedder.max_seq_length, self.ctx.log)
        if store is not None:  # fields embedded in the planned pass, and read beyond it
            timings["near_duplicates:transformer_fields_planned"] = float(store.n_planned)
            timings["near_duplicates:transformer_fields_unplanned"] = float(store.n_unplanned)

    def take_transformer_counts(self) -> dict[str, int]:
        """Texts the transformer compared since the last call, of them those cut, and its maximum length (None
        when it compared none): the Ray engine's shards report theirs (``cells.shard_report``); counted from zero
        again."""
        out = {"texts": self._compared, "texts_cut": self._cut,
               "max_tokens": self.embedder.max_seq_length if self._compared else None}
        self._compared = self._cut = 0
        return out

    def _record_models(self, mode: str) -> None:
        """report.json's models; static mode never loads the transformer (nor torch): only its identity, as the
        static model's source."""
        emb = self.embedder
        self.ctx.models["embedder"] = emb.to_json() if mode != "static" else {"id": emb.model_id, "sha256": emb.sha256}
        if self._static is not None:
            self.ctx.models["static_embedder"] = self._static.to_json()


def transformer_report(stats: dict[str, Any], texts: int, cut: int, cap: int | None, log: Any) -> None:
    """report.json's ``stats.near_duplicates.transformer`` and the log line about texts over the transformer's
    maximum length (both engines).

    Args:
        stats: the stage's stats (``transformer`` is set).
        texts: texts the transformer compared (> 0; embedded now or read from the embedding cache).
        cut: of them, texts longer than ``cap`` tokens (it read their first ``cap`` tokens).
        cap: the transformer's maximum length in tokens.
        log: the scan's log.
    """
    stats["transformer"] = {"texts": texts, "max_tokens": cap, "texts_cut": cut}
    if cut:
        log(f"near duplicates: {cut:,} of {texts:,} texts the transformer compared are longer than its {cap} "
            f"tokens: their vectors are of their first {cap} tokens (report.json stats.near_duplicates.transformer)")


def _shape_stats(phash: np.ndarray, P: np.ndarray, sk: np.ndarray, blobs: Any, n: int) -> dict[str, int]:
    """How the rows share prompts, and the bytes a row's observed state takes."""
    _, counts = np.unique(phash, return_counts=True)
    return dict(
        distinct_prompts=int(len(counts)),
        prompts_with_several_pairs=int((counts > 1).sum()),
        pairs_sharing_a_prompt=int(counts[counts > 1].sum()),
        max_pairs_per_prompt=int(counts.max()),
        dim=int(P.shape[1]),
        bytes_per_row_observed=int(P.itemsize * (P.shape[1] * 3) + sk.itemsize * 3 + 3 * 4 + DIGEST_BYTES
                                   + (blob_bytes(blobs) // n if blobs is not None else 0)),
    )

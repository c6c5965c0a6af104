"""One streaming batch: records -> canonical pairs -> tokens -> per-pair checks.

``BatchProcessor`` is engine-neutral: the local engine calls it in-process, the Ray engine inside
actors. It never imports ray and keeps no state across batches besides the tokenizer and format.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pairaudit.checks import registry
from pairaudit.checks.base import PairCheck
from pairaudit.checks.encoding import strip_surrogates
from pairaudit.checks.malformed import INFO as MALFORMED
from pairaudit.config import ScanConfig, default_cache_dir
from pairaudit.datatypes import Finding, Pair
from pairaudit.hashing import pair_hash, side_digests
from pairaudit.io.formats import Malformed, detect_format, normalise, parse_columns, row_format
from pairaudit.io.readers import Record
from pairaudit.models.tokenizer import load_tokenizer
from pairaudit.plan import CheckPlan, build_plan
from pairaudit.trainer import profiles
from pairaudit.trainer.tokenizer import DPOTokenizer, EncodedPair

MAX_ERROR_EXAMPLES = 5
#: rows per progress report within a batch (``process(records, on_rows=...)``)
PROGRESS_ROWS = 250


@dataclass
class BatchResult:
    findings: list[Finding]
    metrics: list[dict[str, Any]]  # one dict per record: "row" + per-row metrics
    pairs: list[Pair]  # pairs that survived the per-pair drops (for whole-dataset stages)
    encoded: list[EncodedPair | None]
    n_records: int
    check_errors: dict[str, list[str]] = field(default_factory=dict)
    error_counts: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    formats: dict[str, int] = field(default_factory=dict)  # rows normalised per format

    @classmethod
    def merge(cls, parts: list[BatchResult]) -> BatchResult:
        """One result from consecutive parts of a batch (in row order)."""
        if len(parts) == 1:
            return parts[0]
        out = cls([], [], [], [], 0)
        errors: dict[str, list[str]] = defaultdict(list)
        counts: dict[str, int] = defaultdict(int)
        timings: dict[str, float] = defaultdict(float)
        for p in parts:
            out.findings.extend(p.findings)
            out.metrics.extend(p.metrics)
            out.pairs.extend(p.pairs)
            out.encoded.extend(p.encoded)
            out.n_records += p.n_records
            for k, v in p.check_errors.items():
                errors[k] = (errors[k] + v)[:MAX_ERROR_EXAMPLES]
            for k, n in p.error_counts.items():
                counts[k] += n
            for k, t in p.timings.items():
                timings[k] += t
        out.check_errors, out.error_counts, out.timings = dict(errors), dict(counts), dict(timings)
        return out


class BatchProcessor:
    """Build one with :meth:`for_config`: each part not given is derived from the scan config."""

    def __init__(self, cfg: ScanConfig, plan: CheckPlan, columns: dict[str, str], fmt: str | None,
                 cache_dir: Path, trainer: profiles.TrainerSettings | None = None) -> None:
        self.cfg, self.plan, self.columns, self.fmt, self.cache_dir = cfg, plan, columns, fmt, cache_dir
        self.forced = cfg.format is not None  # a forced format applies to every row
        self.trainer = trainer or profiles.resolve(cfg)
        self.tok: DPOTokenizer | None = None
        self.checks: list[PairCheck] = [cls(plan.params[cls.info.name], None) for cls in registry.PAIR_CHECKS
                                        if cls.info.name in plan.enabled]
        for chk in self.checks:
            chk.enabled = frozenset(plan.enabled)

    @classmethod
    def for_config(cls, cfg: ScanConfig, *, plan: CheckPlan | None = None, columns: dict[str, str] | None = None,
                   fmt: str | None = None, cache_dir: Path | None = None,
                   trainer: profiles.TrainerSettings | None = None) -> BatchProcessor:
        """The processor of a scan with config ``cfg``. Not given: ``plan`` = ``build_plan(cfg)``, ``columns`` =
        ``cfg.columns`` parsed, ``fmt`` = ``cfg.format`` (None: detected from the first record), ``cache_dir``
        = the default cache, ``trainer`` = the trainer settings ``cfg`` resolves to."""
        return cls(cfg, plan if plan is not None else build_plan(cfg),
                   columns if columns is not None else parse_columns(cfg.columns),
                   fmt if fmt is not None else cfg.format, Path(cache_dir) if cache_dir is not None
                   else default_cache_dir(), trainer)

    def load_tokenizer(self) -> DPOTokenizer:
        if self.tok is None:
            cfg = self.cfg
            tok, spec = load_tokenizer(cfg.tokenizer, self.cache_dir, trust_remote_code=cfg.trust_remote_code)
            self.tok = DPOTokenizer(tok, spec, trainer=self.trainer)
            for chk in self.checks:
                chk.tok = self.tok
        return self.tok

    def to_pairs(self, records: list[Record], out: list[Finding],
                 formats: dict[str, int] | None = None) -> list[Pair]:
        pairs = []
        for rec in records:
            if rec.error is not None or rec.data is None:
                out.append(MALFORMED.finding(rec.row, rec.field, None, detail=rec.error or "no data"))
                continue
            if self.fmt is None:
                self.fmt = detect_format(rec.data, self.columns)
                if self.fmt is None:
                    out.append(MALFORMED.finding(rec.row, None, None,
                                       detail=f"no preference fields: found keys {sorted(rec.data)[:8]}; expected "
                                              "chosen/rejected (+prompt) or chosen_input_ids; fix: --columns"))
                    continue
            fmt = self.fmt if self.forced else row_format(rec.data, self.fmt, self.columns)
            if formats is not None:
                formats[fmt] = formats.get(fmt, 0) + 1
            try:
                pairs.append(strip_surrogates(normalise(rec.row, rec.data, fmt, self.columns)))
            except Malformed as exc:
                out.append(MALFORMED.finding(rec.row, exc.field, None, detail=str(exc)))
        return pairs

    def encode(self, pairs: list[Pair], out: list[Finding]) -> tuple[list[Pair], list[EncodedPair | None]]:
        if not pairs:
            return [], []
        tok = self.load_tokenizer()
        ok: list[Pair] = []
        rendered = []
        for p in pairs:
            if p.pretokenized:
                ok.append(p)
                continue
            try:
                rendered.append(tok.render(p))
                ok.append(p)
            except Exception as exc:  # noqa: BLE001 - chat templates raise anything
                out.append(MALFORMED.finding(p.row, None, None,
                                   detail=f"the trainer's preprocessing (chat template / prompt "
                                          f"split) fails on this row: {type(exc).__name__}: {exc}"))
        enc_text = iter(tok.encode_rendered(rendered)) if rendered else iter(())
        return ok, [None if p.pretokenized else next(enc_text) for p in ok]

    @staticmethod
    def metrics(pair: Pair, enc: EncodedPair | None) -> dict[str, Any]:
        m: dict[str, Any] = {"row": pair.row, "pair_hash": pair_hash(side_digests(pair))}
        if enc is not None:  # content tokens: without the EOS the trainer appends
            lp, lc, lr = enc.content_lengths()
        elif pair.ids is not None:
            lp = len(pair.ids.get("prompt_input_ids") or [])
            lc, lr = len(pair.ids["chosen_input_ids"]), len(pair.ids["rejected_input_ids"])
        else:
            return m
        m.update(prompt_tokens=lp, chosen_tokens=lc, rejected_tokens=lr, length_ratio=lc / lr if lr else None)
        return m

    def process(self, records: list[Record], on_rows: Callable[[int], None] | None = None) -> BatchResult:
        """Normalise, tokenize and check one batch. With ``on_rows``, the batch is processed in parts
        of ``PROGRESS_ROWS`` records and ``on_rows(records done so far)`` is called after each part, so
        progress moves within a batch; the result is the same."""
        if on_rows is None or len(records) <= PROGRESS_ROWS:
            res = self._process(records)
            if on_rows is not None:
                on_rows(len(records))
            return res
        parts = []
        for start in range(0, len(records), PROGRESS_ROWS):
            parts.append(self._process(records[start:start + PROGRESS_ROWS]))
            on_rows(min(start + PROGRESS_ROWS, len(records)))
        return BatchResult.merge(parts)

    def _process(self, records: list[Record]) -> BatchResult:
        timings: dict[str, float] = defaultdict(float)
        t = time.perf_counter()
        found: list[Finding] = []
        formats: dict[str, int] = {}
        pairs = self.to_pairs(records, found, formats)
        if pairs and self.tok is None:
            t_load = time.perf_counter()
            self.load_tokenizer()
            timings["load_tokenizer"] += time.perf_counter() - t_load
        t1 = time.perf_counter()
        timings["read_normalise"] += t1 - t - timings["load_tokenizer"]
        pairs, encoded = self.encode(pairs, found)
        t2 = time.perf_counter()
        timings["tokenize"] += t2 - t1
        metrics = []
        errors: dict[str, list[str]] = defaultdict(list)
        counts: dict[str, int] = defaultdict(int)
        for pair, enc in zip(pairs, encoded):
            m = self.metrics(pair, enc)
            for chk in self.checks:
                try:
                    extra = chk.check(pair, enc, found)
                except Exception as exc:  # noqa: BLE001 - a bug on one row must not kill the run
                    name = chk.info.name
                    counts[name] += 1
                    if len(errors[name]) < MAX_ERROR_EXAMPLES:
                        errors[name].append(f"row {pair.row}: {type(exc).__name__}: {exc}")
                    continue
                if extra:
                    m.update(extra)
            metrics.append(m)
        for f in found:
            self.plan.settle(f)
        metrics.extend({"row": f.row} for f in found if f.check == "malformed_record")
        dropped = {f.row for f in found if f.action == "drop"}
        keep = [k for k, p in enumerate(pairs) if p.row not in dropped]
        timings["pair_checks"] += time.perf_counter() - t2
        return BatchResult(found, metrics, [pairs[k] for k in keep], [encoded[k] for k in keep], len(records),
                           dict(errors), dict(counts), dict(timings), formats)

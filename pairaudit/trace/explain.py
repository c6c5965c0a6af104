"""Explain the rows of a failing window: findings, token lengths after truncation, the real DPO logit.

- findings: ``findings.parquet`` of a ``pairaudit scan`` of the same source (every check), or, when only
  the source is known (the recording callback at training time), the per-pair checks run on those rows;
- token lengths: TRL 1.x's prompt / completion token counts and what survives truncation to ``max_length``
  (:mod:`pairaudit.trace.rows`);
- DPO logit: with a checkpoint from before the failure as policy and the run's starting model as
  reference, ``beta * ((logpi_c - logref_c) - (logpi_r - logref_r))`` from
  ``pairaudit.models.reference.LogpScorer`` / ``dpo_logits`` (computed in fp32), with the fp16 / bf16 limits
  marked: ``|z| >= ln(65504) = 11.09`` overflows ``exp`` in fp16 and saturates the sigmoid in fp16 and bf16;
  a summed log-prob beyond 65504 leaves the fp16 range; bf16 keeps 8 significant bits, so a summed log-prob
  of -1000 is rounded by up to 2 nats.

:func:`rank_rows` orders rows by evidence: a non-finite model output recorded during training or a
non-finite log-prob / logit now (4), a logit or summed log-prob beyond the fp16 range (3), a logit that
bf16 rounding moves by 0.5 or more to within reach of that limit (2), a finding whose action is ``drop``
and whose check is more common in these rows than in the whole run (1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pairaudit.output_files import FINDINGS

LN_FP16_MAX = math.log(65504.0)  # 11.09
FP16_MAX = 65504.0
BF16_REL = 2.0 ** -8  # relative rounding step of bf16 (8 significant bits)
TEXT_LIMIT = 400


def read_records(data: str | Path, rows: list[int]) -> dict[int, Any]:
    """``Record`` objects of the given source rows (streams the source, stops after the last one)."""
    from pairaudit.io.readers import open_source

    wanted = set(rows)
    out = {}
    if not wanted:
        return out
    last = max(wanted)
    for batch in open_source(data).batches(2000):
        for rec in batch:
            if rec.row in wanted:
                out[rec.row] = rec
        if batch and batch[-1].row >= last:
            break
    return out


def excerpt(value: Any, limit: int = TEXT_LIMIT) -> str:
    if isinstance(value, list):
        value = "\n".join(f"{m.get('role', '?')}: {m.get('content', '')}" if isinstance(m, dict) else str(m)
                          for m in value)
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more characters]"


def audit_findings(audit: str | Path, rows: list[int]) -> dict[int, list[dict[str, Any]]]:
    import polars as pl

    path = Path(audit) / FINDINGS
    out: dict[int, list[dict[str, Any]]] = {r: [] for r in rows}
    if not path.exists():
        return out
    df = pl.read_parquet(path, glob=False).filter(pl.col("row").is_in(sorted(rows))).sort(["row", "check", "field"])
    for rec in df.iter_rows(named=True):
        out[int(rec["row"])].append({k: rec[k] for k in ("check", "action", "field", "score", "detail", "group")
                                     if rec.get(k) is not None})
    return out


def pair_check_findings(records: dict[int, Any], *, tokenizer: str | None, max_length: int | None,
                        truncation_mode: str = "keep_start") -> dict[int, list[dict[str, Any]]]:
    """pairaudit's per-pair checks on just these records (no whole-dataset stage: no duplicates etc.)."""
    from pairaudit.batch import BatchProcessor
    from pairaudit.config import ScanConfig

    cfg = ScanConfig(tokenizer=tokenizer, max_length=max_length, max_prompt_length=None,
                     truncation_mode=truncation_mode)
    proc = BatchProcessor.for_config(cfg)
    res = proc.process([records[r] for r in sorted(records)])
    out: dict[int, list[dict[str, Any]]] = {r: [] for r in records}
    for f in sorted(res.findings, key=lambda f: (f.row, f.check, f.field or "")):
        item = {"check": f.check, "action": f.action, "field": f.field, "score": f.score, "detail": f.detail}
        out.setdefault(f.row, []).append({k: v for k, v in item.items() if v is not None})
    return out


def describe_rows(rows: list[int], *, data: str | Path | None, audit: str | Path | None,
                  max_length: int | None = None, tokenizer: str | None = None) -> dict[str, Any]:
    """Findings and text of ``rows`` (used by the recording callback when training goes non-finite)."""
    out: dict[str, Any] = {}
    records = read_records(data, rows) if data is not None else {}
    if audit is not None:
        found, how = audit_findings(audit, rows), f"findings.parquet of {audit}"
    elif records:
        found = pair_check_findings(records, tokenizer=tokenizer, max_length=max_length)
        how = "pairaudit's per-pair checks on these rows only (run `pairaudit trace` for whole-dataset checks)"
    else:
        found, how = {}, "no findings: pass data= or audit= to the callback"
    out["findings_from"] = how
    out["rows"] = {str(r): {"findings": found.get(r, []),
                            "text": {k: excerpt(records[r].data.get(k)) for k in ("prompt", "chosen", "rejected")
                                     if records.get(r) is not None and records[r].data is not None
                                     and k in records[r].data}}
                   for r in rows}
    return out


def dpo_scores(pairs: dict[int, Any], *, policy: str, reference: str | None, beta: float, tokenizer: str | None,
               max_length: int | None, truncation_mode: str, device: str = "auto", precision: str = "fp32",
               cache_dir: Path | None = None, log: Callable[[str], None] | None = None) -> dict[int, dict[str, Any]]:
    """Policy (and reference) summed log-probs and the DPO logit of each pair, with fp16/bf16 limits marked."""
    from pairaudit.models.tokenizer import load_tokenizer
    from pairaudit.trainer.tokenizer import DPOTokenizer

    rows = sorted(pairs)
    if not rows:
        return {}
    tok, spec = load_tokenizer(tokenizer or policy, cache_dir)
    dtok = DPOTokenizer(tok, spec, max_length=max_length, max_prompt_length=None, max_completion_length=None,
                        truncation_mode=truncation_mode)
    plist = [pairs[r] for r in rows]
    with np.errstate(invalid="ignore"):  # NaN log-probs are a result here, not an accident
        return _score(rows, plist, dtok, policy=policy, reference=reference, beta=beta, device=device,
                      precision=precision, cache_dir=cache_dir, log=log)


def _score(rows: list[int], plist: list[Any], dtok: Any, *, policy: str, reference: str | None, beta: float,
           device: str, precision: str, cache_dir: Path | None, log: Callable[[str], None] | None
           ) -> dict[int, dict[str, Any]]:
    from pairaudit.models.reference import LogpScorer, PairLogps, dpo_logits

    pol = LogpScorer(policy, cache_dir=cache_dir, device=device, precision=precision, dpo_tokenizer=dtok,
                     log=log, role="policy").score_pairs(plist)
    ref: PairLogps | None = None
    if reference is not None:
        ref = LogpScorer(reference, cache_dir=cache_dir, device=device, precision=precision, dpo_tokenizer=dtok,
                         log=log, role="reference").score_pairs(plist)
    z = dpo_logits(beta, pol, ref) if ref is not None else np.full(len(rows), np.nan)
    out = {}
    for i, r in enumerate(rows):
        d: dict[str, Any] = {"policy_logp_chosen": _f(pol.logp_chosen[i]), "policy_logp_rejected": _f(pol.logp_rejected[i]),
                             "tokens_chosen": _f(pol.tokens_chosen[i]), "tokens_rejected": _f(pol.tokens_rejected[i]),
                             "policy_min_token_logp": _f(min(pol.min_chosen[i], pol.min_rejected[i]))}
        if i in pol.skipped:
            d["skipped"] = pol.skipped[i]
        sums = [pol.logp_chosen[i], pol.logp_rejected[i]]
        if ref is not None:
            d.update(ref_logp_chosen=_f(ref.logp_chosen[i]), ref_logp_rejected=_f(ref.logp_rejected[i]),
                     logit=_f(z[i]), loss=_f(_softplus(-z[i])))
            sums += [ref.logp_chosen[i], ref.logp_rejected[i]]
        d["limits"] = limits(z[i] if ref is not None else None, sums, beta, scored=i not in pol.skipped)
        out[r] = d
    return out


def _softplus(x: float) -> float:
    if not math.isfinite(x):
        return x if x > 0 or math.isnan(x) else 0.0
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def _f(x: Any) -> float | str | None:
    if x is None:
        return None
    x = float(x)
    return round(x, 6) if math.isfinite(x) else str(x)


def limits(z: float | None, sums: list[float], beta: float, *, scored: bool = True) -> list[str]:
    """The fp16 / bf16 limits this pair's numbers reach."""
    out = []
    if not scored:
        return out
    if any(not math.isfinite(float(s)) for s in sums) or (z is not None and not math.isfinite(float(z))):
        out.append("non-finite: a summed log-prob or the DPO logit is NaN/inf in fp32 already")
        return out
    if z is not None and abs(z) >= LN_FP16_MAX:
        out.append(f"|logit| {abs(z):.2f} >= ln(65504) = {LN_FP16_MAX:.2f}: exp overflows fp16, the sigmoid saturates "
                   "in fp16 and bf16")
    if any(abs(float(s)) > FP16_MAX for s in sums):
        out.append("a summed log-prob is beyond the fp16 range (65504)")
    if z is not None and abs(z) < LN_FP16_MAX:
        noise = beta * BF16_REL * sum(abs(float(s)) for s in sums) / 2
        if noise >= 0.5 and abs(z) + noise >= LN_FP16_MAX:  # only near the limit does the rounding matter
            out.append(f"bf16 rounding of the summed log-probs moves the logit by up to {noise:.2f}, to within reach "
                       f"of ln(65504) = {LN_FP16_MAX:.2f} (|logit| {abs(z):.2f})")
    return out


def finding_rates(audit: str | Path, trainer_rows: Any) -> dict[str, Any]:
    """Per check: how many of the trainer's rows carry a finding of it (``{"of": n, "checks": {check: rows}}``)."""
    import polars as pl

    rows_ = np.unique(np.asarray(trainer_rows, dtype=np.int64))
    path = Path(audit) / FINDINGS
    out: dict[str, Any] = {"of": int(len(rows_)), "checks": {}}
    if not path.exists() or not len(rows_):
        return out
    df = pl.read_parquet(path, columns=["row", "check"], glob=False).filter(pl.col("row").is_in(rows_.tolist()))
    counts = df.unique().group_by("check").len().sort("check")
    out["checks"] = {str(c): int(n) for c, n in counts.iter_rows()}
    return out


def _share(n: int, of: int) -> str:
    return f"{n} of {of} ({100.0 * n / of:.1f}%)" if of else f"{n} of 0"


def rank_rows(info: dict[int, dict[str, Any]], run_rates: dict[str, Any] | None = None
              ) -> list[tuple[int, int, list[str]]]:
    """(row, evidence level 0-4, reasons), strongest first (ties: larger |logit| first, then row).

    A finding counts as evidence only when its check is more common among these rows than among all the
    trainer's rows (``run_rates`` from :func:`finding_rates`; the reason says both shares); without
    ``run_rates`` every drop finding counts."""
    n = len(info)
    here: dict[str, int] = {}
    for d in info.values():
        for c in {f["check"] for f in d.get("findings") or []}:
            here[c] = here.get(c, 0) + 1
    separating: dict[str, str] = {}
    for c, k in here.items():
        if run_rates is None:
            separating[c] = ""
            continue
        total, of = int((run_rates.get("checks") or {}).get(c, 0)), int(run_rates.get("of") or 0)
        if of and k / n > total / of:
            separating[c] = f"{_share(k, n)} of these rows vs {_share(total, of)} of the run's rows"
    ranked = []
    for row, d in info.items():
        level, reasons = 0, []
        for ev in d.get("recorded") or []:
            level = 4
            reasons.append(f"non-finite model output for this row during training at step {ev['step']}"
                           + (f" ({ev['side']})" if ev.get("side") else ""))
        dpo = d.get("dpo") or {}
        for lim in dpo.get("limits") or []:
            lv = 4 if lim.startswith("non-finite") else 2 if lim.startswith("bf16") else 3
            level = max(level, lv)
            reasons.append(lim)
        drops = sorted({f["check"] for f in d.get("findings") or [] if f.get("action") == "drop"} & set(separating))
        if drops:
            level = max(level, 1)
            reasons.append("drop findings: " + "; ".join(f"{c} ({separating[c]})" if separating[c] else c
                                                         for c in drops))
        logit = dpo.get("logit")
        mag = abs(logit) if isinstance(logit, (int, float)) else (math.inf if logit is not None else -1.0)
        ranked.append((row, level, reasons, mag))
    ranked.sort(key=lambda t: (-t[1], -t[3], t[0]))
    return [(r, lv, rs) for r, lv, rs, _ in ranked]

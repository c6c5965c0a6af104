"""Remedies for the rows the trainer changes (``too_long``, ``dropped_by_trainer``): the ``max_length`` that
keeps 95% / 99% of the rows whole and the truncation mode that keeps the response, from the scan's own token
counts (``report.json`` ``remedies``, the terminal summary, report.html).

The lengths are those the checks measured, as the trainer tokenizes: ``too_long_score`` is (prompt + the
longer response) / max_length and ``dropped_by_trainer_score`` the prompt / max_length, so with the scan's
max_length they give back each row's token counts (``prompt_tokens`` + the longer of ``chosen_tokens`` /
``rejected_tokens`` where those checks did not run).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

TRAINER_CHECKS = ("too_long", "dropped_by_trainer")


#: checks of implicit-prompt data whose rows TRL's extract_prompt changes; --explicit-prompt avoids it
SPLIT_CHECKS = ("prefix_pair", "split_word")


def trainer_remedies(scores: Path, rows: dict[str, int], trainer: dict[str, Any],
                     explicit_prompt: bool | None = None) -> dict[str, Any]:
    """Per trainer check with rows: what would avoid it. ``rows``: rows per check (report.json ``checks``);
    ``trainer``: report.json ``assumptions.trainer`` (max_length, truncation_mode); ``explicit_prompt``: False
    when the data has implicit prompts and the cleaned output was written without a prompt column (None:
    explicit prompts, nothing to say)."""
    out = _split_remedies(rows) if explicit_prompt is False else {}
    limit, mode = trainer.get("max_length"), trainer.get("truncation_mode")
    if not limit or not any(rows.get(c) for c in TRAINER_CHECKS) or not scores.exists():
        return out
    lengths = _lengths(scores, int(limit))
    if lengths is None or not lengths.height:
        return out
    return {**{name: _remedy(name, lengths, int(limit), mode, rows[name]) for name in TRAINER_CHECKS
               if rows.get(name)}, **out}


def _split_remedies(rows: dict[str, int]) -> dict[str, Any]:
    text = ("pairaudit scan --explicit-prompt writes a prompt column (the dialogue up to the last assistant turn) "
            "into the cleaned output, so TRL's extract_prompt no longer moves response text into the prompt")
    return {name: {"rows": rows[name], "explicit_prompt": True, "text": text} for name in SPLIT_CHECKS
            if rows.get(name)}


def _lengths(scores: Path, limit: int) -> Any:
    """(total, prompt) tokens per row as the trainer counts them; None without token counts."""
    import polars as pl

    lf = pl.scan_parquet(scores, glob=False)
    have = set(lf.collect_schema().names())
    if "too_long_score" in have:
        total = (pl.col("too_long_score") * limit).round(0)
    elif {"prompt_tokens", "chosen_tokens", "rejected_tokens"} <= have:
        total = pl.col("prompt_tokens") + pl.max_horizontal("chosen_tokens", "rejected_tokens")
    else:
        return None
    if "dropped_by_trainer_score" in have:
        prompt = (pl.col("dropped_by_trainer_score") * limit).round(0)
    elif "prompt_tokens" in have:
        prompt = pl.col("prompt_tokens")
    else:
        return None
    df = lf.select(total.cast(pl.Int64).alias("total"), prompt.cast(pl.Int64).alias("prompt")).drop_nulls()
    return df.filter(pl.col("total") > 0).collect()


def _remedy(name: str, lengths: Any, limit: int, mode: str | None, rows: int) -> dict[str, Any]:
    import polars as pl

    total = lengths["total"]
    p95, p99 = (_keeps(total, q) for q in (0.95, 0.99))
    response = lengths["total"] - lengths["prompt"]
    if name == "too_long":
        affected = lengths.filter((pl.col("total") > limit) & (pl.col("prompt") < limit))
    else:
        affected = lengths.filter(pl.col("prompt") >= limit)
    keep_end = int((affected["total"] - affected["prompt"] <= limit).sum())
    out = {"rows": rows, "max_length": limit, "truncation_mode": mode, "max_length_95": p95, "max_length_99": p99,
           "longest": int(total.max()), "keep_end_keeps_response": keep_end if mode == "keep_start" else None,
           "longest_response": int(response.max())}
    if name == "dropped_by_trainer" and affected.height:  # a row is dropped while its prompt alone reaches max_length
        longest_prompt = int(affected["prompt"].max())
        out.update(max_length_keeps_all=longest_prompt + 1,
                   still_dropped_at_95=int((affected["prompt"] >= p95).sum()))
    out["text"] = _text(name, out)
    return out


def _keeps(total: Any, share: float) -> int:
    """The smallest max_length with which at least ``share`` of the rows are whole: the ceil(share * n)-th
    shortest row (a quantile would take the longest of 20 rows for 95%)."""
    ordered = total.sort()
    return int(ordered[max(1, math.ceil(share * len(ordered))) - 1])


def _text(name: str, r: dict[str, Any]) -> str:
    whole = (f"max_length {r['max_length_95']:,} keeps 95% of rows whole ({r['max_length_99']:,}: 99%; "
             f"now {r['max_length']:,})")
    if name == "too_long":
        text = f"{whole}"
        if r["keep_end_keeps_response"] is not None:
            text += (f"; truncation_mode keep_end keeps the whole response of {r['keep_end_keeps_response']:,} of "
                     f"the rows over max_length (it cuts the prompt's start instead of the response's end)")
        return text
    text = (f"truncation_mode keep_end keeps these rows (it cuts the prompt's start; "
            f"{r['keep_end_keeps_response'] or 0:,} keep their whole response)")
    if "max_length_keeps_all" in r:
        text += (f"; or max_length {r['max_length_keeps_all']:,} (their longest prompt + 1) keeps them all; "
                 f"{whole}, but {r['still_dropped_at_95']:,} of these rows' prompts alone reach "
                 f"{r['max_length_95']:,}: still dropped there")
    return text

"""Run one per-pair check directly on tiny inline records, as the scanner would hand them over: the real
format detection and normaliser (``io.formats``), lone surrogates replaced, the real tokenizer's encoding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import CHEAP, write_jsonl

from pairaudit.checks.base import PairCheck
from pairaudit.checks.encoding import strip_surrogates
from pairaudit.datatypes import Finding, Pair
from pairaudit.io.formats import detect_format, normalise
from pairaudit.trainer.tokenizer import DPOTokenizer


def to_pair(record: dict[str, Any], row: int = 0, fmt: str | None = None) -> Pair:
    """``record`` read as the scanner reads it (format detected unless given)."""
    fmt = fmt or detect_format(record)
    assert fmt is not None, f"no preference format in {record}"
    return strip_surrogates(normalise(row, record, fmt))


def check_pairs(chk: PairCheck, pairs: list[Pair]) -> tuple[list[Finding], list[dict[str, float] | None]]:
    """(findings, per-row metrics) of one check instance over ``pairs`` (text pairs encoded by its tokenizer)."""
    out: list[Finding] = []
    metrics = []
    for p in pairs:
        enc = chk.tok.encode_pairs([p])[0] if chk.tok is not None and not p.pretokenized else None
        metrics.append(chk.check(p, enc, out))
    return out, metrics


def run(check: type[PairCheck], records: list[dict[str, Any]], tok: DPOTokenizer | None = None,
        **params: Any) -> tuple[list[Finding], list[dict[str, float] | None]]:
    """(findings, per-row metrics) of ``check`` with ``params`` over the default thresholds."""
    return check_pairs(check(params, tok), [to_pair(r, i) for i, r in enumerate(records)])


def found(check: type[PairCheck], record: dict[str, Any], tok: DPOTokenizer | None = None,
          **params: Any) -> list[tuple[str | None, str]]:
    """(field, detail) of every finding on one record; every finding carries the check's name."""
    out, _ = run(check, [record], tok, **params)
    assert all(f.check == check.info.name and f.row == 0 for f in out), out
    return [(f.field, f.detail) for f in out]


def scan_cheap(tmp_path: Path, records: list[Any], **kw: Any) -> Any:
    """``pairaudit.scan`` of ``records`` with every cheap per-pair and exact check (no model, no embedding)."""
    import pairaudit

    src = write_jsonl(tmp_path / "pairs.jsonl", records)
    only = [c for c in CHEAP if c != "length_outlier"]
    return pairaudit.scan(src, out=tmp_path / "out", only=only, log=lambda m: None, **kw)

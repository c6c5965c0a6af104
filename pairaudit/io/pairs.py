"""Read canonical pairs back from the source a scan recorded in ``OUT/report.json`` (reports, review)."""

from __future__ import annotations

import json
from pathlib import Path

from pairaudit.config import ScanConfig
from pairaudit.datatypes import Pair
from pairaudit.errors import PairauditError
from pairaudit.io.formats import Malformed, normalise, row_format
from pairaudit.io.readers import open_source
from pairaudit.output_files import REPORT_JSON


def source_pairs(out_dir: str | Path, rows: list[int]) -> dict[int, Pair]:
    """Canonical pairs of the given rows, read back from the source named in ``OUT/report.json`` (rows it cannot
    read are missing: :func:`pairaudit.outputs.reader.load_pairs` falls back to the cleaned / dropped output)."""
    out = Path(out_dir)
    report = json.loads((out / REPORT_JSON).read_text(encoding="utf-8"))
    cfg = ScanConfig(**report["config"])
    src = report["source"]
    source = open_source(src["path"], split=src.get("split") or cfg.split, subset=cfg.subset)
    wanted = set(rows)
    fmt, columns = src.get("format"), src.get("columns") or {}
    found: dict[int, Pair] = {}
    for rec in source.records_at(wanted, cfg.batch_size):
        if rec.data is not None and fmt:
            try:
                own = fmt if cfg.format else row_format(rec.data, fmt, columns)
                found[rec.row] = normalise(rec.row, rec.data, own, columns)
            except (Malformed, PairauditError):
                pass
    return found

"""The trainer's dataset as the user built it: the source, or a scan's clean output (``audit.clean`` / the
``clean.*`` file), with the trainer's own row filters applied, in **source** row numbers.

``--data`` is the source of an ``--audit`` folder (its ``report.json`` names it) or that folder's clean output
(``AUDIT/clean.jsonl``: its rows are mapped back through ``scores.parquet``, where ``kept`` says which source
rows it holds, in order; ``audit.clean`` carries the same rows in ``__pairaudit_row__``). A ``clean.*`` file beside
a ``report.json`` is recognised without ``--audit``. The candidates a run may have trained on:

- ``--data`` is the source, no audit: the source;
- ``--data`` is the source of the audit: the source, and the audit's clean output (``audit.clean``);
- ``--data`` is the audit's clean output: the clean output.

Each candidate is the source rows the trainer keeps (:func:`pairaudit.trace.rows.trainer_rows`: TRL's filter as
the scan's trainer profile applies it), in trainer index order. :mod:`pairaudit.trace.verify` then says which
candidate the run's logs fit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pairaudit.errors import InputError
from pairaudit.output_files import REPORT_JSON, SCORES
from pairaudit.trace import rows
from pairaudit.trace.settings import TraceSettings

SOURCE, CLEAN = "source", "clean"


@dataclass
class DataInput:
    """What ``--data`` is: the source itself or an audit's clean output, and where the source lives."""

    given: str  # --data as passed
    source: str  # the file whose row numbers are reported
    audit: Path | None  # the scan output folder of ``source`` (findings, kept rows), when known
    is_clean: bool  # --data is the audit's clean output

    def to_json(self) -> dict[str, Any]:
        return {"data": self.given, "source": self.source, "audit": str(self.audit) if self.audit else None,
                "data_is_clean_output": self.is_clean}


@dataclass
class Candidate:
    """One dataset the run may have trained on: the source row of each trainer dataset index."""

    name: str  # source | clean
    rows: np.ndarray
    what: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "rows": int(len(self.rows)), "what": self.what}


def _report(audit: Path) -> dict[str, Any]:
    try:
        rep = json.loads((audit / REPORT_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"--audit {audit}: report.json is not readable ({exc})",
                         fix="run `pairaudit scan` into it first") from exc
    return rep if isinstance(rep, dict) else {}


def _same(a: str | Path, b: str | Path) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def _is_clean_output(data: str, audit: Path) -> bool:
    p = Path(data)
    return p.name.split(".")[0] == "clean" and _same(p.parent, audit)


def resolve_input(data: str, audit: Path | None) -> DataInput:
    """What ``--data`` is (see the module docstring); a clean output is recognised by its folder."""
    if audit is None and Path(data).name.split(".")[0] == "clean" and (Path(data).parent / REPORT_JSON).exists():
        audit = Path(data).parent
    if audit is None:
        return DataInput(data, data, None, False)
    if not (audit / REPORT_JSON).exists():
        raise InputError(f"--audit {audit} holds no report.json", fix="run `pairaudit scan` into it first")
    src = str((_report(audit).get("source") or {}).get("path") or "")
    if _is_clean_output(data, audit):
        if not src or not Path(src).exists():
            raise InputError(f"--data {data} is the clean output of {audit}, whose source {src or '(unknown)'} is "
                             "gone: rows cannot be reported in source numbers",
                             fix="pass --data SOURCE (the file the scan read) with --audit")
        return DataInput(data, src, audit, True)
    if src and Path(src).exists() and not _same(src, data):  # (a relative path from another folder: trusted)
        raise InputError(f"--audit {audit} is a scan of {src}, not of --data {data}",
                         expected="--data the scanned source, or the audit's clean output",
                         fix=f"pass --data {src}, or --audit a scan of {data}")
    return DataInput(data, data, audit, False)


def kept_rows(audit: Path) -> np.ndarray:
    """Source rows of the audit's clean output, in order (``scores.parquet``'s ``kept``)."""
    import polars as pl

    s = pl.read_parquet(audit / SCORES, columns=["row", "kept"], glob=False)
    return s.filter(pl.col("kept")).sort("row")["row"].to_numpy().astype(np.int64)


def candidates(inp: DataInput, s: TraceSettings, lengths: rows.TokenLengths | None) -> list[Candidate]:
    """The datasets the run may have trained on, the likeliest first (the data as given)."""
    all_rows = rows.trainer_rows(inp.source, s, lengths=lengths)
    filt = "TRL's row filter" if s.trainer == "trl-dpo" else "every record"
    out = []
    if not inp.is_clean:
        out.append(Candidate(SOURCE, all_rows, f"{inp.source}, {filt}"))
    if inp.audit is not None:
        kept = kept_rows(inp.audit)
        rows_ = all_rows[np.isin(all_rows, kept)]
        out.append(Candidate(CLEAN, rows_, f"the clean output of {inp.audit} (audit.clean / clean file: "
                                           f"{len(kept)} rows), {filt}; rows in source numbers"))
    return out

"""Read a pairaudit output folder (docs/contract.md) for the HTML report, ``pairaudit show`` and the
notebook review helper.

The output folder does not hold the text of flagged-but-kept rows in a row-addressable form, so
example texts come from :func:`load_pairs`: the source recorded in report.json
(``pairaudit.io.pairs.source_pairs``), else ``clean.jsonl`` / ``dropped.jsonl``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pairaudit.datatypes import Pair
from pairaudit.errors import InputError, PairauditError
from pairaudit.io.base import lossy_pylist
from pairaudit.output_files import FINDINGS, FINDINGS_COLUMNS, REPORT_JSON, SCORES

if TYPE_CHECKING:
    import polars as pl

def _findings_schema() -> dict[str, Any]:
    import polars as pl

    kinds = {"int64": pl.Int64, "string": pl.Utf8, "float64": pl.Float64}
    return {name: kinds[kind] for name, kind in FINDINGS_COLUMNS}


def empty_findings() -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame(schema=_findings_schema())


@dataclass
class OutputFolder:
    """The parts of an output folder the report and the review helper read."""

    path: Path
    report: dict[str, Any]
    findings: pl.DataFrame
    scores: pl.DataFrame | None

    @classmethod
    def open(cls, out_dir: str | Path, lazy: bool = False) -> OutputFolder:
        """``lazy``: read report.json only (findings empty, no scores; ``report.view.ReportFolder`` reads the
        parquet files in bounded pieces)."""
        import polars as pl

        path = Path(out_dir)
        report_path, findings_path = path / REPORT_JSON, path / FINDINGS
        if not path.is_dir() or not (report_path.exists() or findings_path.exists()):
            raise InputError(
                f"{path} is not a pairaudit output folder (no report.json or findings.parquet found)",
                expected="the folder written by `pairaudit scan SOURCE --out DIR`",
                fix="run `pairaudit scan` first, or pass the folder given to --out",
            )
        report: dict[str, Any] = {}
        if report_path.exists():
            from pairaudit.schema import read_report_json

            report = read_report_json(report_path)
        findings = empty_findings()
        if lazy:
            return cls(path=path, report=report, findings=findings, scores=None)
        if findings_path.exists():
            findings = pl.read_parquet(findings_path, glob=False)
            for name, dtype in _findings_schema().items():
                if name not in findings.columns:
                    findings = findings.with_columns(pl.lit(None, dtype=dtype).alias(name))
            findings = findings.select(
                [pl.col(n).cast(t, strict=False) for n, t in _findings_schema().items()]
            )
        scores_path = path / SCORES
        scores = pl.read_parquet(scores_path, glob=False) if scores_path.exists() else None
        return cls(path=path, report=report, findings=findings, scores=scores)

    # ------------------------------------------------------------------ simple accessors
    @property
    def totals(self) -> dict[str, Any]:
        return dict(self.report.get("totals") or {})

    @property
    def checks(self) -> dict[str, dict[str, Any]]:
        """Checks from report.json, plus any check that only appears in findings.parquet."""
        checks = {k: dict(v or {}) for k, v in (self.report.get("checks") or {}).items()}
        for name in sorted(set(self.findings["check"].drop_nulls().to_list())):
            checks.setdefault(name, {"status": "ran", "description": "", "reason": ""})
        return checks

    def all_rows(self) -> list[int]:
        if self.scores is not None and "row" in self.scores.columns:
            return sorted(int(r) for r in self.scores["row"].drop_nulls().to_list())
        n = self.totals.get("input")
        if isinstance(n, int):
            return list(range(n))
        return sorted(set(self.findings["row"].drop_nulls().to_list()))

    def has_row(self, row: int) -> bool:
        if self.scores is not None and "row" in self.scores.columns:
            import polars as pl

            return self.scores.filter(pl.col("row") == row).height > 0
        n = self.totals.get("input")
        if isinstance(n, int):
            return 0 <= row < n
        return True

    def row_findings(self, row: int) -> list[dict[str, Any]]:
        """Findings of one row, by check and field (an index built once per folder: reports look up
        thousands of rows)."""
        index = self.__dict__.get("_findings_by_row")
        if index is None:
            index = {}
            for f in self.findings.sort(["row", "check", "field"], nulls_last=True).iter_rows(named=True):
                index.setdefault(f["row"], []).append(f)
            self.__dict__["_findings_by_row"] = index
        return [dict(f) for f in index.get(row, [])]

    def row_scores(self, row: int) -> dict[str, Any]:
        """Non-null metrics of one row from scores.parquet (without ``row``)."""
        if self.scores is None or "row" not in self.scores.columns:
            return {}
        index = self.__dict__.get("_score_index")
        if index is None:
            index = {int(r): i for i, r in enumerate(self.scores["row"].to_list()) if r is not None}
            self.__dict__["_score_index"] = index
        if row not in index:
            return {}
        out = {}
        for k, v in self.scores.row(index[row], named=True).items():
            if k == "row" or v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            out[k] = v
        return out

    def pair_hash(self, row: int) -> str | None:
        value = self.row_scores(row).get("pair_hash")
        return None if value is None else str(value)

    def pairs(self, rows: Iterable[int]) -> dict[int, Pair]:
        return load_pairs(self.path, sorted(set(int(r) for r in rows)))


# ---------------------------------------------------------------------------------- pair loading
def load_pairs(out_dir: str | Path, rows: list[int]) -> dict[int, Pair]:
    """Pairs for ``rows``; rows whose text cannot be found are missing from the result.

    Reads the source recorded in report.json (any format, ``pairaudit.io.pairs.source_pairs``); rows it
    cannot return (malformed records, a source that moved since the scan, an in-memory source) are
    looked up in the clean / dropped outputs of the folder.
    """
    if not rows:
        return {}
    from pairaudit.io.pairs import source_pairs

    out = Path(out_dir)
    try:
        report = json.loads((out / REPORT_JSON).read_text(encoding="utf-8"))
        in_memory = (report.get("source") or {}).get("path") is None
    except (OSError, json.JSONDecodeError):
        in_memory = False
    try:
        found = {} if in_memory else dict(source_pairs(out, list(rows)))
    except (PairauditError, OSError, ValueError, KeyError, TypeError):
        found = {}  # e.g. the source was moved or deleted after the scan
    missing = [r for r in rows if r not in found]
    if missing:
        for r, pair in _fallback_load_pairs(out, missing).items():
            found.setdefault(r, pair)
    return found


def _messages_text(messages: list[Any]) -> str:
    parts = []
    for m in messages:
        if isinstance(m, dict):
            parts.append(f"{m.get('role', m.get('from', '?'))}: {m.get('content', m.get('value', ''))}")
        else:
            parts.append(str(m))
    return "\n\n".join(parts)


_HH_ASSISTANT = "\n\nAssistant:"


def record_to_pair(row: int, record: Any) -> Pair:
    """Best-effort canonical pair from a standard, conversational or HH-implicit record."""
    if not isinstance(record, dict):
        return Pair(row=row, format="malformed", prompt=None, chosen=None, rejected=None,
                    notes={"raw": json.dumps(record, ensure_ascii=False)[:2000]})
    prompt, chosen, rejected = record.get("prompt"), record.get("chosen"), record.get("rejected")
    if isinstance(chosen, list) and isinstance(rejected, list):
        if prompt is None and chosen and rejected:
            pm = chosen[:-1]
            pair = Pair(row=row, format="implicit_conversational", prompt=_messages_text(pm),
                        chosen=_messages_text(chosen[-1:]), rejected=_messages_text(rejected[-1:]))
            pair.prompt_messages, pair.chosen_messages, pair.rejected_messages = pm, chosen[-1:], rejected[-1:]
            return pair
        ptext = _messages_text(prompt) if isinstance(prompt, list) else (prompt if isinstance(prompt, str) else None)
        return Pair(row=row, format="conversational", prompt=ptext, chosen=_messages_text(chosen),
                    rejected=_messages_text(rejected))
    if isinstance(chosen, str) and isinstance(rejected, str):
        if prompt is None:
            ic, ir = chosen.rfind(_HH_ASSISTANT), rejected.rfind(_HH_ASSISTANT)
            if ic >= 0 and ir >= 0:
                cut_c, cut_r = ic + len(_HH_ASSISTANT), ir + len(_HH_ASSISTANT)
                return Pair(row=row, format="hh_implicit", prompt=chosen[:cut_c], chosen=chosen[cut_c:],
                            rejected=rejected[cut_r:])
            return Pair(row=row, format="implicit", prompt="", chosen=chosen, rejected=rejected)
        return Pair(row=row, format="standard", prompt=prompt if isinstance(prompt, str) else None,
                    chosen=chosen, rejected=rejected)
    if "chosen_input_ids" in record or "rejected_input_ids" in record:
        ids = {k: list(v) for k, v in record.items() if k.endswith(("_input_ids", "_attention_mask", "_labels"))
               and isinstance(v, list)}
        return Pair(row=row, format="pretokenized", prompt=None, chosen=None, rejected=None, ids=ids)
    return Pair(row=row, format="malformed", prompt=None, chosen=None, rejected=None,
                notes={"raw": json.dumps(record, ensure_ascii=False, default=str)[:2000]})


def _fallback_load_pairs(out_dir: Path, rows: list[int]) -> dict[int, Pair]:
    """Lookup in the output folder's own clean and dropped outputs (the source is gone, unreadable, or
    was an in-memory object): JSONL, Parquet or save_to_disk folders, several splits included. The
    kept rows come from scores.parquet's ``kept`` column (older folders: every row not dropped)."""
    wanted = set(rows)
    found: dict[int, Pair] = {}
    to_pair = _pair_maker(out_dir)
    dropped_rows: set[int] = set()
    for obj in _records(out_dir, "dropped"):
        if not isinstance(obj, dict) or "row" not in obj:
            continue
        r = int(obj["row"])
        dropped_rows.add(r)
        if r in wanted:
            if obj.get("record") is not None:
                found[r] = to_pair(r, obj["record"])
            else:
                found[r] = Pair(row=r, format="malformed", prompt=None, chosen=None, rejected=None,
                                notes={"raw": str(obj.get("raw", ""))[:2000]})
    if wanted - set(found):
        kept = _kept_rows(out_dir, dropped_rows)
        last = max(wanted)
        for r, rec in zip(kept, _records(out_dir, "clean")):
            if r in wanted and r not in found:
                found[r] = to_pair(r, rec) if not isinstance(rec, str) else _parse_line(r, rec)
            if r >= last:
                break
    return found


def _kept_rows(out_dir: Path, dropped_rows: set[int]) -> list[int]:
    scores = out_dir / SCORES
    if scores.exists():
        import polars as pl

        lf = pl.scan_parquet(scores, glob=False)
        if "kept" in lf.collect_schema().names():
            return lf.filter(pl.col("kept")).select("row").sort("row").collect()["row"].to_list()
    folder = OutputFolder.open(out_dir)
    return [r for r in folder.all_rows() if r not in dropped_rows]


def _records(out_dir: Path, name: str) -> Iterator[Any]:
    """Records of ``clean`` / ``dropped`` in file order (a JSONL line that is not JSON: its text)."""
    jsonl = out_dir / f"{name}.jsonl"
    if jsonl.exists():
        with open(jsonl, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.strip():
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError:
                        yield line
        return
    parquet = out_dir / f"{name}.parquet"
    if parquet.exists():
        import pyarrow.parquet as pq

        for rb in pq.ParquetFile(parquet).iter_batches(batch_size=1000):
            yield from lossy_pylist(rb)  # a record dropped for its invalid UTF-8: shown with U+FFFD
        return
    folder = out_dir / name
    if (folder / "dataset_info.json").exists() or (folder / "dataset_dict.json").exists():
        import datasets

        obj = datasets.load_from_disk(str(folder))
        for ds in (obj.values() if isinstance(obj, datasets.DatasetDict) else [obj]):
            for start in range(0, len(ds), 1000):
                yield from lossy_pylist(ds.select(range(start, min(start + 1000, len(ds)))).with_format("arrow")[:])


def _pair_maker(out_dir: Path) -> Any:
    """record -> Pair with the scan's format and column mapping (report.json), else best effort."""
    from pairaudit.io.formats import Malformed, normalise

    try:
        src = json.loads((out_dir / REPORT_JSON).read_text(encoding="utf-8")).get("source") or {}
    except (OSError, json.JSONDecodeError):
        src = {}
    fmt, columns = src.get("format"), src.get("columns") or {}

    def make(row: int, record: Any) -> Pair:
        if fmt and isinstance(record, dict):
            try:
                return normalise(row, record, fmt, columns)
            except (Malformed, PairauditError, KeyError, TypeError, ValueError):
                pass
        return record_to_pair(row, record)
    return make


def _parse_line(row: int, line: str) -> Pair:
    try:
        return record_to_pair(row, json.loads(line))
    except json.JSONDecodeError:
        return Pair(row=row, format="malformed", prompt=None, chosen=None, rejected=None,
                    notes={"raw": line.rstrip("\n")[:2000]})

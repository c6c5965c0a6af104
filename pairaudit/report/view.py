"""What report.html reads of an output folder, in bounded memory whatever the number of rows (issue 18: the
report is rendered on the driver of a cluster scan).

* :class:`ScoreSummary`: two streamed passes over the score columns the report shows (pyarrow batches):
  counts, minima and maxima, histograms and integer medians / percentiles are exact; float medians are exact
  up to ``SAMPLE_ROWS`` rows and come from a seeded sample of that many rows above (the page says so);
* :class:`ReportFolder`: an :class:`~pairaudit.outputs.reader.OutputFolder` that never loads findings.parquet
  or scores.parquet whole: per-check counts and examples are lazy polars queries, the example rows' findings
  and scores are fetched for those rows only, and the table of flagged rows streams (``report.table``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from pairaudit.output_files import FINDINGS, SCORES
from pairaudit.outputs.reader import OutputFolder

SAMPLE_ROWS = 100_000
BATCH_ROWS = 65_536
INT_COLUMNS = ("prompt_tokens", "chosen_tokens", "rejected_tokens")
FLOAT_COLUMNS = ("length_ratio", "near_identical_pair_score", "pair_cosine", "ref_margin", "likely_flipped_score",
                 "dpo_overflow_risk_score")
THRESHOLDS = (("near_identical_pair_score", ">=", 0.9), ("ref_margin", "<", 0.0))


def _batches(path: Path, columns: list[str]) -> Iterable[dict[str, np.ndarray]]:
    """The columns as float64 numpy arrays (NaN for null), batch by batch."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    for rb in pf.iter_batches(batch_size=BATCH_ROWS, columns=columns):
        out = {}
        for name in columns:
            col = rb.column(name)
            try:
                col = pc.cast(col, "float64")
            except Exception:  # noqa: BLE001 - a non-numeric column is no metric
                out[name] = np.full(len(col), np.nan)
                continue
            out[name] = col.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
        yield out


class ScoreSummary:
    """The score columns report.html plots and profiles, summarised from streamed batches."""

    def __init__(self, path: Path) -> None:
        import pyarrow.parquet as pq

        self.path = path
        pf = pq.ParquetFile(path)
        self.n = int(pf.metadata.num_rows)
        names = set(pf.schema_arrow.names)
        self.columns = [c for c in (*INT_COLUMNS, *FLOAT_COLUMNS) if c in names]
        self.counts: dict[str, dict[float, int]] = {c: {} for c in self.columns if c in INT_COLUMNS}
        self.values: dict[str, list[np.ndarray]] = {c: [] for c in self.columns if c not in INT_COLUMNS}
        self.lo = {c: np.inf for c in self.columns}
        self.hi = {c: -np.inf for c in self.columns}
        self.finite = {c: 0 for c in self.columns}
        self.above = {t: 0 for t in THRESHOLDS}
        self.longer = self.shorter = 0
        self.sampled = self.n > SAMPLE_ROWS
        self.ratio_lo, self.ratio_hi = np.inf, -np.inf  # of the positive length ratios (log2 plot)
        if self.columns:
            self._first_pass()

    def _first_pass(self) -> None:
        keep = np.zeros(0, np.int64)
        if self.sampled:
            keep = np.sort(np.random.default_rng(0).choice(self.n, SAMPLE_ROWS, replace=False))
        start = 0
        for batch in _batches(self.path, self.columns):
            m = len(next(iter(batch.values())))
            pick = keep[(keep >= start) & (keep < start + m)] - start if self.sampled else None
            for name, v in batch.items():
                ok = np.isfinite(v)
                fin = v[ok]
                self.finite[name] += len(fin)
                if len(fin):
                    self.lo[name] = min(self.lo[name], float(fin.min()))
                    self.hi[name] = max(self.hi[name], float(fin.max()))
                if name in self.counts:
                    u, c = np.unique(fin, return_counts=True)
                    for x, k in zip(u.tolist(), c.tolist()):
                        self.counts[name][x] = self.counts[name].get(x, 0) + k
                else:
                    sel = v if pick is None else v[pick]
                    self.values[name].append(sel[np.isfinite(sel)])
                if name == "length_ratio" and (fin > 0).any():
                    self.ratio_lo = min(self.ratio_lo, float(fin[fin > 0].min()))
                    self.ratio_hi = max(self.ratio_hi, float(fin[fin > 0].max()))
            for t in THRESHOLDS:
                if t[0] in batch:
                    v = batch[t[0]]
                    v = v[np.isfinite(v)]
                    self.above[t] += int(((v >= t[2]) if t[1] == ">=" else (v < t[2])).sum())
            if "chosen_tokens" in batch and "rejected_tokens" in batch:
                c, r = batch["chosen_tokens"], batch["rejected_tokens"]
                both = ~np.isnan(c) & ~np.isnan(r)
                self.longer += int((c[both] > r[both]).sum())
                self.shorter += int((c[both] < r[both]).sum())
            start += m

    def has(self, name: str) -> bool:
        return name in self.columns and self.finite[name] > 0

    def sample(self, name: str) -> np.ndarray:
        """Every finite value (all rows up to ``SAMPLE_ROWS``, else the seeded sample's)."""
        parts = self.values.get(name) or []
        return np.concatenate(parts) if parts else np.empty(0)

    def median(self, name: str) -> float:
        return self.quantile(name, 50.0)

    def quantile(self, name: str, q: float) -> float:
        """``np.percentile`` of the column's finite values (exact for token counts)."""
        if name not in self.counts:
            return float(np.percentile(self.sample(name), q))
        values = np.asarray(sorted(self.counts[name]), np.float64)
        ends = np.cumsum([self.counts[name][v] for v in values])
        idx = q / 100.0 * (int(ends[-1]) - 1)
        lo, hi = int(np.floor(idx)), int(np.ceil(idx))
        a, b = values[np.searchsorted(ends, [lo, hi], side="right")]
        return float(np.percentile(np.asarray([a, b]), (idx - lo) * 100.0)) if hi != lo else float(a)

    def histogram(self, name: str, edges: np.ndarray, transform: Callable[[np.ndarray], np.ndarray] | None = None,
                  keep: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
        """Counts of the finite values (``keep``-filtered, then ``transform``-ed) in the bins ``edges``, as
        ``np.histogram`` counts them: a second streamed pass (token counts: from the exact value counts)."""
        if name in self.counts:
            v = np.asarray(list(self.counts[name]), np.float64)
            w = np.asarray(list(self.counts[name].values()), np.float64)
            sel = keep(v) if keep is not None else np.ones(len(v), bool)
            x = transform(v[sel]) if transform is not None else v[sel]
            return np.histogram(x, bins=edges, weights=w[sel])[0].astype(np.int64)
        total = np.zeros(len(edges) - 1, np.int64)
        for batch in _batches(self.path, [name]):
            v = batch[name]
            v = v[np.isfinite(v)]
            if keep is not None:
                v = v[keep(v)]
            total += np.histogram(transform(v) if transform is not None else v, bins=edges)[0]
        return total


class ReportFolder(OutputFolder):
    """An output folder for report.html: findings and scores read lazily, in bounded memory."""

    @classmethod
    def open(cls, out_dir: str | Path) -> ReportFolder:  # type: ignore[override]
        import polars as pl

        from pairaudit.outputs.reader import empty_findings

        base = OutputFolder.open.__func__(cls, out_dir, lazy=True)  # type: ignore[attr-defined]
        fpath, spath = base.path / FINDINGS, base.path / SCORES
        base.findings = empty_findings()
        base.__dict__["_lazy"] = pl.scan_parquet(fpath, glob=False) if fpath.exists() else None
        base.__dict__["_summary"] = ScoreSummary(spath) if spath.exists() else None
        return base

    @property
    def lazy_findings(self) -> Any:
        """findings.parquet as a polars LazyFrame (None: no findings file)."""
        return self.__dict__["_lazy"]

    @property
    def summary(self) -> ScoreSummary | None:
        return self.__dict__["_summary"]

    @property
    def checks(self) -> dict[str, dict[str, Any]]:
        import polars as pl

        checks = {k: dict(v or {}) for k, v in (self.report.get("checks") or {}).items()}
        if self.lazy_findings is not None:
            found = self.lazy_findings.select(pl.col("check").unique()).collect()["check"].drop_nulls().to_list()
            for name in sorted(found):
                checks.setdefault(name, {"status": "ran", "description": "", "reason": ""})
        return checks

    def check_findings(self, check: str) -> Any:
        """One check's findings (a polars DataFrame, columns as in findings.parquet)."""
        import polars as pl

        from pairaudit.outputs.reader import empty_findings

        if self.lazy_findings is None:
            return empty_findings()
        return self.lazy_findings.filter(pl.col("check") == check).collect()

    def prefetch(self, rows: Iterable[int]) -> None:
        """Load the findings and scores of these rows (the examples shown) and nothing else."""
        import polars as pl

        rows = sorted({int(r) for r in rows})
        index: dict[int, list[dict[str, Any]]] = {}
        if self.lazy_findings is not None and rows:
            f = self.lazy_findings.filter(pl.col("row").is_in(rows)).collect()
            for r in f.sort(["row", "check", "field"], nulls_last=True).iter_rows(named=True):
                index.setdefault(r["row"], []).append(r)
        self.__dict__["_findings_by_row"] = index
        spath = self.path / SCORES
        self.scores = pl.scan_parquet(spath, glob=False).filter(pl.col("row").is_in(rows)).collect() if spath.exists() and rows \
            else None
        self.__dict__.pop("_score_index", None)

    def row_findings(self, row: int) -> list[dict[str, Any]]:
        if "_findings_by_row" not in self.__dict__:
            self.prefetch([row])
        return [dict(f) for f in self.__dict__["_findings_by_row"].get(row, [])]

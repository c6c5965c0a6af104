"""The scan pipeline: read -> normalise -> tokenize -> per-pair checks -> stages -> policy -> outputs.

Memory: the streaming part holds one batch; stages keep compact per-row data; per-row metrics go
to part files on disk and are joined at the end.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from pairaudit import __version__, trainers
from pairaudit.audit import Audit
from pairaudit.batch import BatchProcessor, BatchResult
from pairaudit.checks.base import Stage
from pairaudit.checks.registry import SHARED_CHECKS, stage_classes
from pairaudit.config import Context, Progress, ScanConfig, default_cache_dir, validate_config
from pairaudit.decisions import FILENAME as DECISIONS_FILE
from pairaudit.decisions import Resolution, load_decisions, resolve
from pairaudit.errors import ConfigError, InputError, MissingDependency
from pairaudit.io.formats import parse_columns
from pairaudit.io.readers import Record, Source, open_source
from pairaudit.io.writers import write_outputs
from pairaudit.models.loading import check_model_arg
from pairaudit.outputs import OutputDir, findings_table, guard_source, output_names, write_json, write_parquet
from pairaudit.policy import Policy, build_policy
from pairaudit.tally import Tally, dedupe, drops_and_flips
from pairaudit.trainers import TrainerSettings
from pairaudit.types import Finding

#: an engine runs the streaming part of a scan: every batch through ``scanner.processor`` and the
#: stages' observe, merged with ``scanner.absorb``; it may return statistics for report.json
Engine = Callable[["Scanner", Source, list[Path]], "dict[str, Any] | None"]

EXIT_OK, EXIT_INPUT, EXIT_FAIL_ON, EXIT_CHECK_FAILED, EXIT_EMPTY = 0, 2, 3, 4, 5


class Scanner:
    def __init__(self, cfg: ScanConfig, log: Callable[[str], None], progress: Progress | None = None) -> None:
        # the trainer profile makes every limit concrete before anything reads the config
        self.trainer: TrainerSettings = trainers.resolve(cfg)
        cfg = self.trainer.apply(cfg)
        validate_config(cfg)
        check_runtime(cfg)
        self.cfg = cfg
        self.log = log
        for note in self.trainer.notes:
            log(note)
        self.policy: Policy = build_policy(cfg)
        self.columns = parse_columns(cfg.columns)
        self.ctx = Context(cfg, default_cache_dir(), log, params=self.policy.params)
        if progress is not None:
            self.ctx.progress = progress
        self.timings: dict[str, float] = defaultdict(float)
        self.status: dict[str, dict[str, str]] = {}
        self.findings: list[Finding] = []
        self.check_errors: dict[str, list[str]] = defaultdict(list)
        self.error_counts: dict[str, int] = defaultdict(int)
        self.n_input = 0
        self.formats: dict[str, int] = defaultdict(int)  # rows per format (files can mix them)
        self.stages: list[Stage] = []
        self.processor = BatchProcessor(cfg, self.policy, self.columns, cfg.format, self.ctx.cache_dir,
                                        self.trainer)
        self.stats: dict[str, Any] = {}
        #: set by an engine that wrote the data files itself: (tally, flipped rows, counts, resolution, t)
        self.written: tuple[Tally, list[int], dict[str, int], Resolution, float] | None = None

    @property
    def fmt(self) -> str | None:
        return self.processor.fmt

    # -- setup --------------------------------------------------------------------------------
    def _make_stages(self) -> None:
        for cls in stage_classes():
            names = {i.name for i in cls.infos} & self.policy.enabled
            if not names - SHARED_CHECKS.get(cls.__name__, frozenset()):
                continue
            # a stage that cannot apply to this source (e.g. split_leakage on one split) is off, not failed
            reason = cls.not_applicable(self.ctx) if hasattr(cls, "not_applicable") else None
            if reason:
                if names & self.policy.explicit:
                    raise ConfigError(f"{', '.join(sorted(names & self.policy.explicit))} cannot run: {reason}")
                for n in names:
                    self.status.setdefault(n, {"status": "off", "reason": reason})
                continue
            try:
                self.stages.append(cls(self.ctx, names))
            except MissingDependency as exc:
                if names & self.policy.explicit:
                    raise
                for n in names:
                    self.status.setdefault(n, {"status": "skipped", "reason": str(exc).replace("\n  ", "; ")})
                self.log(f"skipping {', '.join(sorted(names))}: {exc}")

    # -- streaming ----------------------------------------------------------------------------
    def absorb(self, res: BatchResult, parts: list[Path], observe: bool = True) -> None:
        """Merge one batch result: findings, metrics part file, errors, timings; feed the stages
        (``observe=False`` when an engine already ran the stages' observe remotely)."""
        self.findings.extend(res.findings)
        for name, msgs in res.check_errors.items():
            self.check_errors[name] = (self.check_errors[name] + msgs)[:5]
        for name, n in res.error_counts.items():
            self.error_counts[name] += n
        for k, v in res.timings.items():
            self.timings[k] += v
        for k, v in res.formats.items():
            self.formats[k] += v
        if self.processor.tok is not None and "tokenizer" not in self.ctx.models:
            self.ctx.models["tokenizer"] = self.processor.tok.spec.to_json() if self.processor.tok.spec else {}
        if observe and res.pairs:
            for stage in list(self.stages):
                ts = time.perf_counter()
                try:
                    stage.observe(res.pairs, res.encoded)
                except Exception as exc:  # noqa: BLE001
                    self._stage_failed(stage, exc)
                self.timings[f"stage:{type(stage).__name__}"] += time.perf_counter() - ts
        if res.metrics:
            part = self.out.tmp / f".metrics-{len(parts):06d}.parquet"
            pl.DataFrame(res.metrics, infer_schema_length=None).sort("row").write_parquet(part)
            parts.append(part)
        self.n_input += res.n_records

    def _stage_failed(self, stage: Stage, exc: BaseException) -> None:
        msg = f"{type(exc).__name__}: {exc}".replace("\n  ", "; ")
        for info in stage.infos:
            if info.name in stage.enabled:
                self.status[info.name] = {"status": "failed", "reason": msg}
        self.log(f"stage {type(stage).__name__} failed: {msg}")
        if stage in self.stages:
            self.stages.remove(stage)

    # -- run ----------------------------------------------------------------------------------
    def run(self, source_arg: Any, out_dir: Path, *, engine: Engine | None = None,
            finish: Callable[[Path], Any] | None = None) -> Audit:
        """Scan ``source_arg`` (a path, hub id or in-memory object, see ``io.readers.open_source``) into
        ``out_dir``. ``engine`` runs the streaming part (default: in this process, :meth:`run_local`);
        ``finish`` is called on the temp output folder once every data file is written and before the
        folder is committed (the API renders report.html there)."""
        t_start = time.perf_counter()
        source = open_source(source_arg, split=self.cfg.split, subset=self.cfg.subset)
        self.source = source
        self.ctx.splits = source.splits
        desc = source.describe()
        if desc.get("other_splits"):
            self.log(f"scanning split {desc.get('split')!r}; the dataset also has {desc['other_splits']} "
                     "(--split all scans every split into one output)")
        elif source.splits:
            self.log("scanning splits " + ", ".join(f"{n} ({k} rows)" for n, _, k in source.splits)
                     + " into one output (row = position over the splits in this order)")
        self._make_stages()
        guard_source(out_dir, getattr(source, "path", None))
        self.decisions = self._decisions(out_dir)  # a bad decisions file is an error before the scan
        self.out = OutputDir(out_dir, output_names(source.ext))
        try:
            parts: list[Path] = []
            stats = (engine or Scanner.run_local)(self, source, parts)
            if stats:
                self.stats["engine"] = stats
            if len(self.formats) > 1:
                self.log(f"rows in several formats ({', '.join(f'{k}: {v}' for k, v in sorted(self.formats.items()))}):"
                         " each row was read in its own format")
            if self.written is not None:  # the engine finalized the stages and wrote the data files itself
                audit = self.commit(source, out_dir, *self.written, t_start=t_start, finish=finish)
            else:
                stage_scores = self._finalize_stages()
                audit = self._write(source, out_dir, parts, stage_scores, t_start, finish)
        except BaseException as exc:
            self.out.abort()
            if isinstance(exc, KeyboardInterrupt):  # the CLI says whether outputs changed
                exc.outputs_committed = self.out.committed  # type: ignore[attr-defined]
            raise
        return audit

    def run_local(self, source: Source, parts: list[Path]) -> None:
        """The local engine: every batch in this process, in source order. Progress ("read": rows
        read, tokenized, checked and observed by the stages) is reported every ``PROGRESS_ROWS`` rows
        within a batch, and after the stages' observe of each batch."""
        total, unit = source.progress_total()
        batch_rows = 0

        def report(done_in_batch: int) -> None:
            # a batch's last rows count once the stages have observed it too (embedding, scoring), so
            # the phase never looks complete while they run; the total is estimated from the rows read
            # so far (the whole batch), not the rows done
            if batch_rows and done_in_batch >= batch_rows:
                return
            estimate = _estimate_rows(self.n_input + batch_rows, source, total, unit)
            self.ctx.progress("read", self.n_input + done_in_batch, estimate)

        for k, records in enumerate(source.batches(self.cfg.batch_size)):
            batch_rows = len(records)
            self.absorb(self.processor.process(records, on_rows=report), parts)
            batch_rows = 0
            if k == 0:
                self._first_batch_sanity(records)
            report(0)
        self.ctx.progress("read", self.n_input, self.n_input)

    def _first_batch_sanity(self, records: list[Record]) -> None:
        parsed = [r for r in records if r.data is not None]
        for canonical, column in self.columns.items():
            if parsed and not any(column in r.data for r in parsed):
                found = sorted({k for r in parsed for k in r.data})
                raise InputError(
                    f"--columns maps {canonical}={column}, but none of the first {len(parsed)} records has a "
                    f"column {column!r}; columns found: {', '.join(map(repr, found[:20]))}",
                    fix=f"map {canonical} to one of the columns found, e.g. --columns {canonical}={found[0]}")
        if parsed and self.fmt is None:
            raise InputError(
                f"none of the first {len(records)} records looks like a preference pair; keys found: "
                f"{sorted(parsed[0].data)[:10]}",
                expected="chosen/rejected (+prompt) columns, chosen_input_ids, or response_a/response_b/label",
                fix="map your columns, e.g. --columns prompt=question,chosen=good,rejected=bad, or --format")

    def _finalize_stages(self) -> list[tuple[list[int], dict[str, Any]]]:
        out = []
        stages = list(self.stages)
        for k, stage in enumerate(stages):
            ts = time.perf_counter()
            self.ctx.progress("finalize", k, len(stages))
            if hasattr(stage, "set_findings"):  # stages that read earlier stages' findings (split_leakage)
                ran = {n for n in self.policy.enabled if self.status.get(n, {}).get("status", "ran") == "ran"
                       and any(n in s.enabled for s in self.stages)}
                stage.set_findings(self.findings, ran)
            try:
                res = stage.finalize()
            except Exception as exc:  # noqa: BLE001
                self._stage_failed(stage, exc)
                continue
            finally:
                self.timings[f"stage:{type(stage).__name__}"] += time.perf_counter() - ts
            self.findings.extend(stage_findings(stage, res, self.policy))
            if res.rows is not None and res.scores:
                out.append((np.asarray(res.rows, dtype=np.int64), res.scores))
            self.stats.update(res.stats)
            for k, v in res.timings.items():  # run-specific figures: timings.json, never report.json
                self.timings[k] += v
        self.ctx.progress("finalize", len(stages), len(stages))
        return out

    def _write(self, source: Source, out_dir: Path, parts: list[Path], stage_scores: list, t_start: float,
               finish: Callable[[Path], Any] | None) -> Audit:
        t = time.perf_counter()
        findings = dedupe(self.findings)
        decisions = self.decisions
        drops, flips = drops_and_flips(findings, self.cfg.flip)
        hashes = self._hashes(parts, set(decisions)) if decisions else {}
        resolution = resolve(decisions, drops, flips, hashes)
        steps = 5 if finish is not None else 4
        self.ctx.progress("write", 0, steps)
        counts = write_outputs(source, self.out.tmp, drops, flips, self.fmt or "standard", self.columns)
        self.timings["write_clean_dropped"] += time.perf_counter() - t
        self.ctx.progress("write", 1, steps)
        write_parquet(findings_table(findings), self.out.tmp / "findings.parquet")
        self.ctx.progress("write", 2, steps)
        self._write_scores(parts, stage_scores, drops)
        self.ctx.progress("write", 3, steps)
        return self.commit(source, out_dir, Tally.of(findings, drops), sorted(flips), counts, resolution,
                           t, t_start, finish)

    def commit(self, source: Source, out_dir: Path, tally: Tally, flips: list[int], counts: dict[str, int],
               resolution: Resolution, t: float, t_start: float, finish: Callable[[Path], Any] | None) -> Audit:
        """Once every data file is in the temp folder: report.json, ``finish``, timings, commit."""
        steps = 5 if finish is not None else 4
        report = self._report(source, tally, flips, counts, self.decisions, resolution)
        write_json(self.out.tmp / "report.json", report)
        self.ctx.progress("write", 4, steps)
        if finish is not None:
            finish(self.out.tmp)
            self.ctx.progress("write", 5, steps)
        self.timings["write_outputs"] += time.perf_counter() - t
        self.timings["total"] = time.perf_counter() - t_start
        write_json(self.out.tmp / "timings.json", {k: round(v, 4) for k, v in sorted(self.timings.items())})
        self.out.commit()
        fdf = pl.read_parquet(Path(out_dir) / "findings.parquet")
        code = EXIT_OK if report["status"] == "ok" else EXIT_CHECK_FAILED
        if report["status"] == "empty" and not self._check_problems:
            code = EXIT_EMPTY  # nothing usable came through: never "ok"
        if report["source"].get("damage"):
            code = EXIT_INPUT  # the input itself could not be read to its end
        return Audit(Path(out_dir), report, fdf, code, list(report.get("problems", [])))

    def _hashes(self, parts: list[Path], rows: set[int]) -> dict[int, str]:
        """pair_hash of the given rows (only the rows that have a review decision)."""
        if not parts:
            return {}
        df = pl.concat([pl.scan_parquet(p) for p in parts], how="diagonal_relaxed")
        if "pair_hash" not in df.collect_schema():
            return {}
        df = df.select("row", "pair_hash").filter(pl.col("row").is_in(sorted(rows))).drop_nulls().collect()
        return dict(zip(df["row"].to_list(), df["pair_hash"].to_list()))

    def _decisions(self, out_dir: Path) -> dict:
        decisions = load_decisions(Path(out_dir) / DECISIONS_FILE)
        if self.cfg.decisions:
            if not Path(self.cfg.decisions).exists():
                raise InputError(f"decisions file {self.cfg.decisions} does not exist",
                                 fix="pass the decisions.jsonl written by the review helper")
            decisions.update(load_decisions(self.cfg.decisions))
        return decisions

    def _write_scores(self, parts: list[Path], stage_scores: list, drops: dict[int, list[str]]) -> None:
        """Join the per-batch metric parts (each sorted by row, batches in row order) with the stages'
        score columns and stream the result to scores.parquet without holding it all in memory.

        Added columns: ``kept`` (bool: the row is in the cleaned output, review decisions included),
        and for several splits ``split`` / ``split_row``. Every float column holds null, never NaN,
        where no value was computed (a check off, a row a stage did not score, e.g. beyond
        ``--reference-max-rows``, or a model result that is NaN); +-inf are kept (overflows are data)."""
        lf = scores_frame([pl.scan_parquet(p) for p in parts], stage_scores, sorted(drops), self.source.splits)
        lf.sink_parquet(self.out.tmp / "scores.parquet", compression="zstd")
        for p in parts:
            p.unlink()

    def _report(self, source, tally, flips, counts, decisions, resolution) -> dict[str, Any]:  # noqa: ANN001
        per_check_findings, per_check_rows = tally.findings, tally.rows
        checks = {}
        problems = []
        damage = source.describe().get("damage")
        if damage:
            problems.append(f"input damaged: {damage}; the rows before it were scanned, the rest is missing")
        for name, info in self.policy.infos.items():
            st = self.status.get(name)
            if st is None:
                st = {"status": "ran" if name in self.policy.enabled else "off", "reason": ""}
            if name in self.check_errors:
                st = {"status": "failed", "reason": f"{self.error_counts[name]} row(s) raised: "
                                                    + "; ".join(self.check_errors[name])}
            if st["status"] == "failed" or (st["status"] == "skipped" and name in self.policy.explicit):
                problems.append(f"{name} {st['status']}: {st['reason']}")
            n_rows = per_check_rows.get(name, 0)
            checks[name] = {
                "description": info.description, "kind": info.kind, "default_action": info.default_action,
                "action": self.policy.actions[name], "thresholds": self.policy.params[name], **st,
                "findings": per_check_findings.get(name, 0), "rows": n_rows,
                "rate": round(n_rows / self.n_input, 6) if self.n_input else 0.0,
            }
        totals = {"input": self.n_input, "kept": counts["kept"], "dropped": counts["dropped"], "flagged": tally.flagged,
                  "malformed": per_check_rows.get("malformed_record", 0)}
        if totals["kept"] + totals["dropped"] != totals["input"]:
            raise RuntimeError(f"internal error: kept {totals['kept']} + dropped {totals['dropped']} != "
                               f"input {totals['input']}")
        self._check_problems = bool(problems)
        if not totals["kept"]:  # nothing usable came through: a distinct status, never "ok"
            problems.append("no record could be read from the source" if not totals["input"] else
                            f"every record was dropped ({totals['dropped']:,} of {totals['input']:,}; "
                            f"{totals['malformed']:,} malformed): the cleaned output is empty")
        return {
            "pairaudit_version": __version__,
            "status": "empty" if not totals["kept"] else "ok" if not problems else "incomplete",
            "problems": problems,
            "source": {**source.describe(), "format": self.fmt, "columns": self.columns,
                       **({"formats": dict(sorted(self.formats.items()))} if len(self.formats) > 1 else {})},
            "totals": totals,
            "checks": checks,
            "config": self.cfg.to_json(),
            "models": self.ctx.models,
            "assumptions": self._assumptions(),
            "versions": _versions(),
            "stats": self.stats,
            "decisions": {"total": len(decisions), "applied": resolution.applied, "ignored": resolution.ignored,
                          "flipped": list(flips)},
            "timings_file": "timings.json",
        }

    def _assumptions(self) -> dict[str, Any]:
        """The tokenizer and trainer semantics every length figure depends on (report.json ``assumptions``)."""
        from pairaudit.models.loading import resolve_model
        from pairaudit.tokenize import assumptions

        tok = self.processor.tok
        if tok is not None:
            return tok.assumptions()
        try:  # no pair was tokenized: name the tokenizer without loading it
            spec = resolve_model(self.cfg.tokenizer)
        except Exception:  # noqa: BLE001 - a tokenizer that was never needed must not fail the report
            spec = None
        return assumptions(spec, self.trainer, display=None if spec else str(self.cfg.tokenizer))


def _versions() -> dict[str, str]:
    import importlib.metadata as md
    import platform

    out = {"python": platform.python_version()}
    for pkg in ("transformers", "tokenizers", "datasets", "polars", "pyarrow", "rapidfuzz", "ftfy",
                "sentence-transformers", "faiss-cpu", "torch", "trl"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return out


def check_runtime(cfg: ScanConfig) -> None:
    """Before a scan: model paths exist and the device is there (not a failure at the end of the scan)."""
    for option, value in (("--tokenizer", cfg.tokenizer), ("--embedder", cfg.embedder), ("--reference", cfg.reference),
                          ("--reward-model", cfg.reward_model), ("--policy", cfg.policy)):
        check_model_arg(value, option)
    if cfg.device not in ("auto", "cpu", "mps") and not cfg.device.startswith("cuda"):
        raise ConfigError(f"--device {cfg.device!r}", expected="auto, cpu, cuda, cuda:N or mps")
    if cfg.device.startswith("cuda"):
        import importlib.util

        if importlib.util.find_spec("torch") is not None:
            import torch

            if not torch.cuda.is_available():
                raise ConfigError(f"--device {cfg.device} was requested but CUDA is not available to torch",
                                  fix="use --device cpu (or auto), or install a CUDA build of torch")


def stage_findings(stage: Stage, res: Any, policy: Policy) -> list[Finding]:
    """The findings of a stage's result that the user asked for, with the policy's action set."""
    shared = SHARED_CHECKS.get(type(stage).__name__, frozenset()) & policy.enabled
    out = []
    for f in res.findings:
        if f.check in stage.enabled or f.check in shared:
            f.action = policy.action(f.check)
            out.append(f)
    return out


def scores_frame(parts: list[pl.LazyFrame], stage_scores: list, dropped: list[int],
                 splits: list[tuple[str, int, int]] | None) -> pl.LazyFrame:
    """scores.parquet from per-batch metric frames (each sorted by row, in row order) and the stages'
    ``(rows, columns)`` score pairs: float NaN -> null, ``kept``, and ``split``/``split_row`` for several
    splits. Used for the whole dataset (local engine) and for one shard's rows (Ray engine)."""
    if parts:
        lf = pl.concat(parts, how="diagonal_relaxed")
    else:
        lf = pl.LazyFrame({"row": []}, schema={"row": pl.Int64})
    lf = lf.with_columns(pl.col("row").cast(pl.Int64))
    columns = set(lf.collect_schema().names())
    for rows, cols in stage_scores:
        extra = pl.DataFrame({"row": pl.Series("row", rows, dtype=pl.Int64),
                              **{k: pl.Series(k, np.asarray(v)) for k, v in cols.items() if k not in columns}})
        columns |= set(extra.columns)
        lf = lf.join(extra.lazy(), on="row", how="left", maintain_order="left")
    lf = lf.with_columns(_float_nan_to_null(lf))
    dropped_s = pl.Series("dropped", dropped, dtype=pl.Int64)
    lf = lf.with_columns((~pl.col("row").is_in(dropped_s.implode())).alias("kept"))
    if splits:
        lf = lf.with_columns(*_split_columns(splits))
    return lf


def _float_nan_to_null(lf: pl.LazyFrame) -> list[pl.Expr]:
    schema = lf.collect_schema()
    return [pl.col(c).fill_nan(None) for c, t in schema.items() if t in (pl.Float32, pl.Float64)]


def _split_columns(splits: list[tuple[str, int, int]]) -> list[pl.Expr]:
    """``split`` (name) and ``split_row`` (index within the split) from the global row number."""
    name: Any = pl.lit(None, dtype=pl.Utf8)
    first: Any = pl.lit(None, dtype=pl.Int64)
    for split, start, n in reversed(splits):
        inside = (pl.col("row") >= start) & (pl.col("row") < start + n)
        name = pl.when(inside).then(pl.lit(split)).otherwise(name)
        first = pl.when(inside).then(pl.lit(start, dtype=pl.Int64)).otherwise(first)
    return [name.alias("split"), (pl.col("row") - first).alias("split_row")]


def _estimate_rows(rows: int, source: Source, total: int | None, unit: str) -> int | None:
    """Total rows: known, or extrapolated from the bytes read so far (JSONL)."""
    if unit != "bytes":
        return total
    read = getattr(source, "bytes_read", 0)
    return max(rows, round(rows * total / read)) if total and read else None

"""The scan pipeline: read -> normalise -> tokenize -> per-pair checks -> stages -> check plan (actions) -> outputs.

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

from pairaudit import exit_codes
from pairaudit.audit import Audit
from pairaudit.batch import BatchProcessor, BatchResult
from pairaudit.cache import cache_report, start_scan
from pairaudit.config import Context, Progress, ScanConfig, default_cache_dir, take_clamps, validate_config
from pairaudit.datatypes import Finding
from pairaudit.decisions import Resolution, load_decisions, resolve
from pairaudit.errors import (
    ConfigError,
    InputError,
    MissingDependency,
    ModelError,
    file_system_error,
    os_error_of,
)
from pairaudit.io.formats import IMPLICIT_FORMATS, parse_columns
from pairaudit.io.readers import Record, Source, open_source
from pairaudit.models.runtime import check_runtime, trim
from pairaudit.output_files import DECISIONS_FILE, FINDINGS, REPORT_JSON, SCORES, TIMINGS
from pairaudit.outputs.folder import (
    OutputDir,
    findings_table,
    guard_source,
    output_names,
    write_json,
    write_parquet,
)
from pairaudit.outputs.records import write_outputs
from pairaudit.outputs.report_json import ScanFacts, build_report
from pairaudit.outputs.scores import part_hashes, write_part, write_scores
from pairaudit.outputs.tally import Tally, dedupe, drops_and_flips
from pairaudit.plan import CheckPlan, build_plan
from pairaudit.stages.base import Stage
from pairaudit.stages.registry import stage_classes
from pairaudit.trainer import profiles
from pairaudit.trainer.profiles import TrainerSettings

#: an engine runs the streaming part of a scan: every batch through ``scanner.processor`` and the
#: stages' observe, merged with ``scanner.absorb``; it may return statistics for report.json
Engine = Callable[["Scanner", Source, list[Path]], "dict[str, Any] | None"]

class Scanner:
    def __init__(self, cfg: ScanConfig, log: Callable[[str], None], progress: Progress | None = None) -> None:
        # the trainer profile makes every limit concrete before anything reads the config
        self.trainer: TrainerSettings = profiles.resolve(cfg)
        cfg = self.trainer.apply(cfg)
        validate_config(cfg)
        check_runtime(cfg)
        self.cfg = cfg
        self.log = log
        start_scan(log)  # the model cache: a failed write is said once, then the scan runs uncached
        for note in self.trainer.notes:
            log(note)
        self.plan: CheckPlan = build_plan(cfg)
        self.columns = parse_columns(cfg.columns)
        self.ctx = Context(cfg, default_cache_dir(), log, params=self.plan.params)
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
        self.processor = BatchProcessor.for_config(cfg, plan=self.plan, columns=self.columns,
                                                   cache_dir=self.ctx.cache_dir, trainer=self.trainer)
        self.stats: dict[str, Any] = {}
        #: set by an engine that wrote the data files itself: (tally, flipped rows, counts, resolution, t)
        self.written: tuple[Tally, list[int], dict[str, int], Resolution, float] | None = None

    @property
    def fmt(self) -> str | None:
        return self.processor.fmt

    # -- setup --------------------------------------------------------------------------------
    def _make_stages(self) -> None:
        for cls in stage_classes():
            names = {i.name for i in cls.infos} & self.plan.enabled
            if not names - cls.refines:
                continue
            # a stage that cannot apply to this source (e.g. split_leakage on one split) is off, not failed
            reason = cls.not_applicable(self.ctx)
            if reason:
                if names & self.plan.explicit:
                    raise ConfigError(f"{', '.join(sorted(names & self.plan.explicit))} cannot run: {reason}")
                for n in names:
                    self.status.setdefault(n, {"status": "off", "reason": reason})
                continue
            try:
                self.stages.append(cls(self.ctx, names))
            except MissingDependency as exc:
                if names & self.plan.explicit:
                    raise
                for n in names:
                    self.status.setdefault(n, {"status": "skipped", "reason": str(exc).replace("\n  ", "; ")})
                self.log(f"skipping {', '.join(sorted(names))}: {exc}")
            except ModelError as exc:  # a model the stage loads at the start (--reference): its checks failed,
                self._checks_failed(cls.__name__, names, exc)  # as when it fails while running

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
                    self.stage_failed(stage, exc)
                self.timings[f"stage:{type(stage).__name__}"] += time.perf_counter() - ts
        if res.metrics:
            write_part(res.metrics, self.out.tmp, parts)
        self.n_input += res.n_records

    def stage_failed(self, stage: Stage, exc: BaseException) -> None:
        """Record that ``stage`` failed (its checks' status, a log line) and stop running it."""
        self._checks_failed(type(stage).__name__, {i.name for i in stage.infos if i.name in stage.enabled}, exc)
        if stage in self.stages:
            self.stages.remove(stage)

    def _checks_failed(self, stage_name: str, names: set[str], exc: BaseException) -> None:
        msg = f"{type(exc).__name__}: {exc}".replace("\n  ", "; ")
        for name in names:
            self.status[name] = {"status": "failed", "reason": msg}
        self.log(f"stage {stage_name} failed: {msg}")

    # -- run ----------------------------------------------------------------------------------
    def run(self, source_arg: Any, out_dir: Path, *, engine: Engine,
            finish: Callable[[Path], Any] | None = None) -> Audit:
        """Scan ``source_arg`` (a path, hub id or in-memory object, see ``io.readers.open_source``) into
        ``out_dir``. ``engine`` runs the streaming part (``engines.get_engine(name)``;
        ``engines.local.run_local`` runs it in this process); ``finish`` is called on the temp output
        folder once every data file is written and before the folder is committed (the API renders
        report.html there)."""
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
        self.doing = "reading and checking the source"
        try:
            parts: list[Path] = []
            stats = engine(self, source, parts)
            if stats:
                self.stats["engine"] = stats
            if len(self.formats) > 1:
                self.log(f"rows in several formats ({', '.join(f'{k}: {v}' for k, v in sorted(self.formats.items()))}):"
                         " each row was read in its own format")
            if self.written is not None:  # the engine finalized the stages and wrote the data files itself
                audit = self.commit(source, out_dir, *self.written, t_start=t_start, finish=finish)
            else:
                self.doing = "running the whole-dataset checks"
                stage_scores = self.finalize_stages()
                audit = self._write(source, out_dir, parts, stage_scores, t_start, finish)
        except BaseException as exc:
            self.out.abort()
            if isinstance(exc, KeyboardInterrupt):  # the CLI says whether outputs changed
                exc.outputs_committed = self.out.committed  # type: ignore[attr-defined]
            os_error = os_error_of(exc, out_dir)  # disk full, a size limit, an I/O error (polars wraps its own)
            if os_error is not None and not self.out.committed:
                raise file_system_error(os_error, out_dir, self.doing) from exc
            raise
        return audit

    def first_batch_sanity(self, records: list[Record]) -> None:
        """Fail early when the first batch cannot be what the options say (a mapped column missing, no format)."""
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

    def checks_ran(self) -> set[str]:
        """The enabled checks whose stage is still running (not failed, off or skipped)."""
        return {n for n in self.plan.enabled if self.status.get(n, {}).get("status", "ran") == "ran"
                and any(n in s.enabled for s in self.stages)}

    def finalize_stage(self, stage: Stage) -> tuple[list[Finding], list[tuple[np.ndarray, dict[str, Any]]],
                                                     dict[str, Any]] | None:
        """Finalize one stage on what it observed: its findings (with the plan's actions), its score columns and
        its report.json stats; None when it failed (recorded with ``stage_failed``). Nothing is added to the
        scanner's findings or stats: ``finalize_stages`` does that, in stage order."""
        ts = time.perf_counter()
        if stage.reads_findings:  # stages that read earlier stages' findings (split_leakage)
            stage.set_findings(self.findings, self.checks_ran())
        try:
            res = stage.finalize()
        except Exception as exc:  # noqa: BLE001
            self.stage_failed(stage, exc)
            return None
        finally:
            self.timings[f"stage:{type(stage).__name__}"] += time.perf_counter() - ts
        scores = [(np.asarray(res.rows, dtype=np.int64), res.scores)] if res.rows is not None and res.scores else []
        for k, v in res.timings.items():  # run-specific figures: timings.json, never report.json
            self.timings[k] += v
        return stage_findings(stage, res, self.plan), scores, res.stats

    def finalize_stages(self) -> list[tuple[np.ndarray, dict[str, Any]]]:
        """Finalize every running stage in order; their findings and stats join the scanner's; returns the score
        columns of every stage."""
        out = []
        stages = list(self.stages)
        for k, stage in enumerate(stages):
            self.ctx.progress("finalize", k, len(stages))
            done = self.finalize_stage(stage)
            trim()  # what the stage freed is not kept for the next one and the writers
            if done is None:
                continue
            findings, scores, stats = done
            self.findings.extend(findings)
            out += scores
            self.stats.update(stats)
        self.ctx.progress("finalize", len(stages), len(stages))
        return out

    def _write(self, source: Source, out_dir: Path, parts: list[Path], stage_scores: list, t_start: float,
               finish: Callable[[Path], Any] | None) -> Audit:
        t = time.perf_counter()
        self.doing = "writing the outputs"
        findings = dedupe(self.findings)  # one finding per (row, check, field)
        decisions = self.decisions
        drops, flips = drops_and_flips(findings, self.cfg.flip)  # --flip CHECK: kept rows reversed
        hashes = part_hashes(parts, set(decisions)) if decisions else {}
        resolution = resolve(decisions, drops, flips, hashes)
        steps = 5 if finish is not None else 4
        self.ctx.progress("write", 0, steps)
        if self.cfg.explicit_prompt and self.fmt not in IMPLICIT_FORMATS:
            self.log(f"--explicit-prompt: the data ({self.fmt}) has no implicit prompts; the cleaned output is "
                     "written as it is")
        counts = write_outputs(source, self.out.tmp, drops, flips, self.fmt or "standard", self.columns,
                               explicit_prompt=self.cfg.explicit_prompt)
        self.timings["write_clean_dropped"] += time.perf_counter() - t
        self.ctx.progress("write", 1, steps)
        write_parquet(findings_table(findings), self.out.tmp / FINDINGS)
        self.ctx.progress("write", 2, steps)
        write_scores(self.out.tmp / SCORES, parts, stage_scores, drops, self.source.splits)
        self.ctx.progress("write", 3, steps)
        return self.commit(source, out_dir, Tally.of(findings, drops), sorted(flips), counts, resolution,
                           t, t_start, finish)

    def commit(self, source: Source, out_dir: Path, tally: Tally, flips: list[int], counts: dict[str, int],
               resolution: Resolution, t: float, t_start: float, finish: Callable[[Path], Any] | None) -> Audit:
        """Once every data file is in the temp folder: report.json, ``finish``, timings, commit."""
        steps = 5 if finish is not None else 4
        self.doing = "writing the outputs"
        report = build_report(self.facts(source), tally, flips, counts, len(self.decisions), resolution.applied,
                              resolution.ignored, self._assumptions(), self.out.tmp / SCORES)
        write_json(self.out.tmp / REPORT_JSON, report)
        self.ctx.progress("write", 4, steps)
        if finish is not None:
            finish(self.out.tmp)
            self.ctx.progress("write", 5, steps)
        self.timings["write_outputs"] += time.perf_counter() - t
        self.timings["total"] = time.perf_counter() - t_start
        write_json(self.out.tmp / TIMINGS, {k: round(v, 4) for k, v in sorted(self.timings.items())})
        self.out.commit()
        messages = [*report.get("problems", []), *report["source"].get("notes", [])]  # notes: read as gzip -dc does
        return Audit(Path(out_dir), report, None, exit_codes.scan_code(report), messages)

    def facts(self, source: Source) -> ScanFacts:
        """What this scan decided, for report.json: each check's status (ran, off, skipped, failed with why), the
        problems that make the scan incomplete, the source, config, models and stage statistics."""
        checks, problems = {}, []
        take_clamps(self.stats, self.ctx)  # thresholds the stages ran with other values than asked
        described = source.describe()
        damage = described.get("damage")
        if damage:
            problems.append(f"input damaged: {damage}; the rows before it were scanned, the rest is missing")
        for name, info in self.plan.infos.items():
            st = self.status.get(name)
            if st is None:
                st = {"status": "ran" if name in self.plan.enabled else "off", "reason": ""}
            if name in self.check_errors:
                st = {"status": "failed", "reason": f"{self.error_counts[name]} row(s) raised: "
                                                    + "; ".join(self.check_errors[name])}
            if st["status"] == "failed" or (st["status"] == "skipped" and name in self.plan.explicit):
                problems.append(f"{name} {st['status']}: {st['reason']}")
            clamped = self.ctx.clamped.get(name) or {}
            checks[name] = {"description": info.description, "kind": info.kind,
                            "default_action": info.default_action, "action": self.plan.actions[name],
                            "thresholds": {**self.plan.params[name], **{k: c["used"] for k, c in clamped.items()}},
                            **({"clamped": clamped} if clamped else {}), **st}
        desc = {**described, "format": self.fmt, "columns": self.columns,
                **({"formats": dict(sorted(self.formats.items()))} if len(self.formats) > 1 else {})}
        return ScanFacts(checks, problems, self.n_input, desc, self._config_used(), self.ctx.models, self.stats,
                         cache=cache_report())

    def _config_used(self) -> dict[str, Any]:
        """report.json ``config``: the run's configuration with every threshold a stage clamped (``Context.clamp``)
        at the value it used (the value asked for is in ``checks.<check>.clamped``)."""
        config = self.cfg.to_json()
        for check, keys in self.ctx.clamped.items():
            given = config["thresholds"].get(check) or {}
            for key, c in keys.items():
                if key in given:
                    given[key] = c["used"]
        return config

    def _decisions(self, out_dir: Path) -> dict:
        decisions = load_decisions(Path(out_dir) / DECISIONS_FILE)
        if self.cfg.decisions:
            if not Path(self.cfg.decisions).exists():
                raise InputError(f"decisions file {self.cfg.decisions} does not exist",
                                 fix="pass the decisions.jsonl written by the review helper")
            decisions.update(load_decisions(self.cfg.decisions))
        return decisions

    def _assumptions(self) -> dict[str, Any]:
        """The tokenizer and trainer semantics every length figure depends on (report.json ``assumptions``)."""
        from pairaudit.models.loading import resolve_model
        from pairaudit.models.tokenizer import assumptions

        tok = self.processor.tok
        if tok is not None:
            return assumptions(tok.spec, tok.trainer, display=tok.display)
        try:  # no pair was tokenized: name the tokenizer without loading it
            spec = resolve_model(self.cfg.tokenizer)
        except Exception:  # noqa: BLE001 - a tokenizer that was never needed must not fail the report
            spec = None
        return assumptions(spec, self.trainer, display=None if spec else str(self.cfg.tokenizer))


def stage_findings(stage: Stage, res: Any, plan: CheckPlan) -> list[Finding]:
    """The findings of a stage's result that the user asked for, with the plan's action set."""
    # the plan decides, not the instance's ``enabled`` (a stage cannot turn on a check the user left off)
    own = ({i.name for i in stage.infos} | stage.refines) & plan.enabled
    out = []
    for f in res.findings:
        if f.check in own:
            plan.settle(f)
            out.append(f)
    return out

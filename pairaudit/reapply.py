"""Review decisions applied from an output folder's own findings, without re-running a check or a model.

Decisions only move rows between the cleaned and the dropped output (and reverse flipped rows), so when
the source and the configuration are those of the scan that wrote the folder, its ``findings.parquet``
already holds everything a rescan would find. :func:`reapply` then rewrites what decisions change
(``clean`` / ``dropped``, the ``kept`` column of ``scores.parquet``, ``report.json``'s totals, status and
``decisions``) and copies the rest, giving the same bytes as a rescan with the same decisions.

A scan of a path records what its findings depend on in the hidden file ``.scan.json`` of its generation
(:func:`fingerprint`): pairaudit's version, the source's files (size and modification time) and the
requested configuration. :func:`why_not` compares that record with the present; anything it cannot
confirm (an in-memory source, a hub dataset, a changed file, a scan whose status is not ok) means a rescan.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pairaudit import exit_codes
from pairaudit.audit import Audit
from pairaudit.config import ScanConfig
from pairaudit.decisions import Resolution, load_decisions, resolve
from pairaudit.errors import file_system_error, os_error_of
from pairaudit.io.readers import open_source
from pairaudit.output_files import DECISIONS_FILE, FINDINGS, REPORT_JSON, SCAN_RECORD, SCORES, TIMINGS
from pairaudit.outputs.folder import OutputDir, output_names, write_json
from pairaudit.outputs.records import write_outputs
from pairaudit.outputs.report_json import RUN_SPECIFIC, versions
from pairaudit.schema import recorded_scan
from pairaudit.versions import __version__

FINGERPRINT = SCAN_RECORD
#: options that change neither the findings nor how they are read back: left out of the fingerprint
NOT_FINDINGS = frozenset({"decisions", *RUN_SPECIFIC})


def fingerprint(source: Any, cfg: ScanConfig) -> dict[str, Any] | None:
    """What a scan's findings depend on: pairaudit's version, the source's files (path, size, mtime) and
    the requested configuration; None for a source that is not a local path (nothing to compare later)."""
    if not isinstance(source, (str, Path)) or not Path(source).exists():
        return None
    return {"pairaudit_version": __version__, "source": str(Path(source).resolve()), "files": _files(Path(source)),
            "config": config_key(cfg)}


def config_key(cfg: ScanConfig) -> dict[str, Any]:
    """The configuration as JSON, without what does not change the findings."""
    return json.loads(json.dumps({k: v for k, v in cfg.to_json().items() if k not in NOT_FINDINGS}, default=str))


def _files(p: Path) -> list[list[Any]]:
    paths = [p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file())
    out = []
    for f in paths:
        st = f.stat()
        out.append([f.relative_to(p).as_posix() if f != p else "", st.st_size, st.st_mtime_ns])
    return out


def write_fingerprint(folder: Path, record: dict[str, Any] | None) -> None:
    """Write ``record`` as ``folder/.scan.json`` (a generation folder before it is committed)."""
    if record is not None:
        (folder / FINGERPRINT).write_text(json.dumps(record, sort_keys=True) + "\n", encoding="utf-8")


def why_not(out: Path, source: Any, cfg: ScanConfig | None) -> str | None:
    """None when ``out``'s findings hold for ``source`` (and ``cfg``, unless None: ``apply`` uses the
    folder's own), else the reason a rescan is needed, in words."""
    recorded = recorded_scan(out)
    if recorded is None:
        return "the folder does not record the source it scanned (an in-memory or hub source, or an older scan)"
    now = fingerprint(source, cfg or ScanConfig())
    if now is None:
        return "the source is not a local path, so it cannot be checked to be unchanged"
    if recorded.get("pairaudit_version") != __version__:
        return f"the folder was written by pairaudit {recorded.get('pairaudit_version')}, this is {__version__}"
    if (recorded.get("source"), recorded.get("files")) != (now["source"], now["files"]):
        return f"the source {source} is not the one scanned, or changed since (size or modification time)"
    if cfg is not None and recorded.get("config") != now["config"]:
        changed = sorted(k for k in set(now["config"]) | set(recorded.get("config") or {})
                         if now["config"].get(k) != (recorded.get("config") or {}).get(k))
        return f"the configuration differs from the scan's ({', '.join(changed[:6])})"
    report = json.loads((out / REPORT_JSON).read_text(encoding="utf-8"))
    if report.get("status") not in ("ok", "empty") or [p for p in report.get("problems") or [] if not _empty(p)]:
        return f"the scan's status is {report.get('status')!r} ({'; '.join(report.get('problems') or [])[:200]})"
    return None


def _empty(problem: str) -> bool:
    """The problem report.json lists when no row is kept (it depends on the decisions, so it is recomputed)."""
    return problem.startswith(("every record was dropped", "no record could be read"))


def reapply(out: Path, source_arg: Any, cfg: ScanConfig, finish: Callable[[Path], Any] | None = None) -> Audit:
    """Rewrite ``out`` with the review decisions (``OUT/decisions.jsonl`` and ``cfg.decisions``) applied to
    its own findings; the caller has checked :func:`why_not`. ``cfg``: the configuration the outputs record."""
    import polars as pl

    t0 = time.perf_counter()
    report = json.loads((out / REPORT_JSON).read_text(encoding="utf-8"))
    source = open_source(source_arg, split=cfg.split, subset=cfg.subset)
    decisions = _decisions(out, cfg)
    findings = pl.read_parquet(out / FINDINGS, columns=["row", "check", "action"], glob=False)
    drops, flips = _drops_and_flips(findings, cfg.flip)
    resolution = resolve(decisions, drops, flips, _hashes(out, set(decisions)))
    fingerprint_now = fingerprint(source_arg, cfg)
    outdir = OutputDir(out, output_names(source.ext))
    try:
        fmt, columns = report["source"].get("format") or "standard", report["source"].get("columns") or {}
        counts = write_outputs(source, outdir.tmp, drops, flips, fmt, columns, explicit_prompt=cfg.explicit_prompt)
        shutil.copyfile(out / FINDINGS, outdir.tmp / FINDINGS)
        (pl.scan_parquet(out / SCORES, glob=False)
         .with_columns((~pl.col("row").is_in(pl.Series(sorted(drops), dtype=pl.Int64).implode())).alias("kept"))
         .sink_parquet(outdir.tmp / SCORES, compression="zstd"))
        flagged = findings.filter(pl.col("action") == "flag")["row"].unique().to_list()
        report = _report(report, source, cfg, counts, len(set(flagged) - set(drops)), decisions, resolution, flips)
        _kept_per_check(report, findings, drops)
        write_json(outdir.tmp / REPORT_JSON, report)
        if finish is not None:
            finish(outdir.tmp)
        write_fingerprint(outdir.tmp, fingerprint_now and {**fingerprint_now, "config": recorded_scan(out)["config"]})
        write_json(outdir.tmp / TIMINGS, {"apply_from_findings": round(time.perf_counter() - t0, 4)})
        outdir.commit()
    except BaseException as exc:
        outdir.abort()
        os_error = os_error_of(exc, out)  # disk full, a size limit (polars wraps its own): exit 2, as a scan
        if os_error is not None and not outdir.committed:
            raise file_system_error(os_error, out, "applying the decisions", in_place=True) from exc
        raise
    return Audit(out, report, None, exit_codes.scan_code(report), list(report.get("problems", [])))


def _decisions(out: Path, cfg: ScanConfig) -> dict:
    from pairaudit.errors import InputError

    decisions = load_decisions(out / DECISIONS_FILE)
    if cfg.decisions:
        if not Path(cfg.decisions).exists():  # as the scan says it
            raise InputError(f"decisions file {cfg.decisions} does not exist",
                             fix="pass the decisions.jsonl written by the review helper")
        decisions.update(load_decisions(cfg.decisions))
    return decisions


def _drops_and_flips(findings: Any, flip_checks: list[str]) -> tuple[dict[int, list[str]], set[int]]:
    """As ``outputs.tally.drops_and_flips``, from findings.parquet (in its order: row, check, field)."""
    import polars as pl

    drops: dict[int, list[str]] = {}
    for row, check in findings.filter(pl.col("action") == "drop").select("row", "check").iter_rows():
        reasons = drops.setdefault(int(row), [])
        if check not in reasons:
            reasons.append(check)
    flips = set(findings.filter(pl.col("check").is_in(list(flip_checks)))["row"].to_list()) - set(drops)
    return drops, flips


def _hashes(out: Path, rows: set[int]) -> dict[int, str]:
    import polars as pl

    if not rows:
        return {}
    s = pl.scan_parquet(out / SCORES, glob=False)
    if "pair_hash" not in s.collect_schema():
        return {}
    df = s.select("row", "pair_hash").filter(pl.col("row").is_in(sorted(rows))).drop_nulls().collect()
    return dict(zip(df["row"].to_list(), df["pair_hash"].to_list()))


def _report(report: dict[str, Any], source: Any, cfg: ScanConfig, counts: dict[str, int], flagged: int,
            decisions: dict, resolution: Resolution, flips: set[int]) -> dict[str, Any]:
    """report.json as a rescan with these decisions writes it: what the decisions change recomputed."""
    totals = {**report["totals"], "kept": counts["kept"], "dropped": counts["dropped"], "flagged": flagged}
    problems = [p for p in report["problems"] if not _empty(p)]
    if not totals["kept"]:
        problems.append("no record could be read from the source" if not totals["input"] else
                        f"every record was dropped ({totals['dropped']:,} of {totals['input']:,}; "
                        f"{totals['malformed']:,} malformed): the cleaned output is empty")
    report.update(pairaudit_version=__version__, status="empty" if not totals["kept"] else "ok" if not problems
                  else "incomplete", problems=problems, totals=totals, versions=versions())
    report["source"] = {**report["source"], **source.describe()}
    report["config"] = {**report["config"], "decisions": cfg.decisions}
    report["decisions"] = {"total": len(decisions), "applied": resolution.applied, "ignored": resolution.ignored,
                           "flipped": sorted(flips)}
    return report


def _kept_per_check(report: dict[str, Any], findings: Any, drops: dict[int, list[str]]) -> None:
    """Each check's rows that no check and no decision drops, and the rows its own findings drop after the
    decisions, as a rescan counts them (``checks[name].kept`` / ``.dropped``)."""
    from collections import Counter

    import polars as pl

    dropped = pl.Series(sorted(drops), dtype=pl.Int64)
    kept = (findings.filter(~pl.col("row").is_in(dropped.implode())).group_by("check")
            .agg(pl.col("row").n_unique().alias("n")))
    per = dict(zip(kept["check"].to_list(), kept["n"].to_list()))
    own = Counter(check for reasons in drops.values() for check in set(reasons))
    for name, c in report["checks"].items():
        if "kept" in c:
            c["kept"] = int(per.get(name, 0))
        if "dropped" in c:
            c["dropped"] = int(own.get(name, 0))


def remove_fingerprint(out: Path) -> None:
    """Forget the record (tests: force a rescan)."""
    path = out / ".pairaudit" / "current" / FINGERPRINT
    if os.path.lexists(path):
        path.unlink()

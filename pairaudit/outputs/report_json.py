"""``report.json``: counts per check and action, totals (input = kept + dropped), config, models, versions.

Identical for identical input and config: run-specific figures (timings, cache counters) go to
``timings.json`` (:data:`TIMINGS`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pairaudit.outputs.remedies import trainer_remedies
from pairaudit.versions import __version__, package_versions

if TYPE_CHECKING:
    from pairaudit.decisions import Resolution
    from pairaudit.io.readers import Source
    from pairaudit.outputs.tally import Tally
    from pairaudit.pipeline import Scanner

REPORT_JSON = "report.json"
TIMINGS = "timings.json"
#: options that change how a scan runs, never what it finds: left out of report.json's config
RUN_SPECIFIC = frozenset({"workers"})


def build_report(scan: Scanner, source: Source, tally: Tally, flips: list[int], counts: dict[str, int],
                 decisions: dict, resolution: Resolution, assumptions: dict[str, Any]) -> dict[str, Any]:
    """The report.json content of a finished scan (``scan``: the Scanner, after its stages ran; ``tally``:
    per-check counts of the deduplicated findings, summed over shards by the Ray engine)."""
    per_check_findings, per_check_rows = tally.findings, tally.rows
    checks = {}
    problems = []
    damage = source.describe().get("damage")
    if damage:
        problems.append(f"input damaged: {damage}; the rows before it were scanned, the rest is missing")
    for name, info in scan.plan.infos.items():
        st = scan.status.get(name)
        if st is None:
            st = {"status": "ran" if name in scan.plan.enabled else "off", "reason": ""}
        if name in scan.check_errors:
            st = {"status": "failed", "reason": f"{scan.error_counts[name]} row(s) raised: "
                                                + "; ".join(scan.check_errors[name])}
        if st["status"] == "failed" or (st["status"] == "skipped" and name in scan.plan.explicit):
            problems.append(f"{name} {st['status']}: {st['reason']}")
        n_rows = per_check_rows.get(name, 0)
        checks[name] = {
            "description": info.description, "kind": info.kind, "default_action": info.default_action,
            "action": scan.plan.actions[name], "thresholds": scan.plan.params[name], **st,
            "findings": per_check_findings.get(name, 0), "rows": n_rows,
            "rate": round(n_rows / scan.n_input, 6) if scan.n_input else 0.0,
        }
    totals = {"input": scan.n_input, "kept": counts["kept"], "dropped": counts["dropped"], "flagged": tally.flagged,
              "malformed": per_check_rows.get("malformed_record", 0)}
    if totals["kept"] + totals["dropped"] != totals["input"]:
        raise RuntimeError(f"internal error: kept {totals['kept']} + dropped {totals['dropped']} != "
                           f"input {totals['input']}")
    if not totals["kept"]:  # nothing usable came through: a distinct status, never "ok"
        problems.append("no record could be read from the source" if not totals["input"] else
                        f"every record was dropped ({totals['dropped']:,} of {totals['input']:,}; "
                        f"{totals['malformed']:,} malformed): the cleaned output is empty")
    return {
        "pairaudit_version": __version__,
        "status": "empty" if not totals["kept"] else "ok" if not problems else "incomplete",
        "problems": problems,
        "source": {**source.describe(), "format": scan.fmt, "columns": scan.columns,
                   **({"formats": dict(sorted(scan.formats.items()))} if len(scan.formats) > 1 else {})},
        "totals": totals,
        "checks": checks,
        "config": {k: v for k, v in scan.cfg.to_json().items() if k not in RUN_SPECIFIC},
        "models": scan.ctx.models,
        "assumptions": assumptions,
        "versions": versions(),
        "stats": scan.stats,
        "remedies": trainer_remedies(scan.out.tmp / "scores.parquet", per_check_rows, assumptions.get("trainer") or {}),
        "decisions": {"total": len(decisions), "applied": resolution.applied, "ignored": resolution.ignored,
                      "flipped": list(flips)},
        "timings_file": TIMINGS,
    }


def versions() -> dict[str, str]:
    import platform

    return {"python": platform.python_version(), **package_versions((
        "transformers", "tokenizers", "datasets", "polars", "pyarrow", "rapidfuzz", "ftfy", "sentence-transformers",
        "faiss-cpu", "torch", "trl"))}

"""``report.json``: counts per check and action, totals (input = kept + dropped), config, models, versions.

Identical for identical input and config: run-specific figures (timings, cache counters) go to
``timings.json`` (:data:`TIMINGS`). The one exception is ``cache``, present only when the model cache could
not be written (the scan ran uncached: same results, a slower rerun; the report says so and how to fix it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pairaudit.io.formats import IMPLICIT_FORMATS
from pairaudit.output_files import TIMINGS
from pairaudit.outputs.remedies import trainer_remedies
from pairaudit.outputs.tally import Tally
from pairaudit.versions import __version__, package_versions

#: options that change how a scan runs, never what it finds: left out of report.json's config
RUN_SPECIFIC = frozenset({"workers"})


@dataclass
class ScanFacts:
    """What a finished scan decided, as plain values, for report.json (the pipeline decides; this module lays
    the JSON out).

    Args:
        checks: per check, in report order: description, kind, default_action, action, thresholds, status, reason.
        problems: why the scan is not "ok" (damaged input, failed checks), in order.
        n_input: input records.
        source: ``Source.describe()`` with the format, the column mapping (and rows per format when mixed).
        config: the scan's configuration (``ScanConfig.to_json``).
        models: the models that ran, by role.
        stats: the stages' report.json statistics.
        cache: None, or why the model cache could not be written and what ran uncached (``cache.cache_report``).
    """

    checks: dict[str, dict[str, Any]]
    problems: list[str]
    n_input: int
    source: dict[str, Any]
    config: dict[str, Any]
    models: dict[str, Any]
    stats: dict[str, Any]
    cache: dict[str, Any] | None = None


def build_report(facts: ScanFacts, tally: Tally, flips: list[int], counts: dict[str, int], n_decisions: int,
                 applied: int, ignored: list[dict], assumptions: dict[str, Any], scores_file: Path) -> dict[str, Any]:
    """The report.json content of a finished scan: ``facts`` with per-check counts of the deduplicated findings
    (summed over shards by the Ray engine), kept / dropped ``counts``, the review decisions applied, and the
    trainer remedies computed from ``scores_file`` (the scan's scores.parquet)."""
    n_input = facts.n_input
    per_check_findings, per_check_rows, flagged = tally.findings, tally.rows, tally.flagged
    checks = {}
    for name, decided in facts.checks.items():
        n_rows = per_check_rows.get(name, 0)
        checks[name] = {**decided, "findings": per_check_findings.get(name, 0), "rows": n_rows,
                        "kept": tally.kept.get(name, 0), "dropped": tally.dropped.get(name, 0),
                        "rate": round(n_rows / n_input, 6) if n_input else 0.0}
    problems = list(facts.problems)
    totals = {"input": n_input, "kept": counts["kept"], "dropped": counts["dropped"], "flagged": flagged,
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
        "source": facts.source,
        "totals": totals,
        "checks": checks,
        "config": {k: v for k, v in facts.config.items() if k not in RUN_SPECIFIC},
        "models": facts.models,
        **({"cache": facts.cache} if facts.cache else {}),
        "assumptions": assumptions,
        "versions": versions(),
        "stats": facts.stats,
        "remedies": trainer_remedies(scores_file, per_check_rows, assumptions.get("trainer") or {},
                                     _explicit_prompt(facts)),
        "decisions": {"total": n_decisions, "applied": applied, "ignored": ignored, "flipped": list(flips)},
        "timings_file": TIMINGS,
    }


def _explicit_prompt(facts: ScanFacts) -> bool | None:
    """False: implicit-prompt data written without a prompt column (--explicit-prompt would add one)."""
    if facts.source.get("format") not in IMPLICIT_FORMATS:
        return None
    return bool(facts.config.get("explicit_prompt"))


def versions() -> dict[str, str]:
    import platform

    return {"python": platform.python_version(), **package_versions((
        "transformers", "tokenizers", "datasets", "polars", "pyarrow", "rapidfuzz", "ftfy", "sentence-transformers",
        "faiss-cpu", "torch", "trl"))}

"""The names of the files in an output folder and the columns of findings.parquet, in one place: every writer
and reader imports them (docs/contract.md describes each file)."""

from __future__ import annotations

FINDINGS = "findings.parquet"
SCORES = "scores.parquet"
REPORT_JSON = "report.json"
REPORT_HTML = "report.html"
TIMINGS = "timings.json"  # run-specific figures, never in report.json
DECISIONS_FILE = "decisions.jsonl"  # review decisions, read by scan and apply
SCAN_RECORD = ".scan.json"  # in a generation: the scan's source and configuration (reapply's fingerprint)
TRACE_JSON = "trace.json"
TRACE_DROPS = "trace-drop.jsonl"  # the culprit rows of a trace, as review decisions
#: the files every scan writes besides the cleaned and dropped data (``clean.<ext>``, ``dropped.<ext>``)
OUTPUT_NAMES = (FINDINGS, SCORES, REPORT_JSON, REPORT_HTML, TIMINGS)
#: findings.parquet's columns and their types, in order (one row per row, check and field)
FINDINGS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("row", "int64"), ("check", "string"), ("action", "string"), ("field", "string"), ("score", "float64"),
    ("group", "int64"), ("detail", "string"),
)

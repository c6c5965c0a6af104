"""The ``pairaudit scan`` command that reproduces an audit with the rows a trace names dropped.

Every setting that decides findings and the clean output comes from the audit's ``report.json`` (``config``
and ``source``): the format, the column mapping, the split, the tokenizer, the trainer profile, ``max_length``
and the other trainer lengths, ``truncation_mode``, the checks run, skipped, dropped, flagged and flipped,
thresholds, per-check actions, the near-duplicate embedder and the scoring models. Without an audit (the scan
trace ran itself into its output folder) the same holds for that scan.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from pairaudit.output_files import REPORT_JSON

_LISTS = (("only", "--only"), ("skip", "--skip"), ("drop", "--drop"), ("flag", "--flag"), ("flip", "--flip"))
_VALUES = (("split", "--split"), ("subset", "--subset"), ("tokenizer", "--tokenizer"), ("trainer", "--trainer"),
           ("max_length", "--max-length"), ("max_prompt_length", "--max-prompt-length"),
           ("max_completion_length", "--max-completion-length"), ("truncation_mode", "--truncation-mode"),
           ("embedder", "--embedder"), ("reference", "--reference"), ("reward_model", "--reward-model"),
           ("policy", "--policy"))


def audit_flags(report: dict[str, Any]) -> list[str]:
    """``pairaudit scan`` flags that reproduce the settings ``report.json`` records."""
    cfg = report.get("config") or {}
    src = report.get("source") or {}
    out: list[str] = []
    if src.get("format"):
        out += ["--format", str(src["format"])]
    cols = cfg.get("columns") or src.get("columns") or {}
    if cols:
        out += ["--columns", ",".join(f"{k}={v}" for k, v in sorted(cols.items()))]
    for key, flag in _VALUES:
        if cfg.get(key) is not None:
            out += [flag, str(cfg[key])]
    if cfg.get("explicit_prompt"):
        out.append("--explicit-prompt")
    actions = cfg.get("actions") or {}
    for key, flag in _LISTS:
        names = list(cfg.get(key) or []) + sorted(c for c, a in actions.items() if a == key)
        if names:
            out += [flag, ",".join(dict.fromkeys(names))]
    for check, params in sorted((cfg.get("thresholds") or {}).items()):
        for p, v in sorted(params.items()):
            out += ["--set", f"{check}.{p}={json.dumps(v)}"]
    if cfg.get("embed_mode") not in (None, "auto"):
        out += ["--embed-mode", str(cfg["embed_mode"])]
    if cfg.get("reference") is not None and cfg.get("beta") is not None:
        out += ["--beta", str(cfg["beta"])]
    return out


def read_report(audit: str | Path | None) -> dict[str, Any] | None:
    if audit is None:
        return None
    try:
        rep = json.loads((Path(audit) / REPORT_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return rep if isinstance(rep, dict) else None


def earlier_decisions(report: dict[str, Any] | None) -> bytes:
    """The decisions file the audit applied (its lines go into the trace's decisions file too)."""
    path = ((report or {}).get("config") or {}).get("decisions")
    if not path:
        return b""
    try:
        text = Path(path).read_bytes()
    except OSError:
        return b""
    return text if not text or text.endswith(b"\n") else text + b"\n"


def scan_command(source: str, decisions: Path, report: dict[str, Any] | None) -> str:
    """``pairaudit scan SOURCE <the audit's flags> --decisions DECISIONS --out CLEAN_DIR``."""
    words = ["pairaudit", "scan", source, *(audit_flags(report) if report else []), "--decisions", str(decisions),
             "--out", "CLEAN_DIR"]
    return " ".join(w if w == "CLEAN_DIR" else shlex.quote(w) for w in words)

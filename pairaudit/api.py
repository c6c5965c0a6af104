"""The Python API: ``pairaudit.scan`` and ``pairaudit.apply_decisions``.

It wires the layers below it together: the run configuration, the engine chosen by name
(``pairaudit.engines``), the scan pipeline, and the report renderer that writes ``report.html`` into
the output folder before it is committed. Messages go to the ``pairaudit`` logger unless ``log`` is
given; nothing is printed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pairaudit.config import Progress, ScanConfig, load_config_file
from pairaudit.engines import get_engine
from pairaudit.errors import InputError
from pairaudit.pipeline import Audit, Scanner
from pairaudit.policy import apply_config_file
from pairaudit.report import render_report

logger = logging.getLogger("pairaudit")


def scan(source: str | Path, out: str | Path = "pairaudit-out", *, config: ScanConfig | None = None,
         config_file: str | Path | None = None, progress: Progress | None = None,
         log: Callable[[str], None] | None = None, **options: Any) -> Audit:
    """Audit ``source`` and write the contract outputs to ``out``.

    ``options`` are ScanConfig fields (``only=[...]``, ``drop=[...]``, ``max_length=2048``,
    ``tokenizer="path"``...). ``progress(phase, done, total)`` receives progress counts; ``log``
    receives messages (default: the ``pairaudit`` logger at INFO). Returns an :class:`Audit` with the
    findings (polars), the report and the cleaned ``datasets.Dataset`` (``audit.clean``).
    """
    cfg = config or ScanConfig()
    for key, value in options.items():
        if not hasattr(cfg, key):
            raise TypeError(f"scan() got an unknown option {key!r}")
        setattr(cfg, key, value)
    if config_file:
        cfg = apply_config_file(cfg, load_config_file(config_file))
    engine = get_engine(cfg.engine)
    scanner = Scanner(cfg, log or logger.info, progress)
    return scanner.run(source, Path(out), engine=engine, finish=render_report)


def apply_decisions(out_dir: str | Path, *, progress: Progress | None = None,
                    log: Callable[[str], None] | None = None) -> Audit:
    """Re-apply ``OUT/decisions.jsonl`` by re-running the scan recorded in ``OUT/report.json``
    (model outputs come from the caches, so this is cheap)."""
    out = Path(out_dir)
    report_path = out / "report.json"
    if not report_path.exists():
        raise InputError(f"{out} holds no report.json", fix="run `pairaudit scan SOURCE --out DIR` first")
    report = json.loads(report_path.read_text(encoding="utf-8"))
    cfg = ScanConfig(**report["config"])
    return scan(report["source"]["path"], out, config=cfg, progress=progress, log=log)

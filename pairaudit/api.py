"""The Python API: ``pairaudit.scan`` and ``pairaudit.apply_decisions``.

It wires the layers below it together: the run configuration, the engine chosen by name
(``pairaudit.engines``), the scan pipeline, and the report renderer that writes ``report.html`` into
the output folder before it is committed.

Nothing is printed: messages go to the ``pairaudit`` logger (INFO) unless ``log`` is given, progress
lines to the ``pairaudit.progress`` logger (INFO, at most one line per phase every few seconds) unless
``progress`` is given, and the progress bars of datasets / transformers / huggingface_hub are off during
the call (restored afterwards).
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pairaudit.config import Progress, ScanConfig, default_cache_dir, load_config_file, no_progress
from pairaudit.engines import get_engine
from pairaudit.errors import InputError, did_you_mean
from pairaudit.pipeline import Audit, Scanner
from pairaudit.policy import apply_config_file
from pairaudit.report import render_report
from pairaudit.report.progress import PlainProgress, ProgressDisplay, quiet_libraries

logger = logging.getLogger("pairaudit")
progress_logger = logging.getLogger("pairaudit.progress")


def _progress(progress: Progress | bool | None) -> tuple[Progress, Callable[[], None]]:
    """(callback, stop) for ``scan(progress=...)``."""
    if progress is None:
        plain = PlainProgress(progress_logger.info)
        return plain, plain.stop
    if progress is False:
        return no_progress, lambda: None
    if progress is True:
        display = ProgressDisplay()
        return display, display.stop
    return progress, lambda: None


def scan(source: Any, out: str | Path | None = "pairaudit-out", *, config: ScanConfig | None = None,
         config_file: str | Path | None = None, progress: Progress | bool | None = None,
         log: Callable[[str], None] | None = None, trainer_args: Any = None, **options: Any) -> Audit:
    """Audit ``source`` and write the contract outputs to ``out``.

    ``source``: a path (JSONL / JSON / Parquet file or folder, ``save_to_disk`` folder), a hub dataset
    id, a ``datasets.Dataset`` / ``DatasetDict`` / ``IterableDataset``, a polars or pandas DataFrame, a
    pyarrow Table, or an iterable of dicts (rows are positions). ``options`` are ScanConfig fields
    (``only=[...]``, ``drop=[...]``, ``max_length=2048``, ``split="all"`` or ``["train", "test"]``,
    ``tokenizer="path"``...). ``tokenizer`` may also be the tokenizer object itself (the
    ``processing_class`` you give ``DPOTrainer``; it is saved once into the cache so the scan can record it),
    and ``trainer_args`` a ``trl.DPOConfig`` (or a dict of its fields): ``max_length`` and
    ``truncation_mode`` come from it. ``out=None``: the outputs go to a temporary folder that is deleted
    when the returned Audit is garbage-collected (``audit.out_dir`` names it). ``progress``: None (lines to the ``pairaudit.progress`` logger), True (a
    live bar on stderr or in the notebook), False (nothing), or a callable ``progress(phase, done,
    total)``. ``log`` receives messages (default: the ``pairaudit`` logger at INFO). Returns an
    :class:`Audit`: findings (polars), report, ``clean`` (``datasets.Dataset`` with the source row in
    ``__pairaudit_row__``), ``keep_mask``.
    """
    cfg = config or ScanConfig()
    for key in options:
        if not hasattr(cfg, key):
            raise TypeError(f"scan() got an unknown option {key!r}{did_you_mean(key, vars(ScanConfig()))}")
    options = _trainer_objects(options, trainer_args)
    for key, value in options.items():
        setattr(cfg, key, value)
    if config_file:
        cfg = apply_config_file(cfg, load_config_file(config_file))
    if isinstance(cfg.split, (list, tuple)):  # recorded as text in report.json: "train,test"
        cfg.split = ",".join(str(s) for s in cfg.split)
    engine = get_engine(cfg.engine)
    temporary = out is None
    out_dir = Path(tempfile.mkdtemp(prefix="pairaudit-")) / "out" if temporary else Path(out)
    callback, stop = _progress(progress)
    try:
        with quiet_libraries():
            scanner = Scanner(cfg, log or logger.info, callback)
            audit = scanner.run(source, out_dir, engine=engine, finish=render_report)
    except BaseException:
        if temporary:
            shutil.rmtree(out_dir.parent, ignore_errors=True)
        raise
    finally:
        stop()
    if temporary:
        weakref.finalize(audit, shutil.rmtree, str(out_dir.parent), True)
    return audit


def _trainer_objects(options: dict[str, Any], trainer_args: Any) -> dict[str, Any]:
    """Options with a tokenizer object replaced by its saved folder and the limits of ``trainer_args``."""
    from pairaudit.trainer.user_objects import tokenizer_folder, trainer_options

    options = dict(options)
    tok = options.get("tokenizer")
    if isinstance(tok, Path):
        options["tokenizer"] = str(tok)
    elif tok is not None and not isinstance(tok, str):
        options["tokenizer"] = tokenizer_folder(tok, default_cache_dir())  # a clear error for anything else
    if trainer_args is not None:
        options.update(trainer_options(trainer_args, options))
    return options


def apply_decisions(out_dir: str | Path, *, source: Any = None, progress: Progress | bool | None = None,
                    log: Callable[[str], None] | None = None) -> Audit:
    """Re-apply ``OUT/decisions.jsonl`` by re-running the scan recorded in ``OUT/report.json``
    (model outputs come from the caches, so this is cheap). A scan of an in-memory object needs that
    object again: ``apply_decisions(out, source=ds)``."""
    out = Path(out_dir)
    report_path = out / "report.json"
    if not report_path.exists():
        raise InputError(f"{out} holds no report.json", fix="run `pairaudit scan SOURCE --out DIR` first")
    report = json.loads(report_path.read_text(encoding="utf-8"))
    cfg = ScanConfig(**report["config"])
    recorded = report["source"]
    if source is None:
        if recorded.get("path") is None:
            raise InputError(f"the scan in {out} read an in-memory {recorded.get('type', 'object')}, which cannot be "
                             "re-read from the output folder",
                             fix="pass it again: pairaudit.apply_decisions(out, source=obj) or "
                                 "Review(out).apply(source=obj)")
        source = recorded["path"]
    return scan(source, out, config=cfg, progress=progress, log=log)

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

import logging
import shutil
import tempfile
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pairaudit.config import (
    Progress,
    ScanConfig,
    default_cache_dir,
    load_config_file,
    no_progress,
    validate_config,
)
from pairaudit.engines import get_engine
from pairaudit.errors import InputError
from pairaudit.pipeline import Audit, Scanner
from pairaudit.plan import apply_config_file
from pairaudit.report import render_report
from pairaudit.report.progress import PlainProgress, ProgressDisplay, quiet_libraries
from pairaudit.report.terminal import terminal_safe
from pairaudit.schema import did_you_mean, read_report_json, rescan_fix

logger = logging.getLogger("pairaudit")
progress_logger = logging.getLogger("pairaudit.progress")


def _log(message: str) -> None:
    """Messages to the ``pairaudit`` logger, control characters escaped (they end up on a terminal)."""
    logger.info(terminal_safe(message))


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
            scanner = Scanner(cfg, log or _log, callback)
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
    object again: ``apply_decisions(out, source=ds)``. Without any decision to apply (and none applied
    before) it raises InputError and changes nothing. The trainer settings are asked for as the scan
    asked for them, so report.json's provenance (how the profile was chosen, which limits are the
    profile's defaults) stays as it was."""
    from pairaudit.decisions import FILENAME, load_decisions

    out = Path(out_dir)
    report_path = out / "report.json"
    if not report_path.exists():
        raise InputError(f"{out} holds no report.json", fix="run `pairaudit scan SOURCE --out DIR` first")
    report = read_report_json(report_path)
    known = set(vars(ScanConfig()))
    unknown = sorted(set(report["config"]) - known)
    if unknown:
        raise InputError(f"{report_path}: config holds unknown option(s) {', '.join(map(repr, unknown))} (written by "
                         "another pairaudit version, or damaged)", fix=rescan_fix(out))
    cfg = ScanConfig(**report["config"])
    validate_config(cfg)
    cfg = _as_requested(cfg, report)
    files = [out / FILENAME] + ([Path(cfg.decisions)] if cfg.decisions else [])
    pending = any(load_decisions(f) for f in files if f.exists())
    if not pending and not (report.get("decisions") or {}).get("total"):
        raise InputError(f"{out} has no review decisions ({out / FILENAME} is missing or empty): nothing to apply, "
                         "nothing changed",
                         fix="record decisions first: Review(OUT).decide(row, 'keep'|'drop'|'flip') (docs/review.md)")
    recorded = report["source"]
    if source is None:
        if recorded.get("path") is None:
            raise InputError(f"the scan in {out} read an in-memory {recorded.get('type', 'object')}, which cannot be "
                             "re-read from the output folder",
                             fix="pass it again: pairaudit.apply_decisions(out, source=obj) or "
                                 "Review(out).apply(source=obj)")
        source = recorded["path"]
    return scan(source, out, config=cfg, progress=progress, log=log)


def _as_requested(cfg: ScanConfig, report: dict[str, Any]) -> ScanConfig:
    """``cfg`` (report.json's config: the profile and limits made concrete) with the trainer and the
    limits asked for as the scan asked for them, where that gives the same profile today."""
    from pairaudit.errors import PairauditError
    from pairaudit.trainer.profiles import settings

    tr = (report.get("assumptions") or {}).get("trainer") or {}
    requested = tr.get("requested")
    if requested and requested != cfg.trainer:
        try:
            same = settings(requested).profile.name == cfg.trainer
        except PairauditError:
            same = False
        if same:
            cfg.trainer = requested
    for name in tr.get("from_profile_defaults") or []:
        if name in ("max_length", "max_prompt_length", "max_completion_length", "truncation_mode"):
            setattr(cfg, name, "auto")  # the recorded profile's default, as in the scan
    return cfg

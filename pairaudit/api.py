"""The Python API: ``pairaudit.scan``, ``pairaudit.open`` and ``pairaudit.apply_decisions``.

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
import warnings
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
    without_ray_options,
)
from pairaudit.engines import get_engine
from pairaudit.errors import InputError
from pairaudit.output_files import DECISIONS_FILE, FINDINGS, REPORT_JSON, SCORES
from pairaudit.pipeline import Audit, Scanner
from pairaudit.plan import apply_config_file
from pairaudit.report import render_report
from pairaudit.report.progress import PlainProgress, ProgressDisplay, quiet_libraries
from pairaudit.report.terminal import terminal_safe
from pairaudit.schema import did_you_mean, missing_report_fix, read_report_json, rescan_fix

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


def scan(source: Any, out: str | Path | None = "pairaudit-out", *, config: ScanConfig | str | Path | None = None,
         config_file: str | Path | None = None, progress: Progress | bool | None = None,
         log: Callable[[str], None] | None = None, trainer_args: Any = None, quiet: bool = False,
         fast: bool = False, fail_on: str | list[str] | None = None, allow_empty: bool = False,
         **options: Any) -> Audit:
    """Audit a preference dataset and write the cleaned data, dropped rows, findings, scores and a report.

    Args:
        source: a path (JSONL / JSON / Parquet file or folder, ``save_to_disk`` folder), a hub dataset id, a
            ``datasets.Dataset`` / ``DatasetDict`` / ``IterableDataset``, a polars or pandas DataFrame, a pyarrow
            Table, or an iterable of dicts (rows are positions).
        out: the output folder (outputs replaced atomically; nothing else in it is touched). ``None``: a
            temporary folder deleted when the returned Audit is garbage-collected (``audit.out_dir`` names it).
        config: a ``ScanConfig``, or the path of a TOML / JSON config file (keywords win over it).
        config_file: a config file applied on top of ``config``.
        progress: None (lines to the ``pairaudit.progress`` logger), True (a live bar on stderr or in the
            notebook), False (nothing), or a callable ``progress(phase, done, total)``.
        log: receives messages (default: the ``pairaudit`` logger at INFO).
        trainer_args: a ``trl.DPOConfig`` (or a dict of its fields): ``max_length`` and ``truncation_mode``
            come from it.
        quiet: no progress, messages or library warnings (``pairaudit scan -q``).
        fast: near duplicates from the static model alone (``embed_mode="static"``).
        fail_on: limits such as ``"duplicate_pair>5%"``: ``audit.exit_code`` 3 and a message in
            ``audit.messages`` when one is exceeded.
        allow_empty: exit code 0 instead of 5 when nothing usable came through.
        **options: every other option of ``pairaudit scan`` by its keyword, with the CLI's values: ``only=[...]``,
            ``drop=[...]``, ``max_length=2048`` (or ``"none"``), ``split="all"``, ``columns="chosen=a,rejected=b"``,
            ``set=["length_outlier.max_z=4"]``, ``tokenizer="path"`` (or the tokenizer object you give
            ``DPOTrainer``), ``workers=2``, ``engine="ray"`` ...

    Returns:
        An :class:`~pairaudit.audit.Audit`: ``findings`` (polars), ``report`` (report.json), ``clean`` (a
        ``datasets.Dataset`` of the kept rows with the source row in ``__pairaudit_row__``), ``keep_mask``,
        ``exit_code`` (as ``pairaudit scan``'s).

    Example:
        >>> import pairaudit
        >>> pairs = [{"prompt": "Name a colour.", "chosen": "Red.", "rejected": "Blue."},
        ...          {"prompt": "Name a colour.", "chosen": "Red.", "rejected": "Blue."},
        ...          {"prompt": "What is 2+2?", "chosen": "4", "rejected": " "}]
        >>> audit = pairaudit.scan(pairs, out=None, only=["duplicate_pair", "empty_response"], quiet=True)
        >>> audit.report["totals"]["input"], audit.report["totals"]["kept"]
        (3, 1)
        >>> sorted(audit.findings["check"].to_list())
        ['duplicate_pair', 'empty_response']
    """
    from pairaudit.options import check_fail_on, parse_fail_on

    cfg = _config(config, config_file, options, trainer_args, fast)
    limits = parse_fail_on([fail_on] if isinstance(fail_on, str) else fail_on)
    check_fail_on(limits, cfg)
    if quiet:
        progress, log = False, log or (lambda message: None)
    audit = _run(source, out, cfg, progress, log, quiet, _from_findings(source, out, cfg, log or _log))
    return _exit_code(audit, limits, allow_empty)


def _from_findings(source: Any, out: str | Path | None, cfg: ScanConfig, log: Callable[[str], None],
                   apply: bool = False) -> bool:
    """Whether this run applies decisions to ``out``'s own findings instead of scanning (``apply``, or a
    scan with ``decisions`` whose source and configuration are those of the scan in ``out``); says which."""
    from pairaudit.reapply import why_not

    if out is None or not (apply or cfg.decisions) or not (Path(out) / REPORT_JSON).exists():
        return False
    reason = why_not(Path(out), source, None if apply else cfg)
    if reason is None:
        log("applying the review decisions to the folder's own findings (no check or model re-run: the source "
            "and configuration are those of its scan)")
        return True
    log(f"rescanning to apply the review decisions: {reason}")
    return False


def _config(config: ScanConfig | str | Path | None, config_file: str | Path | None, options: dict[str, Any],
            trainer_args: Any, fast: bool) -> ScanConfig:
    """The run's ScanConfig: ``config`` (or a config file named by it or ``config_file``) with ``options``
    on top, in the CLI's spellings too."""
    if isinstance(config, (str, Path)):
        config, config_file = None, config
    cfg = config or ScanConfig()
    options = _cli_spellings(dict(options), fast)
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
    return cfg


def _cli_spellings(options: dict[str, Any], fast: bool) -> dict[str, Any]:
    """Options written as on the command line made ScanConfig values: ``set`` (CHECK.PARAM=VALUE strings)
    -> ``thresholds``, ``fast`` -> ``embed_mode="static"``, ``columns`` "NAME=COL,..." -> a dict, limits as
    text ("none", "512") -> None / int, check lists as "a,b" -> lists, Paths -> text."""
    from pairaudit.io.formats import parse_columns
    from pairaudit.options import limit, names, parse_set

    if "set" in options:
        given = options.pop("set")
        extra = parse_set([given] if isinstance(given, str) else given) if not isinstance(given, dict) else given
        options["thresholds"] = {**options.get("thresholds", {}), **extra}
    if fast:
        options["embed_mode"] = "static"
    if isinstance(options.get("columns"), str):
        options["columns"] = parse_columns(options["columns"])
    for key in ("max_length", "max_prompt_length", "max_completion_length"):
        if isinstance(options.get(key), str) and options[key] != "auto":
            options[key] = limit(options[key], "--" + key.replace("_", "-"))
    for key in ("only", "skip", "drop", "flag", "flip"):
        if isinstance(options.get(key), str):
            options[key] = names([options[key]])
    for key in ("decisions", "policy", "reference", "reward_model", "embedder"):
        if isinstance(options.get(key), Path):
            options[key] = str(options[key])
    return options


def _run(source: Any, out: str | Path | None, cfg: ScanConfig, progress: Progress | bool | None,
         log: Callable[[str], None] | None, quiet: bool, from_findings: bool = False) -> Audit:
    from pairaudit.reapply import fingerprint, reapply, write_fingerprint

    engine = get_engine(cfg.engine)
    temporary = out is None
    out_dir = Path(tempfile.mkdtemp(prefix="pairaudit-")) / "out" if temporary else Path(out)
    record = fingerprint(source, cfg)  # before the scan makes the limits concrete

    def finish(folder: Path) -> None:
        render_report(folder)
        write_fingerprint(folder, record)

    callback, stop = _progress(progress)
    try:
        with quiet_libraries(errors_only=quiet), warnings.catch_warnings():
            if quiet:
                warnings.simplefilter("ignore")
            if from_findings:
                return reapply(out_dir, source, cfg, finish=render_report)
            scanner = Scanner(cfg, log or _log, callback)
            audit = scanner.run(source, out_dir, engine=engine, finish=finish)
    except BaseException:
        if temporary:
            shutil.rmtree(out_dir.parent, ignore_errors=True)
        raise
    finally:
        stop()
    if temporary:
        weakref.finalize(audit, shutil.rmtree, str(out_dir.parent), True)
    return audit


def _exit_code(audit: Audit, limits: list[tuple[str, float]], allow_empty: bool) -> Audit:
    """``audit.exit_code`` as ``pairaudit scan`` exits: ``allow_empty`` and the ``fail_on`` limits applied."""
    from pairaudit import exit_codes

    if allow_empty and audit.exit_code == exit_codes.EMPTY:
        audit.exit_code = exit_codes.OK
    audit.exit_code, messages = exit_codes.fail_on_code(audit.exit_code, audit.report, limits)
    audit.messages.extend(messages)
    return audit


def open_folder(out_dir: str | Path) -> Audit:
    """The :class:`Audit` of a scan's output folder, read back without rescanning (``pairaudit.open``):
    report, findings, scores, clean, dropped, keep_mask and exit_code as the scan returned them."""
    from pairaudit import exit_codes

    out = Path(out_dir)
    report_path = out / REPORT_JSON
    if not report_path.is_file():
        raise InputError(f"{out} holds no report.json: it is not a pairaudit output folder",
                         expected="the --out folder of `pairaudit scan`",
                         fix=f"run `pairaudit scan SOURCE --out {out}` first, or pass the folder it wrote")
    report = read_report_json(report_path)
    for name in (FINDINGS, SCORES):
        if not (out / name).is_file():
            raise InputError(f"{out} has report.json but no {name} (an interrupted or partial copy)",
                             fix=f"copy the whole folder, or run `pairaudit scan SOURCE --out {out}` again")
    return Audit(out, report, None, exit_codes.scan_code(report), list(report.get("problems", [])))


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
                    log: Callable[[str], None] | None = None, rescan: bool = False) -> Audit:
    """Re-apply ``OUT/decisions.jsonl``: when the source is the one scanned and unchanged, to the folder's
    own findings (no check or model re-runs: rows move between clean and dropped, with the same outputs
    as a rescan, :mod:`pairaudit.reapply`); otherwise (or with ``rescan=True``) by re-running the scan
    recorded in ``OUT/report.json``. The log says which. A scan of an in-memory object needs that
    object again: ``apply_decisions(out, source=ds)``. Without any decision to apply (and none applied
    before) it raises InputError and changes nothing. The trainer settings are asked for as the scan
    asked for them, so report.json's provenance (how the profile was chosen, which limits are the
    profile's defaults) stays as it was."""
    from pairaudit.decisions import load_decisions

    out = Path(out_dir)
    report_path = out / REPORT_JSON
    if not report_path.exists():
        raise InputError(f"{out} holds no report.json", fix=missing_report_fix(out))
    report = read_report_json(report_path)
    known = set(vars(ScanConfig()))
    unknown = sorted(set(report["config"]) - known)
    if unknown:
        raise InputError(f"{report_path}: config holds unknown option(s) {', '.join(map(repr, unknown))} (written by "
                         "another pairaudit version, or damaged)", fix=rescan_fix(out))
    cfg = without_ray_options(ScanConfig(**report["config"]))
    validate_config(cfg)
    cfg = _as_requested(cfg, report)
    files = [out / DECISIONS_FILE] + ([Path(cfg.decisions)] if cfg.decisions else [])
    pending = any(load_decisions(f) for f in files if f.exists())
    if not pending and not (report.get("decisions") or {}).get("total"):
        raise InputError(f"{out} has no review decisions ({out / DECISIONS_FILE} is missing or empty): nothing to apply, "
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
    if not rescan and _from_findings(source, out, cfg, log or _log, apply=True):
        return _run(source, out, cfg, progress, log, False, from_findings=True)
    return scan(source, out, config=cfg, progress=progress, log=log)


def _as_requested(cfg: ScanConfig, report: dict[str, Any]) -> ScanConfig:
    """``cfg`` (report.json's config: the profile and limits made concrete) with the trainer and the
    limits asked for as the scan asked for them, where that gives the same profile today, and every
    threshold a stage clamped (``checks.<check>.clamped``) at the value the scan asked for."""
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
    for check, info in (report.get("checks") or {}).items():  # thresholds a stage clamped: as asked
        for key, c in ((info or {}).get("clamped") or {}).items():
            if key in (cfg.thresholds.get(check) or {}) and isinstance(c, dict) and "requested" in c:
                cfg.thresholds[check][key] = c["requested"]
    return cfg

"""`pairaudit scan`: audit a source into an output folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from pairaudit import exit_codes
from pairaudit.cli.console import echo, fail, finish_run, progress_display, silenced
from pairaudit.cli.scan_options import (
    AllowEmptyOpt,
    BatchSizeOpt,
    BetaOpt,
    ColumnsOpt,
    ConfigOpt,
    DecisionsOpt,
    DeviceOpt,
    DropOpt,
    EmbedBatchSizeOpt,
    EmbedderOpt,
    EmbedModeOpt,
    EngineOpt,
    ExplicitPromptOpt,
    FailOnOpt,
    FastOpt,
    FlagOpt,
    FlipOpt,
    FormatOpt,
    MaxCompletionLengthOpt,
    MaxLengthOpt,
    MaxPromptLengthOpt,
    OnlyOpt,
    OutOpt,
    PolicyOpt,
    PrecisionOpt,
    QuietOpt,
    RayAddressOpt,
    RayShardsOpt,
    RayWorkersOpt,
    ReferenceMaxRowsOpt,
    ReferenceOpt,
    RewardModelOpt,
    SetOpt,
    SkipOpt,
    SourceArg,
    SplitOpt,
    SubsetOpt,
    TokenizerOpt,
    TrainerOpt,
    TruncationModeOpt,
    TrustRemoteCodeOpt,
    WorkersOpt,
)
from pairaudit.errors import PairauditError
from pairaudit.options import check_fail_on, limit, names, parse_fail_on, parse_set

if TYPE_CHECKING:
    from pairaudit.config import ScanConfig


def scan(
    source: SourceArg,
    out: OutOpt = Path("pairaudit-out"),
    format: FormatOpt = None,
    columns: ColumnsOpt = None,
    split: SplitOpt = None,
    subset: SubsetOpt = None,
    tokenizer: TokenizerOpt = None,
    trainer: TrainerOpt = "trl",
    max_length: MaxLengthOpt = None,
    max_prompt_length: MaxPromptLengthOpt = None,
    max_completion_length: MaxCompletionLengthOpt = None,
    truncation_mode: TruncationModeOpt = None,
    only: OnlyOpt = None,
    skip: SkipOpt = None,
    drop: DropOpt = None,
    flag: FlagOpt = None,
    flip: FlipOpt = None,
    explicit_prompt: ExplicitPromptOpt = False,
    set_: SetOpt = None,
    config: ConfigOpt = None,
    embedder: EmbedderOpt = None,
    embed_batch_size: EmbedBatchSizeOpt = 64,
    fast: FastOpt = False,
    embed_mode: EmbedModeOpt = "auto",
    precision: PrecisionOpt = "auto",
    reference: ReferenceOpt = None,
    reward_model: RewardModelOpt = None,
    policy: PolicyOpt = None,
    beta: BetaOpt = 0.1,
    reference_max_rows: ReferenceMaxRowsOpt = None,
    device: DeviceOpt = "auto",
    decisions: DecisionsOpt = None,
    fail_on: FailOnOpt = None,
    allow_empty: AllowEmptyOpt = False,
    batch_size: BatchSizeOpt = 1000,
    workers: WorkersOpt = None,
    engine: EngineOpt = "local",
    ray_address: RayAddressOpt = None,
    ray_workers: RayWorkersOpt = None,
    ray_shards: RayShardsOpt = None,
    trust_remote_code: TrustRemoteCodeOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Audit SOURCE and write clean/dropped data, findings, scores and a report to --out."""
    options = dict(locals())
    try:
        limits = parse_fail_on(fail_on)
        cfg = _config(options, limits)
        from pairaudit.api import scan as run_scan

        progress, log, display = progress_display(quiet)
        try:
            with silenced(quiet):
                audit = run_scan(source, out, config=cfg, progress=progress, log=log)
        finally:
            if display is not None:
                display.stop()
    except (PairauditError, OSError) as exc:
        fail(exc)
    except KeyboardInterrupt as exc:
        if getattr(exc, "outputs_committed", False):
            echo(f"interrupted after the new outputs were committed to {out}")
        else:
            echo("interrupted: no outputs were changed")
        raise typer.Exit(exit_codes.INTERRUPTED) from None
    finish_run(audit, quiet=quiet, allow_empty=allow_empty, limits=limits)


def _config(o: dict[str, Any], limits: list[tuple[str, float]]) -> ScanConfig:
    """The scan's configuration from the command's option values (a config file fills what flags left at default)."""
    from pairaudit.config import ScanConfig
    from pairaudit.io.formats import parse_columns

    cfg = ScanConfig(
        format=o["format"], columns=parse_columns(o["columns"]), split=o["split"], subset=o["subset"],
        tokenizer=o["tokenizer"], trainer=o["trainer"], max_length=limit(o["max_length"], "--max-length"),
        max_prompt_length=limit(o["max_prompt_length"], "--max-prompt-length"),
        max_completion_length=limit(o["max_completion_length"], "--max-completion-length"),
        truncation_mode=o["truncation_mode"] or "auto", batch_size=o["batch_size"], only=names(o["only"]) or None,
        skip=names(o["skip"]), drop=names(o["drop"]), flag=names(o["flag"]), flip=names(o["flip"]),
        explicit_prompt=o["explicit_prompt"], thresholds=parse_set(o["set_"]), embedder=o["embedder"],
        embed_mode="static" if o["fast"] else o["embed_mode"], embed_batch_size=o["embed_batch_size"],
        precision=o["precision"], reference=o["reference"], reward_model=o["reward_model"], policy=o["policy"],
        beta=o["beta"], reference_max_rows=o["reference_max_rows"], device=o["device"],
        decisions=str(o["decisions"]) if o["decisions"] else None, trust_remote_code=o["trust_remote_code"],
        engine=o["engine"], ray_address=o["ray_address"], ray_workers=o["ray_workers"], ray_shards=o["ray_shards"],
        workers=o["workers"])
    if o["config"]:
        from pairaudit.config import load_config_file
        from pairaudit.plan import apply_config_file

        cfg = apply_config_file(cfg, load_config_file(o["config"]))
    check_fail_on(limits, cfg)
    return cfg

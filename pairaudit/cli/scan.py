"""`pairaudit scan`: audit a source into an output folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pairaudit import exit_codes
from pairaudit.cli.console import echo, fail, finish_run, progress_display, silenced
from pairaudit.cli.options import CHECKS, check_fail_on, limit, names, parse_fail_on, parse_set
from pairaudit.errors import PairauditError


def scan(
    source: Annotated[str, typer.Argument(metavar="SOURCE", help="A .jsonl / .jsonl.gz / .json / .parquet file or "
                                          "folder, a save_to_disk folder, or a Hugging Face dataset id.")],
    out: Annotated[Path, typer.Option("--out", "-o", metavar="DIR",
                                      help="Output folder (created; files replaced atomically).")]
    = Path("pairaudit-out"),
    format: Annotated[str | None, typer.Option("--format", metavar="FORMAT", help="Force the format: standard, "
                      "conversational, implicit_conversational, implicit_hh, pretokenized or pairwise_label.")]
    = None,
    columns: Annotated[str | None, typer.Option("--columns", metavar="NAME=COL,...", help="Map source columns to "
                       "canonical names: comma-separated NAME=COLUMN pairs, e.g. chosen=a,rejected=b.")] = None,
    split: Annotated[str | None, typer.Option("--split", metavar="SPLIT", help="Split(s) of a dataset dict / "
                     "hub dataset: a name, 'all', or a list 'train,test' (or 'train+test') scanned into one output "
                     "with split/split_row columns and the split_leakage check. Default: train if present.")]
    = None,
    subset: Annotated[str | None, typer.Option(metavar="NAME", help="Hub dataset configuration (subset).")] = None,
    tokenizer: Annotated[str | None, typer.Option(metavar="PATH|ID", help="Training tokenizer: HF folder or id, "
                         "or a .gguf file. Default: the bundled SmolLM2-135M-Instruct (lengths are then in its "
                         "tokens, not your model's).")] = None,
    trainer: Annotated[str, typer.Option(metavar="NAME", help="Trainer whose tokenization, truncation and row "
                       "filters to reproduce: trl (the installed TRL; the newest known if none), trl==VERSION, "
                       "or a profile: trl-1.14.2, trl-1.9, trl-0.29, trl-0.27.2 (= trl-legacy), trl-0.20.")]
    = "trl",
    max_length: Annotated[str | None, typer.Option(metavar="N|none", help="Trainer max_length (prompt + "
                          "completion); none = no limit. Default: the trainer's (TRL: 1024).")] = None,
    max_prompt_length: Annotated[str | None, typer.Option(metavar="N|none", help="Trainer max_prompt_length "
                                 "(TRL < 0.29 only; its default 512).")] = None,
    max_completion_length: Annotated[str | None, typer.Option(metavar="N|none", help="Trainer "
                                     "max_completion_length (TRL < 0.29 only; default none).")] = None,
    truncation_mode: Annotated[str | None, typer.Option(metavar="MODE", help="keep_start or keep_end: which end "
                               "of prompt + completion max_length keeps. Default: the trainer's (TRL >= 0.29: "
                               "keep_start; older: keep_end).")] = None,
    only: Annotated[list[str] | None, typer.Option(metavar=CHECKS, help="Run only these checks (comma-separated "
                    "or repeated; see `pairaudit checks`).")] = None,
    skip: Annotated[list[str] | None, typer.Option(metavar=CHECKS, help="Do not run these checks.")] = None,
    drop: Annotated[list[str] | None, typer.Option(metavar=CHECKS, help="Drop rows with findings of these "
                    "checks.")] = None,
    flag: Annotated[list[str] | None, typer.Option(metavar=CHECKS, help="Only flag (keep) rows with findings of "
                    "these checks.")] = None,
    flip: Annotated[list[str] | None, typer.Option(metavar=CHECKS, help="Keep rows with findings of these checks "
                    "but swap chosen and rejected in the cleaned output (e.g. likely_flipped).")] = None,
    explicit_prompt: Annotated[bool, typer.Option("--explicit-prompt", metavar="", help="Implicit-prompt data: "
                               "write a prompt column (up to the last assistant turn) into the cleaned output, "
                               "so the trainer does not split at the responses' common prefix (see "
                               "prefix_pair, split_word).")] = False,
    set_: Annotated[list[str] | None, typer.Option("--set", metavar="CHECK.PARAM=VALUE", help="Threshold override, "
                    "e.g. length_outlier.max_z=4 (see `pairaudit checks --verbose`).")] = None,
    config: Annotated[Path | None, typer.Option(metavar="FILE", help="TOML/JSON config file; command-line flags "
                      "win over it.")] = None,
    embedder: Annotated[str | None, typer.Option(metavar="PATH|ID", help="sentence-transformers model for "
                        "near-duplicates. Default: the bundled all-MiniLM-L6-v2.")] = None,
    embed_batch_size: Annotated[int, typer.Option(metavar="N", help="Embedding batch size.")] = 64,
    fast: Annotated[bool, typer.Option("--fast", help="Near duplicates from the static (model2vec) embedding "
                    "model alone: no transformer is loaded (same as --embed-mode static).")] = False,
    embed_mode: Annotated[str, typer.Option(metavar="MODE", help="Near duplicates: auto (= hybrid: a static model "
                          "distilled from the embedder finds candidates, the embedder decides), static, or "
                          "transformer (the embedder embeds every text).")] = "auto",
    precision: Annotated[str, typer.Option("--precision", metavar="PRECISION", help="auto, fp32, bf16 or fp16 (auto: models "
                         "bf16 on CUDA and bf16-capable CPUs; the embedder fp32 on CUDA).")] = "auto",
    reference: Annotated[str | None, typer.Option(metavar="PATH|ID", help="Reference causal LM (folder, id or "
                         ".gguf) whose log-probs and hidden states join likely_flipped (on CPU only when given; on "
                         "CUDA the bundled SmolLM2 joins by default). 'default' = the bundled SmolLM2.")] = None,
    reward_model: Annotated[str | None, typer.Option(metavar="PATH|ID", help="Sequence-classification reward "
                            "model.")] = None,
    policy: Annotated[str | None, typer.Option(metavar="PATH", help="Policy checkpoint: real DPO logits for "
                      "dpo_overflow_risk.")] = None,
    beta: Annotated[float, typer.Option(metavar="FLOAT", help="DPO beta.")] = 0.1,
    reference_max_rows: Annotated[int | None, typer.Option(metavar="N", help="Score only the first N rows (in "
                                  "input order) with the reference model; later rows get no flip score.")] = None,
    device: Annotated[str, typer.Option("--device", metavar="DEVICE", help="auto, cpu, cuda or cuda:N.")] = "auto",
    decisions: Annotated[Path | None, typer.Option(metavar="FILE", help="Review decisions file to apply "
                         "(OUT/decisions.jsonl is always applied).")] = None,
    fail_on: Annotated[list[str] | None, typer.Option(metavar="CHECK>RATE", help="Exit 3 when a check's row rate "
                       "exceeds a limit, e.g. 'duplicate_pair>0.05' or 'likely_flipped>10%'.")] = None,
    allow_empty: Annotated[bool, typer.Option("--allow-empty", metavar="", help="Exit 0 even when no record could "
                           "be read or every record was dropped (status \"empty\", exit 5 otherwise).")] = False,
    batch_size: Annotated[int, typer.Option(metavar="N", help="Rows per streaming batch.")] = 1000,
    workers: Annotated[int | None, typer.Option(metavar="N", help="Processes that read, check and embed the "
                       "batches (local engine; default: one per CPU; 1: all in this process; inputs under "
                       "10,000 rows run in this process).")] = None,
    engine: Annotated[str, typer.Option("--engine", metavar="ENGINE", help="local, or ray: the same stages spread over a Ray "
                                                           "cluster (docs/scale.md).")]
    = "local",
    ray_address: Annotated[str | None, typer.Option(metavar="ADDRESS", help="Ray cluster address (default: "
                           "start a local Ray).")] = None,
    ray_workers: Annotated[int | None, typer.Option(metavar="N", help="Ray actors (default: one per cluster "
                           "CPU).")] = None,
    trust_remote_code: Annotated[bool, typer.Option("--trust-remote-code", metavar="", help="Allow custom model code (off "
                                 "by default).")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", metavar="", help="Silent: no progress, messages or "
                     "summary (errors and failed checks are still reported).")] = False,
) -> None:
    """Audit SOURCE and write clean/dropped data, findings, scores and a report to --out."""
    from pairaudit.config import ScanConfig
    from pairaudit.io.formats import parse_columns

    try:
        limits = parse_fail_on(fail_on)
        cfg = ScanConfig(
            format=format, columns=parse_columns(columns), split=split, subset=subset, tokenizer=tokenizer,
            trainer=trainer, max_length=limit(max_length, "--max-length"),
            max_prompt_length=limit(max_prompt_length, "--max-prompt-length"),
            max_completion_length=limit(max_completion_length, "--max-completion-length"),
            truncation_mode=truncation_mode or "auto", batch_size=batch_size, only=names(only) or None, skip=names(skip),
            drop=names(drop), flag=names(flag), flip=names(flip), explicit_prompt=explicit_prompt,
            thresholds=parse_set(set_), embedder=embedder,
            embed_mode="static" if fast else embed_mode, embed_batch_size=embed_batch_size, precision=precision,
            reference=reference, reward_model=reward_model,
            policy=policy, beta=beta, reference_max_rows=reference_max_rows, device=device,
            decisions=str(decisions) if decisions else None, trust_remote_code=trust_remote_code, engine=engine,
            ray_address=ray_address, ray_workers=ray_workers, workers=workers)
        if config:
            from pairaudit.config import load_config_file
            from pairaudit.plan import apply_config_file

            cfg = apply_config_file(cfg, load_config_file(config))
        check_fail_on(limits, cfg)
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

"""`pairaudit trace`: map a failed training run's step back to its source rows."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pairaudit import exit_codes
from pairaudit.cli.console import fail, log_to
from pairaudit.errors import PairauditError
from pairaudit.options import CHECKS, names
from pairaudit.output_files import TRACE_JSON
from pairaudit.report import terminal


def trace_cmd(
    run_dir: Annotated[Path, typer.Argument(help="The trainer's output_dir (trainer_state.json, checkpoint-*/, "
                                                 "pairaudit-record/).")],
    data: Annotated[str, typer.Option("--data", help="The training data, as for scan: the source, or the --audit "
                                             "folder's clean output (rows are reported in source row numbers).")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Output folder for trace.json, the scan and "
                   "report.html (default: the --audit folder, else RUN_DIR/pairaudit-trace).")] = None,
    audit: Annotated[Path | None, typer.Option(help="An existing `pairaudit scan` output of the source (else the "
                     "scan runs into --out); the run may have trained on its clean output (audit.clean): the run's "
                     "logs say which.")] = None,
    settings: Annotated[Path | None, typer.Option("--settings", help="JSON/TOML file of trainer settings (seed, "
                        "gradient_accumulation_steps, world_size, max_length, ...).")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", metavar="KEY=VALUE", help="One trainer setting KEY=VALUE, e.g. "
                    "--set gradient_accumulation_steps=4 --set resumed_at=300.")] = None,
    trust_pickle: Annotated[bool, typer.Option("--trust-pickle", help="Fully unpickle a training_args.bin that the safe "
                                               "reader refuses (a pickle: loading it can run code). Not needed for "
                                               "ordinary runs.")]
    = False,
    no_record: Annotated[bool, typer.Option("--no-record", help="Ignore pairaudit-record/ and reconstruct the order.")]
    = False,
    step: Annotated[int | None, typer.Option(help="Trace this optimizer step instead of the first failure.")] = None,
    policy: Annotated[str | None, typer.Option(help="Policy checkpoint (default: the last checkpoint-N before the "
                      "failure).")] = None,
    reference: Annotated[str | None, typer.Option(help="The model the run started from (DPO reference): needed for the "
                         "DPO logit.")] = None,
    device: Annotated[str, typer.Option(help="auto, cpu, cuda, cuda:N.")] = "auto",
    precision: Annotated[str, typer.Option(help="Scoring precision: fp32 (default), bf16, fp16, auto.")] = "fp32",
    jump_z: Annotated[float, typer.Option(help="Robust z-score above which a loss / grad_norm jump counts as the "
                      "failure.")] = 10.0,
    skip: Annotated[list[str] | None, typer.Option(metavar=CHECKS, help="Checks the scan skips (e.g. "
                                                   "near_duplicate_pair).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print trace.json instead of the terminal view.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
) -> None:
    """Map the first non-finite (or jumping) step of a transformers / TRL run to its source rows, explain them and
    diagnose the run (data, learning rate, precision, beta / clipping, broken weights) with the fixes in order.
    Exit 6 when the rows cannot be named reliably (the first line says what to pass)."""
    from pairaudit.trace.run import trace
    from pairaudit.trace.settings import parse_assignments

    try:
        res = trace(run_dir, data, out=out, audit=audit, settings_file=settings,
                    assignments=parse_assignments(set_), trust_pickle=trust_pickle, use_record=not no_record,
                    step=step, policy=policy, reference=reference, device=device, precision=precision, jump_z=jump_z,
                    skip=names(skip), log=(lambda m: None) if quiet or as_json
                    else log_to(False))
    except (PairauditError, OSError) as exc:
        fail(exc)
    if as_json:  # JSON escapes for what a terminal must not get: still valid JSON
        terminal.echo(terminal.json_safe((res.out_dir / TRACE_JSON).read_text(encoding="utf-8")), nl=False)
    elif not quiet:
        from pairaudit.trace.render import print_trace

        print_trace(res.doc, terminal.safe_console(), res.out_dir)
    if res.doc.get("status") == "unreliable":
        raise typer.Exit(exit_codes.TRACE_UNRELIABLE)

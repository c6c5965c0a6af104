"""The ``pairaudit`` command line (typer). Heavy modules are imported inside commands."""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from pairaudit import __version__, exit_codes
from pairaudit.errors import ConfigError, PairauditError, file_system_error
from pairaudit.report.terminal import echo, terminal_safe


def _escape_usage_error(exc: Exception) -> None:
    """A usage error (unknown option or command, bad value) repeats what was typed: escaped for the terminal."""
    if isinstance(getattr(exc, "message", None), str):
        exc.message = terminal_safe(exc.message)  # type: ignore[attr-defined]


class _SafeCommand(typer.core.TyperCommand):
    def make_context(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201
        try:
            return super().make_context(*args, **kwargs)
        except Exception as exc:
            _escape_usage_error(exc)
            raise


class _SafeGroup(typer.core.TyperGroup):
    def make_context(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201
        try:
            return super().make_context(*args, **kwargs)
        except Exception as exc:
            _escape_usage_error(exc)
            raise

    def resolve_command(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201
        try:
            return super().resolve_command(*args, **kwargs)
        except Exception as exc:
            _escape_usage_error(exc)
            raise


app = typer.Typer(
    cls=_SafeGroup,
    name="pairaudit",
    help="Audit and clean preference datasets (prompt / chosen / rejected) before DPO, RLHF, ORPO or KTO "
         "training. " + exit_codes.HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _names(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def _parse_set(values: list[str] | None) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for v in values or []:
        m = re.fullmatch(r"([a-z_]+)\.([a-z_]+)=(.+)", v.strip())
        if not m:
            raise ConfigError(f"--set {v!r} is not CHECK.PARAM=VALUE", expected="e.g. --set too_long.max_z=4")
        try:
            value: object = json.loads(m.group(3))
        except json.JSONDecodeError:
            value = m.group(3)
        out.setdefault(m.group(1), {})[m.group(2)] = value
    return out


def _parse_fail_on(values: list[str] | None) -> list[tuple[str, float]]:
    out = []
    for v in values or []:
        m = re.fullmatch(r"\s*([a-z_]+)\s*>\s*(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*", v)
        rate = float(m.group(2)) / (100 if m.group(3) else 1) if m else -1.0
        if not m or not 0 <= rate <= 1:
            raise ConfigError(f"--fail-on {v!r} is not CHECK>RATE with a rate between 0 and 1 (or 0% and 100%)",
                              expected="e.g. --fail-on 'duplicate_pair>0.05' or 'duplicate_pair>5%'")
        out.append((m.group(1), rate))
    return out


def _check_fail_on(limits: list[tuple[str, float]], cfg: object) -> None:
    """Before scanning: every --fail-on gate names a check that will run (a gate on a check that does not
    run would always pass)."""
    from pairaudit.plan import build_plan

    plan = build_plan(cfg)  # type: ignore[arg-type]
    for check, _ in limits:
        if check not in plan.infos:
            raise ConfigError(f"--fail-on names unknown check {check!r}", expected=", ".join(plan.infos),
                              fix="run `pairaudit checks` to list them")
        if check not in plan.enabled:
            raise ConfigError(f"--fail-on {check} gates a check that does not run in this scan, so it would "
                              "always pass", fix=f"enable it (e.g. --only ...,{check}) or drop the gate")


def _limit(value: str | None, option: str) -> int | str | None:
    """A length option: not given = "auto" (the trainer's default), "none" = no limit, else a positive int."""
    from pairaudit.trainer.profiles import AUTO, parse_limit

    return AUTO if value is None else parse_limit(value, option)


def _version(value: bool) -> None:
    if value:
        echo(f"pairaudit {__version__}")
        raise typer.Exit()


@app.callback()
def main(ctx: typer.Context,
         version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, metavar="",
                                               help="Print the version and exit.")] = False) -> None:
    """pairaudit: find the pairs that make preference training diverge, before training."""
    from pairaudit.report.terminal import install_guards

    ctx.call_on_close(install_guards())  # libraries' warnings and log lines escaped too, until the command ends


def _echo(message: str) -> None:
    """A line on stderr; control characters (from dataset text, paths, messages) are shown escaped, never sent."""
    echo(message, err=True)


def _log(quiet: bool):  # noqa: ANN202
    return (lambda m: None) if quiet else (lambda m: _echo(f"pairaudit: {m}"))


def _progress_display(quiet: bool):  # noqa: ANN202
    """(progress callback, log function, display to stop or None): a live display on a terminal,
    plain status lines (at most one per phase every 5 s) otherwise, nothing with -q."""
    if quiet:
        return False, _log(True), None
    if not sys.stderr.isatty():
        from pairaudit.report.progress import PlainProgress

        plain = PlainProgress(_log(False))
        return plain, _log(False), plain
    from pairaudit.report.progress import ProgressDisplay

    display = ProgressDisplay()
    return display, (lambda m: display.log(terminal_safe(f"pairaudit: {m}"))), display


@contextlib.contextmanager
def _silenced(quiet: bool):  # noqa: ANN202
    """-q: library warnings and progress bars off too (restored afterwards)."""
    if not quiet:
        yield
        return
    import warnings

    from pairaudit.report.progress import quiet_libraries

    with warnings.catch_warnings(), quiet_libraries(errors_only=True):
        warnings.simplefilter("ignore")
        yield


def _fail(exc: PairauditError) -> None:
    _echo(f"error: {exc}")
    raise typer.Exit(exc.exit_code)


CHECKS = "CHECK[,CHECK...]"


@app.command(cls=_SafeCommand)
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
    split: Annotated[str | None, typer.Option(metavar="SPLIT", help="Split(s) of a dataset dict / "
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
    precision: Annotated[str, typer.Option(metavar="PRECISION", help="auto, fp32, bf16 or fp16 (auto: bf16 on "
                         "CUDA and bf16-capable CPUs).")] = "auto",
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
    device: Annotated[str, typer.Option(metavar="DEVICE", help="auto, cpu, cuda or cuda:N.")] = "auto",
    decisions: Annotated[Path | None, typer.Option(metavar="FILE", help="Review decisions file to apply "
                         "(OUT/decisions.jsonl is always applied).")] = None,
    fail_on: Annotated[list[str] | None, typer.Option(metavar="CHECK>RATE", help="Exit 3 when a check's row rate "
                       "exceeds a limit, e.g. 'duplicate_pair>0.05' or 'likely_flipped>10%'.")] = None,
    allow_empty: Annotated[bool, typer.Option("--allow-empty", metavar="", help="Exit 0 even when no record could "
                           "be read or every record was dropped (status \"empty\", exit 5 otherwise).")] = False,
    batch_size: Annotated[int, typer.Option(metavar="N", help="Rows per streaming batch.")] = 1000,
    engine: Annotated[str, typer.Option(metavar="ENGINE", help="local, or ray: the same stages spread over a Ray "
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
        limits = _parse_fail_on(fail_on)
        cfg = ScanConfig(
            format=format, columns=parse_columns(columns), split=split, subset=subset, tokenizer=tokenizer,
            trainer=trainer, max_length=_limit(max_length, "--max-length"),
            max_prompt_length=_limit(max_prompt_length, "--max-prompt-length"),
            max_completion_length=_limit(max_completion_length, "--max-completion-length"),
            truncation_mode=truncation_mode or "auto", batch_size=batch_size, only=_names(only) or None, skip=_names(skip),
            drop=_names(drop), flag=_names(flag), flip=_names(flip), explicit_prompt=explicit_prompt,
            thresholds=_parse_set(set_), embedder=embedder,
            embed_mode="static" if fast else embed_mode, embed_batch_size=embed_batch_size, precision=precision,
            reference=reference, reward_model=reward_model,
            policy=policy, beta=beta, reference_max_rows=reference_max_rows, device=device,
            decisions=str(decisions) if decisions else None, trust_remote_code=trust_remote_code, engine=engine,
            ray_address=ray_address, ray_workers=ray_workers)
        if config:
            from pairaudit.config import load_config_file
            from pairaudit.plan import apply_config_file

            cfg = apply_config_file(cfg, load_config_file(config))
        _check_fail_on(limits, cfg)
        from pairaudit.api import scan as run_scan

        progress, log, display = _progress_display(quiet)
        try:
            with _silenced(quiet):
                audit = run_scan(source, out, config=cfg, progress=progress, log=log)
        finally:
            if display is not None:
                display.stop()
    except PairauditError as exc:
        _fail(exc)
    except OSError as exc:  # disk full, a size limit, no permission: what and where, never a traceback
        _fail(file_system_error(exc))
    except KeyboardInterrupt as exc:
        if getattr(exc, "outputs_committed", False):
            _echo(f"interrupted after the new outputs were committed to {out}")
        else:
            _echo("interrupted: no outputs were changed")
        raise typer.Exit(exit_codes.INTERRUPTED) from None
    if not quiet:
        from pairaudit.report.summary import print_summary

        print_summary(audit)
    for problem in audit.messages:
        _echo(f"warning: {problem}")
    code = exit_codes.OK if allow_empty and audit.exit_code == exit_codes.EMPTY else audit.exit_code
    code, messages = exit_codes.fail_on_code(code, audit.report, limits)
    for message in messages:
        _echo(message)
    raise typer.Exit(code)


@app.command("checks", cls=_SafeCommand)
def list_checks(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", metavar="", help="Also thresholds, the full "
                       "description and why each default action is what it is.")] = False,
    as_json: Annotated[bool, typer.Option("--json", metavar="", help="Everything, as JSON.")] = False,
) -> None:
    """List the checks: one line each (name, kind, default action, on by default, summary)."""
    from pairaudit.catalog import all_checks, merged_thresholds
    from pairaudit.report.checklist import check_lines, verbose_blocks

    infos = all_checks()
    if as_json:
        echo(json.dumps({n: {"description": i.description, "kind": i.kind, "default_action": i.default_action,
                                   "default_enabled": i.default_enabled, "thresholds": merged_thresholds(n),
                                   "extra": i.extra, "why": i.why} for n, i in infos.items()}, indent=2))
        return
    import shutil

    width = max(60, shutil.get_terminal_size((80, 24)).columns)
    thresholds = {n: merged_thresholds(n) for n in infos}
    for line in (verbose_blocks if verbose else check_lines)(infos, thresholds, width):
        echo(line)


@contextlib.contextmanager
def _damaged_report(out: Path) -> Iterator[None]:
    """A report.json that passed the schema but holds wrong values deeper down is still exit 2, naming it."""
    from pairaudit.errors import InputError

    try:
        yield
    except (AttributeError, TypeError, KeyError, ValueError, IndexError) as exc:
        raise InputError(f"{out / 'report.json'} cannot be read back ({type(exc).__name__}: {str(exc)[:200]}): "
                         "it was changed or damaged", fix="re-run `pairaudit scan SOURCE --out DIR` to rewrite it"
                         ) from exc


@app.command(cls=_SafeCommand)
def report(out: Annotated[Path, typer.Argument(help="An output folder written by `pairaudit scan`.")]) -> None:
    """Re-render OUT/report.html from the output folder."""
    from pairaudit.report import render_report

    if not (out / "report.json").exists():
        _fail(ConfigError(f"{out} holds no report.json", fix="run `pairaudit scan SOURCE --out DIR` first"))
    try:
        with _damaged_report(out):
            echo(render_report(out))
    except PairauditError as exc:
        _fail(exc)
    except OSError as exc:  # disk full, a size limit, no permission: what and where, never a traceback
        _fail(file_system_error(exc))


@app.command(cls=_SafeCommand)
def show(out: Annotated[Path, typer.Argument(help="An output folder.")],
         row: Annotated[int, typer.Argument(help="Row number (as in findings.parquet).")]) -> None:
    """Print one pair with its findings and a word diff of chosen vs rejected."""
    from pairaudit.report import show_row
    from pairaudit.report.terminal import safe_console

    try:
        with _damaged_report(out):
            show_row(out, row, safe_console())
    except PairauditError as exc:
        _fail(exc)
    except OSError as exc:  # disk full, a size limit, no permission: what and where, never a traceback
        _fail(file_system_error(exc))


@app.command(cls=_SafeCommand)
def apply(out: Annotated[Path, typer.Argument(help="An output folder holding decisions.jsonl.")],
          quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Silent: no progress, messages or "
                                                                     "summary.")] = False) -> None:
    """Re-apply review decisions (OUT/decisions.jsonl) to rewrite clean/dropped outputs."""
    from pairaudit.api import apply_decisions

    progress, log, display = _progress_display(quiet)
    try:
        with _silenced(quiet):
            audit = apply_decisions(out, progress=progress, log=log)
    except PairauditError as exc:
        _fail(exc)
    except OSError as exc:  # disk full, a size limit, no permission: what and where, never a traceback
        _fail(file_system_error(exc))
    finally:
        if display is not None:
            display.stop()
    if not quiet:
        from pairaudit.report.summary import print_summary

        print_summary(audit)


@app.command("trace", cls=_SafeCommand)
def trace_cmd(
    run_dir: Annotated[Path, typer.Argument(help="The trainer's output_dir (trainer_state.json, checkpoint-*/, "
                                                 "pairaudit-record/).")],
    data: Annotated[str, typer.Option("--data", help="The training data, as for scan (rows are its row numbers).")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Output folder for trace.json, the scan and "
                   "report.html (default: the --audit folder, else RUN_DIR/pairaudit-trace).")] = None,
    audit: Annotated[Path | None, typer.Option(help="An existing `pairaudit scan` output of the same data (else the "
                     "scan runs into --out).")] = None,
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
                    skip=_names(skip), log=(lambda m: None) if quiet or as_json
                    else _log(False))
    except PairauditError as exc:
        _fail(exc)
    except OSError as exc:  # disk full, a size limit, no permission: what and where, never a traceback
        _fail(file_system_error(exc))
    if as_json:
        from pairaudit.report.terminal import json_safe

        echo(json_safe((res.out_dir / "trace.json").read_text(encoding="utf-8")), nl=False)
    elif not quiet:
        from pairaudit.report.terminal import safe_console
        from pairaudit.trace.render import print_trace

        print_trace(res.doc, safe_console(), res.out_dir)
    if res.doc.get("status") == "unreliable":
        raise typer.Exit(exit_codes.TRACE_UNRELIABLE)


if __name__ == "__main__":  # pragma: no cover
    app()

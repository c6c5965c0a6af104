"""The ``pairaudit`` command line (typer). Heavy modules are imported inside commands."""

from __future__ import annotations

import contextlib
import json
import re
import sys
from pathlib import Path
from typing import Annotated

import typer

from pairaudit import __version__
from pairaudit.errors import ConfigError, PairauditError

app = typer.Typer(
    name="pairaudit",
    help="Audit and clean preference datasets (prompt / chosen / rejected) before DPO, RLHF, ORPO or KTO "
         "training. Exit codes: 0 ok, 2 usage or input error, 3 a --fail-on limit was exceeded, "
         "4 a check or model failed (outputs are still written and the report says which).",
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
        m = re.fullmatch(r"\s*([a-z_]+)\s*>\s*([0-9.]+)(%?)\s*", v)
        if not m:
            raise ConfigError(f"--fail-on {v!r} is not CHECK>RATE", expected="e.g. --fail-on 'duplicate_pair>0.05' or '>5%'")
        rate = float(m.group(2)) / (100 if m.group(3) else 1)
        out.append((m.group(1), rate))
    return out


def _version(value: bool) -> None:
    if value:
        typer.echo(f"pairaudit {__version__}")
        raise typer.Exit()


@app.callback()
def main(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                               help="Print the version and exit.")] = False) -> None:
    """pairaudit: find the pairs that make preference training diverge, before training."""


def _log(quiet: bool):  # noqa: ANN202
    return (lambda m: None) if quiet else (lambda m: typer.echo(f"pairaudit: {m}", err=True))


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
    return display, (lambda m: display.log(f"pairaudit: {m}")), display


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
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(exc.exit_code)


@app.command()
def scan(
    source: Annotated[str, typer.Argument(help="A .jsonl/.jsonl.gz/.json/.parquet file or folder, a save_to_disk "
                                               "folder, or a Hugging Face dataset id.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder (created; files replaced atomically).")]
    = Path("pairaudit-out"),
    format: Annotated[str | None, typer.Option("--format", help="Force the format: standard, conversational, "
                      "implicit_conversational, implicit_hh, pretokenized, pairwise_label.")] = None,
    columns: Annotated[str | None, typer.Option("--columns", help="Column mapping canonical=source, e.g. "
                       "'prompt=question,chosen=response_a,rejected=response_b'.")] = None,
    split: Annotated[str | None, typer.Option(help="Split(s) of a dataset dict / hub dataset: a name, 'all', or a list "
                     "'train,test' (or 'train+test') scanned into one output with split/split_row columns and "
                     "the split_leakage check. Default: train if present.")] = None,
    subset: Annotated[str | None, typer.Option(help="Hub dataset configuration (subset).")] = None,
    tokenizer: Annotated[str | None, typer.Option(help="Training tokenizer: HF folder or id, or a .gguf file. "
                         "Default: the bundled SmolLM2-135M-Instruct GGUF.")] = None,
    max_length: Annotated[int | None, typer.Option(help="Trainer max_length (prompt + completion).")] = 1024,
    max_prompt_length: Annotated[int | None, typer.Option(help="Trainer max_prompt_length.")] = 512,
    max_completion_length: Annotated[int | None, typer.Option(help="Trainer max_completion_length.")] = None,
    truncation_mode: Annotated[str, typer.Option(help="keep_end or keep_start (TRL DPOConfig).")] = "keep_end",
    only: Annotated[list[str] | None, typer.Option(help="Run only these checks (comma-separated or repeated).")]
    = None,
    skip: Annotated[list[str] | None, typer.Option(help="Do not run these checks.")] = None,
    drop: Annotated[list[str] | None, typer.Option(help="Drop rows with findings of these checks.")] = None,
    flag: Annotated[list[str] | None, typer.Option(help="Only flag (keep) rows with findings of these checks.")]
    = None,
    flip: Annotated[list[str] | None, typer.Option(help="Keep rows with findings of these checks but swap chosen "
                    "and rejected in the cleaned output (e.g. likely_flipped).")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="Threshold override CHECK.PARAM=VALUE "
                    "(see `pairaudit checks`).")] = None,
    config: Annotated[Path | None, typer.Option(help="TOML/JSON config file; command-line flags win over it.")]
    = None,
    embedder: Annotated[str | None, typer.Option(help="sentence-transformers folder or id for near-duplicates. "
                        "Default: bundled all-MiniLM-L6-v2.")] = None,
    embed_batch_size: Annotated[int, typer.Option(help="Embedding batch size.")] = 64,
    precision: Annotated[str, typer.Option(help="auto (bf16 on CUDA / bf16-capable CPUs), fp32, bf16 or fp16.")]
    = "auto",
    reference: Annotated[str | None, typer.Option(help="Reference causal LM (folder, id or .gguf); enables "
                         "likely_flipped. 'default' = bundled SmolLM2.")] = None,
    reward_model: Annotated[str | None, typer.Option(help="Sequence-classification reward model.")] = None,
    policy: Annotated[str | None, typer.Option(help="Policy checkpoint: real DPO logits for dpo_overflow_risk.")]
    = None,
    beta: Annotated[float, typer.Option(help="DPO beta.")] = 0.1,
    reference_max_rows: Annotated[int | None, typer.Option(help="Score only the first N rows (in input order) "
                                  "with the reference model; later rows get no flip score.")] = None,
    device: Annotated[str, typer.Option(help="auto, cpu, cuda, cuda:N.")] = "auto",
    decisions: Annotated[Path | None, typer.Option(help="Review decisions file to apply (OUT/decisions.jsonl "
                         "is always applied).")] = None,
    fail_on: Annotated[list[str] | None, typer.Option(help="Exit 3 when a check's row rate exceeds a limit, "
                       "e.g. 'duplicate_pair>0.05' or 'likely_flipped>10%'.")] = None,
    batch_size: Annotated[int, typer.Option(help="Rows per streaming batch.")] = 1000,
    engine: Annotated[str, typer.Option(help="local (default) or ray: the same stages on Ray Data.")] = "local",
    ray_address: Annotated[str | None, typer.Option(help="Ray cluster address (default: start a local Ray).")]
    = None,
    ray_workers: Annotated[int | None, typer.Option(help="Ray actor pool size (default: cluster CPUs - 1).")]
    = None,
    trust_remote_code: Annotated[bool, typer.Option(help="Allow custom model code (off by default).")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Silent: no progress, messages or summary "
                     "(errors and failed checks are still reported).")] = False,
) -> None:
    """Audit SOURCE and write clean/dropped data, findings, scores and a report to --out."""
    from pairaudit.config import ScanConfig
    from pairaudit.io.formats import parse_columns

    try:
        limits = _parse_fail_on(fail_on)
        cfg = ScanConfig(
            format=format, columns=parse_columns(columns), split=split, subset=subset, tokenizer=tokenizer,
            max_length=max_length, max_prompt_length=max_prompt_length, max_completion_length=max_completion_length,
            truncation_mode=truncation_mode, batch_size=batch_size, only=_names(only) or None, skip=_names(skip),
            drop=_names(drop), flag=_names(flag), flip=_names(flip), thresholds=_parse_set(set_), embedder=embedder,
            embed_batch_size=embed_batch_size, precision=precision, reference=reference, reward_model=reward_model,
            policy=policy, beta=beta, reference_max_rows=reference_max_rows, device=device,
            decisions=str(decisions) if decisions else None, trust_remote_code=trust_remote_code, engine=engine,
            ray_address=ray_address, ray_workers=ray_workers)
        from pairaudit.api import scan as run_scan

        progress, log, display = _progress_display(quiet)
        try:
            with _silenced(quiet):
                audit = run_scan(source, out, config=cfg, config_file=config, progress=progress, log=log)
        finally:
            if display is not None:
                display.stop()
    except PairauditError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        typer.echo("interrupted: no outputs were changed", err=True)
        raise typer.Exit(130) from None
    if not quiet:
        from pairaudit.report.summary import print_summary

        print_summary(audit)
    code = audit.exit_code
    for problem in audit.messages:
        typer.echo(f"warning: {problem}", err=True)
    for check, limit in limits:
        info = audit.report["checks"].get(check)
        if info is None:
            _fail(ConfigError(f"--fail-on names unknown check {check!r}"))
        if info["rate"] > limit:
            typer.echo(f"fail-on: {check} rate {info['rate']:.4f} > {limit}", err=True)
            code = max(code, 3) if code != 4 else code
    raise typer.Exit(code)


@app.command("checks")
def list_checks(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List every check: name, kind, default action, thresholds and description."""
    from pairaudit.checks.registry import all_checks, merged_thresholds

    infos = all_checks()
    if as_json:
        typer.echo(json.dumps({n: {"description": i.description, "kind": i.kind, "default_action": i.default_action,
                                   "default_enabled": i.default_enabled, "thresholds": merged_thresholds(n),
                                   "extra": i.extra, "why": i.why} for n, i in infos.items()}, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="pairaudit checks", show_lines=True)
    for col in ("check", "kind", "default", "on by default", "thresholds", "description / why"):
        table.add_column(col, overflow="fold")
    for name, info in infos.items():
        th = ", ".join(f"{k}={v}" for k, v in merged_thresholds(name).items()) or "-"
        on = "yes" if info.default_enabled else "opt-in"
        if info.extra:
            on += f" (needs pairaudit[{info.extra}])"
        table.add_row(name, info.kind, info.default_action, on, th, f"{info.description}\n[dim]why: {info.why}[/dim]")
    Console().print(table)


@app.command()
def report(out: Annotated[Path, typer.Argument(help="An output folder written by `pairaudit scan`.")]) -> None:
    """Re-render OUT/report.html from the output folder."""
    from pairaudit.report import render_report

    if not (out / "report.json").exists():
        _fail(ConfigError(f"{out} holds no report.json", fix="run `pairaudit scan SOURCE --out DIR` first"))
    typer.echo(str(render_report(out)))


@app.command()
def show(out: Annotated[Path, typer.Argument(help="An output folder.")],
         row: Annotated[int, typer.Argument(help="Row number (as in findings.parquet).")]) -> None:
    """Print one pair with its findings and a word diff of chosen vs rejected."""
    from rich.console import Console

    from pairaudit.report import show_row

    try:
        show_row(out, row, Console())
    except PairauditError as exc:
        _fail(exc)


@app.command()
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
    finally:
        if display is not None:
            display.stop()
    if not quiet:
        from pairaudit.report.summary import print_summary

        print_summary(audit)


if __name__ == "__main__":  # pragma: no cover
    app()

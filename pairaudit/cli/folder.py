"""The small commands: `checks` (what a scan can find) and those on an output folder: `report`, `show`,
`apply`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from pairaudit.cli.console import damaged_report, fail, progress_display, silenced
from pairaudit.errors import ConfigError, PairauditError, file_system_error
from pairaudit.output_files import REPORT_JSON
from pairaudit.report import terminal


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
        terminal.echo(json.dumps({n: {"description": i.description, "kind": i.kind, "default_action": i.default_action,
                                   "default_enabled": i.default_enabled, "summary": i.summary,
                                   "thresholds": merged_thresholds(n),
                                   "extra": i.extra, "why": i.why} for n, i in infos.items()}, indent=2))
        return
    import shutil

    width = max(60, shutil.get_terminal_size((80, 24)).columns)
    thresholds = {n: merged_thresholds(n) for n in infos}
    for line in (verbose_blocks if verbose else check_lines)(infos, thresholds, width):
        terminal.echo(line)


def report(out: Annotated[Path, typer.Argument(help="An output folder written by `pairaudit scan`.")]) -> None:
    """Re-render OUT/report.html from the output folder."""
    from pairaudit.report import render_report

    if not (out / REPORT_JSON).exists():
        from pairaudit.schema import missing_report_fix

        fail(ConfigError(f"{out} holds no report.json", fix=missing_report_fix(out)))
    try:
        with damaged_report(out):
            terminal.echo(render_report(out))
    except OSError as exc:  # report writes into OUT and has no --out: the fix says so (file_system_error)
        fail(file_system_error(exc, out, "writing report.html", in_place=True))
    except PairauditError as exc:
        fail(exc)


def show(out: Annotated[Path, typer.Argument(help="An output folder.")],
         row: Annotated[int | None, typer.Argument(help="Row number (as in findings.parquet).")] = None,
         check: Annotated[str | None, typer.Option("--check", metavar="CHECK", help="List this check's rows, "
                          "most severe first (rows it drops, then by score), a page at a time.")] = None,
         page: Annotated[int, typer.Option("--page", metavar="N", min=1, help="Page of --check's rows.")] = 1,
         per_page: Annotated[int, typer.Option("--per-page", metavar="N", min=1, help="Rows per page of "
                             "--check.")] = 20) -> None:
    """Print one pair with its findings and a word diff of chosen vs rejected (marked [-chosen-]{+rejected+}
    in plain text when not on a terminal), or with --check the rows of one check, most severe first."""
    from pairaudit.report import show_row
    from pairaudit.report.console import show_check

    try:
        with damaged_report(out):
            if check is not None:
                show_check(out, check, page, per_page, terminal.safe_console())
            elif row is None:
                raise ConfigError("pairaudit show needs a ROW or --check CHECK",
                                  fix=f"`pairaudit show {out} 12` (one pair) or `pairaudit show {out} --check "
                                      "too_long` (a check's rows)")
            else:
                show_row(out, row, terminal.safe_console())
    except (PairauditError, OSError) as exc:
        fail(exc)


def apply(out: Annotated[Path, typer.Argument(help="An output folder holding decisions.jsonl.")],
          quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Silent: no progress, messages or "
                                                                     "summary.")] = False,
          allow_empty: Annotated[bool, typer.Option("--allow-empty", metavar="", help="Exit 0 even when every "
                                 "record ends up dropped (status \"empty\", exit 5 otherwise), as for scan.")]
          = False) -> None:
    """Re-apply review decisions (OUT/decisions.jsonl) to rewrite clean/dropped outputs. Exit codes as scan's."""
    from pairaudit.api import apply_decisions
    from pairaudit.cli.console import finish_run

    progress, log, display = progress_display(quiet)
    try:
        with silenced(quiet):
            audit = apply_decisions(out, progress=progress, log=log)
    except (PairauditError, OSError) as exc:
        fail(exc)
    finally:
        if display is not None:
            display.stop()
    finish_run(audit, quiet=quiet, allow_empty=allow_empty)

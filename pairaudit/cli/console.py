"""What the commands print: stderr lines, progress displays, quiet mode, errors as exit codes."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import typer

from pairaudit.errors import PairauditError


def echo(message: str) -> None:
    """A line on stderr; control characters from dataset text are shown escaped, never sent."""
    from pairaudit.report.terminal import terminal_safe

    typer.echo(terminal_safe(message), err=True)


def log_to(quiet: bool):  # noqa: ANN202
    return (lambda m: None) if quiet else (lambda m: echo(f"pairaudit: {m}"))


def progress_display(quiet: bool):  # noqa: ANN202
    """(progress callback, log function, display to stop or None): a live display on a terminal,
    plain status lines (at most one per phase every 5 s) otherwise, nothing with -q."""
    if quiet:
        return False, log_to(True), None
    if not sys.stderr.isatty():
        from pairaudit.report.progress import PlainProgress

        plain = PlainProgress(log_to(False))
        return plain, log_to(False), plain
    from pairaudit.report.progress import ProgressDisplay

    display = ProgressDisplay()
    from pairaudit.report.terminal import terminal_safe

    return display, (lambda m: display.log(terminal_safe(f"pairaudit: {m}"))), display


@contextlib.contextmanager
def silenced(quiet: bool):  # noqa: ANN202
    """-q: library warnings and progress bars off too (restored afterwards)."""
    if not quiet:
        yield
        return
    import warnings

    from pairaudit.report.progress import quiet_libraries

    with warnings.catch_warnings(), quiet_libraries(errors_only=True):
        warnings.simplefilter("ignore")
        yield


def fail(exc: PairauditError) -> None:
    echo(f"error: {exc}")
    raise typer.Exit(exc.exit_code)


@contextlib.contextmanager
def damaged_report(out: Path) -> Iterator[None]:
    """A report.json that passed the schema but holds wrong values deeper down is still exit 2, naming it."""
    from pairaudit.errors import InputError

    try:
        yield
    except (AttributeError, TypeError, KeyError, ValueError, IndexError) as exc:
        raise InputError(f"{out / 'report.json'} cannot be read back ({type(exc).__name__}: {str(exc)[:200]}): "
                         "it was changed or damaged", fix="re-run `pairaudit scan SOURCE --out DIR` to rewrite it"
                         ) from exc

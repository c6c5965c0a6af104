"""What the commands print: stderr lines, progress displays, quiet mode, errors as exit codes. Every line goes
through :mod:`pairaudit.report.terminal` (control characters escaped), usage errors included."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import typer

from pairaudit.errors import PairauditError, file_system_error
from pairaudit.report import terminal


def echo(message: str) -> None:
    """A line on stderr; control characters (from dataset text, paths, messages) are shown escaped, never sent."""
    terminal.echo(message, err=True)


def _escape_usage_error(exc: Exception) -> None:
    """A usage error (unknown option or command, bad value) repeats what was typed: escaped for the terminal."""
    if isinstance(getattr(exc, "message", None), str):
        exc.message = terminal.terminal_safe(exc.message)  # type: ignore[attr-defined]


class _EscapedUsageErrors:
    """Mixin for typer's command classes: a usage error raised while parsing is escaped before it is shown."""

    def make_context(self, *args, **kwargs):
        try:
            return super().make_context(*args, **kwargs)  # type: ignore[misc]
        except Exception as exc:
            _escape_usage_error(exc)
            raise


class SafeCommand(_EscapedUsageErrors, typer.core.TyperCommand):
    """A command whose usage errors are escaped (``app.command(cls=SafeCommand)``)."""


class SafeGroup(_EscapedUsageErrors, typer.core.TyperGroup):
    """The command group, with usage errors (an unknown command) escaped."""

    def resolve_command(self, *args, **kwargs):
        try:
            return super().resolve_command(*args, **kwargs)
        except Exception as exc:
            _escape_usage_error(exc)
            raise


def log_to(quiet: bool):
    return (lambda m: None) if quiet else (lambda m: echo(f"pairaudit: {m}"))


def progress_display(quiet: bool):
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
    return display, (lambda m: display.log(terminal.terminal_safe(f"pairaudit: {m}"))), display


@contextlib.contextmanager
def silenced(quiet: bool):
    """-q: library warnings and progress bars off too (restored afterwards)."""
    if not quiet:
        yield
        return
    import warnings

    from pairaudit.report.progress import quiet_libraries

    with warnings.catch_warnings(), quiet_libraries(errors_only=True):
        warnings.simplefilter("ignore")
        yield


def fail(exc: PairauditError | OSError) -> None:
    """Exit with the error's code after one message: a PairauditError, or an OSError (disk full, a size
    limit, no permission) said as what and where, never a traceback."""
    err = file_system_error(exc) if isinstance(exc, OSError) else exc
    echo(f"error: {err}")
    raise typer.Exit(err.exit_code)


@contextlib.contextmanager
def damaged_report(out: Path) -> Iterator[None]:
    """A report.json that passed the schema but holds wrong values deeper down is still exit 2, naming it."""
    from pairaudit.errors import InputError
    from pairaudit.schema import rescan_fix

    try:
        yield
    except (AttributeError, TypeError, KeyError, ValueError, IndexError) as exc:
        raise InputError(f"{out / 'report.json'} cannot be read back ({type(exc).__name__}: {str(exc)[:200]}): "
                         "it was changed or damaged", fix=rescan_fix(out)
                         ) from exc


def finish_run(audit: Any, *, quiet: bool, allow_empty: bool, limits: list[tuple[str, float]] = ()) -> NoReturn:
    """The end of `scan` and `apply`, one for both: the summary (unless ``quiet``), a warning per problem, and
    the exit code (``exit_codes``: 5 when nothing usable came through unless ``allow_empty``; ``--fail-on``)."""
    from pairaudit import exit_codes

    if not quiet:
        from pairaudit.report.summary import print_summary

        print_summary(audit)
    for problem in audit.messages:
        echo(f"warning: {problem}")
    code = exit_codes.OK if allow_empty and audit.exit_code == exit_codes.EMPTY else audit.exit_code
    if code == exit_codes.EMPTY:
        echo(f"exit {code}: nothing usable came through (report status \"empty\"); fix: if an empty result is "
             "expected, pass --allow-empty to exit 0")
    code, messages = exit_codes.fail_on_code(code, audit.report, list(limits))
    for message in messages:
        echo(message)
    raise typer.Exit(code)

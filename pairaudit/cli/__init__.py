"""The ``pairaudit`` command line (typer): one module per command group, registered here in the order
``--help`` lists them. Heavy modules are imported inside commands, so ``pairaudit --help`` stays instant."""

from __future__ import annotations

from typing import Annotated

import typer

from pairaudit import exit_codes
from pairaudit.cli.console import SafeCommand, SafeGroup
from pairaudit.cli.folder import apply, list_checks, report, show
from pairaudit.cli.scan import scan
from pairaudit.cli.trace import trace_cmd
from pairaudit.versions import __version__

app = typer.Typer(
    cls=SafeGroup,
    name="pairaudit",
    help="Audit and clean preference datasets (prompt / chosen / rejected) before DPO, RLHF, ORPO or KTO "
         "training. " + exit_codes.HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"pairaudit {__version__}")  # the version: nothing to escape
        raise typer.Exit()


@app.callback()
def main(ctx: typer.Context,
         version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, metavar="",
                                               help="Print the version and exit.")] = False) -> None:
    """pairaudit: find the pairs that make preference training diverge, before training."""
    from pairaudit.report.terminal import install_guards

    ctx.call_on_close(install_guards())  # libraries' warnings and log lines escaped too, until the command ends


app.command(cls=SafeCommand)(scan)
app.command("checks", cls=SafeCommand)(list_checks)
app.command(cls=SafeCommand)(report)
app.command(cls=SafeCommand)(show)
app.command(cls=SafeCommand)(apply)
app.command("trace", cls=SafeCommand)(trace_cmd)

"""The hot commands (``hot=True`` in the table), dispatched without assembling the Typer app.

Importing Typer (and building the app) costs more than a cached ``rig plan`` itself, so a plain,
valid command line of a hot command is read here, by the same table, and runs the same body with
the same options, error handler and exit codes as under Typer (a test checks both read every
such line alike). Anything else — help, a mistake, other commands — returns None and goes to Typer.
"""

from __future__ import annotations

from rigcli.cli.argv import match
from rigcli.cli.error_handler import finish
from rigcli.cli.invoke import run_call


def dispatch(argv: list[str]) -> int | None:
    """Run a hot command line and return its exit code, or None when Typer should handle it."""
    call = match(argv)
    if call is None:
        return None
    return finish(run_call(call, argv=argv))


__all__ = ["dispatch"]

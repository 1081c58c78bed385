"""Entry point. `rig --version`, completion requests and the command table's hot commands are
answered before the Typer app is imported."""

from __future__ import annotations

import sys

from rigcli._version import __version__
from rigcli.cli import signalled  # first: see main

INTERRUPTED = 130  # a KeyboardInterrupt no signal of ours raised: project code's own, or Python's


def main(argv: list[str] | None = None) -> int:
    # First of all: a signal from here on ends the command 128 + its number (cli/signalled.py).
    try:
        signalled.catch()
        code = _command(list(sys.argv[1:] if argv is None else argv))
        late = signalled.exit_code(code)  # a signal the command's own code did not account for
        if late is not None:
            code = _interrupted(late)
        signalled.finished()  # the last statement a first signal could interrupt
    except BaseException as exc:  # what got past the command's own error handler: a signal in between
        if signalled.first() is None and not isinstance(exc, KeyboardInterrupt):
            raise
        code = _interrupted(signalled.exit_code(0) or INTERRUPTED)
        signalled.finished()
    return code


def _command(args: list[str]) -> int:
    if args in (["--version"], ["-V"], ["version"]):
        # The fast path: no Typer, Rich or engine import (the start-up budget).

        sys.stdout.write(__version__ + "\n")
        return 0
    from rigcli.speed.gc_policy import freeze_at_exit, paused_while_loading

    freeze_at_exit()
    if args[:1] == ["__complete"]:
        from rigcli.cli.complete import main as complete

        return complete(args[1:])
    # Until a command runs project code it only loads: collecting would free nothing (see gc_policy).
    with paused_while_loading():
        from rigcli.cli.fast import dispatch

        code = dispatch(args)
        if code is not None:
            return code
        from rigcli.cli.app import run

        return run(args)


def _interrupted(code: int) -> int:
    """One line, ``interrupted``, and ``code``."""
    from rigcli.cli.error_handler import interrupted

    return interrupted(code)


if __name__ == "__main__":
    raise SystemExit(main())

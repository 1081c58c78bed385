"""Entry point. `rig --version`, completion requests and the command table's hot commands are
answered before the Typer app is imported."""

from __future__ import annotations

import sys

from rigcli._version import __version__


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--version"], ["-V"], ["version"]):
        # The fast path: no Typer, Rich or engine import (DESIGN §9 budget).

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


if __name__ == "__main__":
    raise SystemExit(main())

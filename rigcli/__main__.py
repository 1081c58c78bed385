"""Entry point. `rig --version`, completion requests and the command table's hot commands are
answered before the Typer app is imported."""

from __future__ import annotations

import atexit
import gc
import sys

# What is alive when rig exits is everything it imported and loaded; the collections the
# interpreter runs while shutting down only walk it (~10 ms of a 120 ms no-op apply). Frozen,
# it is skipped. Harmless in a host that imports this module: it too is exiting then.
atexit.register(gc.freeze)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--version"], ["-V"], ["version"]):
        # The fast path: no Typer, Rich or engine import (DESIGN §9 budget).
        from rigcli._version import __version__

        sys.stdout.write(__version__ + "\n")
        return 0
    if args[:1] == ["__complete"]:
        from rigcli.cli.complete import main as complete

        return complete(args[1:])
    # Until something runs, a command only allocates what lives until it ends (modules, the config,
    # the plan): collecting finds nothing to free. Session resumes collection when a handler, a
    # hook or a command is about to run (it hands over to an event loop then).
    collecting = gc.isenabled()
    gc.disable()
    try:
        from rigcli.cli.fast import dispatch

        code = dispatch(args)
        if code is not None:
            return code
        from rigcli.cli.app import run

        return run(args)
    finally:
        if collecting:
            # Session froze what loading made; a host that calls main() again must get it back.
            gc.unfreeze()
            gc.enable()


if __name__ == "__main__":
    raise SystemExit(main())

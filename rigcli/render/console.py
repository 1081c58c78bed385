"""Rich consoles for stdout and stderr that respect NO_COLOR and never emit ANSI codes off a terminal."""

from __future__ import annotations

import os

from rigcli.speed.lazy_modules import lazy_module

# Not typing.TYPE_CHECKING: no_color() is asked by `rig logs TASK` answered from the cache, which imports no
# typing (rigcli/__init__.py); mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import TextIO

    from rich.console import Console

if TYPE_CHECKING:
    import rich.console as rich_console
else:
    rich_console = lazy_module("rich.console")


# Off a terminal nothing should wrap: tables size to their content and paths stay whole for grep.
PIPE_WIDTH = 4096


def make_console(stream: TextIO, *, force_terminal: bool = False) -> rich_console.Console:
    """``force_terminal``: draw as on a terminal even when ``stream`` is not one (``--progress tty``)."""

    terminal = force_terminal or _isatty(stream)
    width = None if terminal else PIPE_WIDTH
    return rich_console.Console(
        file=stream,
        force_terminal=terminal,
        # NO_COLOR means no escape codes at all here, not only no colours: no bold, no cursor moves.
        color_system="auto" if terminal and not no_color() else None,
        highlight=False,
        width=width,
        emoji=False,
    )


def no_color() -> bool:
    return bool(os.environ.get("NO_COLOR"))


def stdout_console() -> Console:
    from rigcli.streams import real_stdout  # here: no_color() alone is asked where nothing else is

    return make_console(real_stdout())


def stderr_console(*, force_terminal: bool = False) -> Console:
    from rigcli.streams import real_stderr

    return make_console(real_stderr(), force_terminal=force_terminal)


def live_enabled(stream: TextIO | None = None) -> bool:
    """A live view needs a terminal that can redraw, and neither RIG_RENDER=0 nor NO_COLOR."""
    if os.environ.get("RIG_RENDER") == "0" or no_color() or os.environ.get("TERM") in ("dumb", "unknown"):
        return False
    from rigcli.streams import real_stderr

    return _isatty(stream or real_stderr())


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


__all__ = ["PIPE_WIDTH", "live_enabled", "make_console", "no_color", "stderr_console", "stdout_console"]

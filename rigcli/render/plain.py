"""Whether output goes through Rich: a terminal gets Rich, anything else the Rich-free writer (speed/tables.py)."""

from __future__ import annotations

import sys

# Not typing.TYPE_CHECKING: rig ls answered from the cache writes through here and imports no typing; mypy
# treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import TextIO


def _real(name: str) -> TextIO:
    """``streams.real_stdout()``/``real_stderr()``; without importing the relay's module (select,
    threading, termios) when it is not imported yet, for then no relay runs."""
    streams = sys.modules.get("rigcli.streams")
    if streams is not None:
        real: TextIO = streams.real_stdout() if name == "stdout" else streams.real_stderr()
        return real
    stream: TextIO = getattr(sys, name)
    return _unwrapped(stream)


def _unwrapped(stream: TextIO) -> TextIO:
    """``streams.real_stream``: the stream under a capture proxy (none is made before streams is imported)."""
    while hasattr(stream, "rig_real_stream"):
        stream = stream.rig_real_stream
    return stream


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def plain_stdout() -> TextIO | None:
    """stdout when it is not a terminal (write plain text to it), else None (use Rich)."""
    stream = _real("stdout")
    return None if is_terminal(stream) else stream


def plain_stderr() -> TextIO | None:
    stream = _real("stderr")
    return None if is_terminal(stream) else stream


__all__ = ["is_terminal", "plain_stderr", "plain_stdout"]

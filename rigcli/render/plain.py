"""Whether output goes through Rich: a terminal gets Rich, anything else the Rich-free writer (speed/tables.py)."""

from __future__ import annotations

from typing import TextIO

from rigcli.streams import real_stderr, real_stdout


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def plain_stdout() -> TextIO | None:
    """stdout when it is not a terminal (write plain text to it), else None (use Rich)."""
    stream = real_stdout()
    return None if is_terminal(stream) else stream


def plain_stderr() -> TextIO | None:
    stream = real_stderr()
    return None if is_terminal(stream) else stream


__all__ = ["is_terminal", "plain_stderr", "plain_stdout"]

"""The process's own output streams, past the engine's capture of handler output."""

from __future__ import annotations

import sys
from typing import TextIO


def real_stream(stream: TextIO) -> TextIO:
    """The stream under the engine's handler-output capture proxy (it exposes ``rig_real_stream``).

    Renderers are event listeners and events fire inside handlers, so writing through the proxy
    would turn our own lines into more log.output events, without end; and a prompt written
    through it would be swallowed as task output while we wait for the answer.
    """
    while hasattr(stream, "rig_real_stream"):
        stream = stream.rig_real_stream
    return stream


def real_stderr() -> TextIO:
    return real_stream(sys.stderr)


def real_stdout() -> TextIO:
    return real_stream(sys.stdout)


__all__ = ["real_stderr", "real_stdout", "real_stream"]

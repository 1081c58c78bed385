"""Where --json and --json-stream output goes: fd 1 pointed at stderr while a command that loads the engine
runs (its document goes to the real stdout, kept aside: ``output.py`` writes it), and the stream's
start and end.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rigcli.cli import output
from rigcli.cli.output import error_line, summary_line, write_stream_line
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    import json
else:
    json = lazy_module("json")


@contextlib.contextmanager
def json_stdout() -> Iterator[None]:
    """While the block runs, fd 1 is stderr and ``emit_json`` writes to the real stdout."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no stdout at all: nothing to keep clean
        yield
        return
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(saved)
        yield
        return
    output.hold_document(io.TextIOWrapper(io.FileIO(saved, "w"), encoding="utf-8"))
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()  # what was written meanwhile belongs to stderr
        # fd 1 is not given back: an embedding host that needs it restores its own descriptors.
        document = output.hold_document(None)
        with contextlib.suppress(OSError, ValueError):  # a reader that went away: already reported
            if document is not None:
                document.close()


def begin_stream() -> None:
    """Keep the real stdout for the stream, before fd 1 is pointed at stderr (``json_stdout``)."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    try:
        output.hold_stream(io.TextIOWrapper(io.FileIO(os.dup(1), "w"), encoding="utf-8", line_buffering=True))
    except OSError:
        output.hold_stream(None)


def error_summary(message: str, exit_code: int) -> None:
    """A failed command line's whole stream when it failed before any stream began (a usage error)."""

    line = json.dumps(error_line(message, exit_code), ensure_ascii=False, separators=(",", ":"))
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def end_stream(exit_code: int, error: str | None) -> None:
    """The stream's end: a command that failed before its document says so (``error_line``); then
    the stream is closed."""
    if not output.stream_summarized():
        write_stream_line(error_line(error or f"exit code {exit_code}", exit_code) if exit_code else summary_line(None))
    stream = output.hold_stream(None)
    with contextlib.suppress(OSError, ValueError):
        if stream is not None:
            stream.close()


__all__ = ["begin_stream", "end_stream", "error_summary", "json_stdout"]

"""stdout for results: exactly one JSON document in --json mode, and whether stdout is a terminal.

With --json, file descriptor 1 is pointed at stderr while the command runs (``json_stdout``), so
whatever else reaches it — a handler's child process, ``os.write(1, ...)``, print() with
``RIG_NO_CONSOLE_INTERCEPT=1`` — lands on stderr; the document goes to the real stdout, kept aside.
It stays pointed at stderr after the document: project code may still write at interpreter exit
(``atexit``), and stdout has had its one document.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator

import rigcli.masking as masking  # not `from rigcli import`: that asks rigcli's lazy __getattr__ first

# json is imported where a document is written (it imports re), typing not at all: rig ls's lean
# path writes through here and imports neither. Not typing.TYPE_CHECKING: mypy treats any name
# TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import TextIO

_document: TextIO | None = None  # the real stdout while json_stdout() holds it aside
_stream: TextIO | None = None  # --json-stream: the real stdout, one JSON object per line
_summarized = False  # the stream's summary line is written


@contextlib.contextmanager
def json_stdout() -> Iterator[None]:
    """While the block runs, fd 1 is stderr and ``emit_json`` writes to the real stdout."""
    global _document
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
    _document = io.TextIOWrapper(io.FileIO(saved, "w"), encoding="utf-8")
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()  # what was written meanwhile belongs to stderr
        # fd 1 is not given back: an embedding host that needs it restores its own descriptors.
        document, _document = _document, None
        with contextlib.suppress(OSError, ValueError):  # a reader that went away: already reported
            document.close()


def emit_json(document: object) -> None:
    """The command's whole stdout in --json mode: one indented document and a newline; with
    --json-stream, the stream's last line (``summary_line``).

    Every --json document passes here, so secrets are masked here.
    """
    import json

    global _summarized
    if _stream is not None:
        write_stream_line(summary_line(shown(document)))
        _summarized = True
        return
    stream = _document or sys.stdout
    stream.write(json.dumps(shown(document), indent=2, ensure_ascii=False, default=_fallback) + "\n")
    stream.flush()


# -- --json-stream: events as they happen, then the summary ---------------------------------------


def begin_stream() -> None:
    """Keep the real stdout for the stream, before fd 1 is pointed at stderr (``json_stdout``)."""
    global _stream, _summarized
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    try:
        _stream = io.TextIOWrapper(io.FileIO(os.dup(1), "w"), encoding="utf-8", line_buffering=True)
    except OSError:
        _stream = None
    _summarized = False


def write_stream_line(data: dict[str, object]) -> None:
    """One object on one line of the stream (masked by the caller: events by the bus, documents by ``shown``)."""
    import json

    if _stream is not None:
        _stream.write(json.dumps(data, ensure_ascii=False, default=_fallback, separators=(",", ":")) + "\n")


def summary_line(document: object) -> dict[str, object]:
    """``{"type": "summary", ...}``: a JSON object document's keys beside ``type``, anything else (and an
    object that has its own ``type``) under ``result``."""
    if isinstance(document, dict) and "type" not in document:
        return {"type": "summary", **document}
    return {"type": "summary", "result": document}


def error_line(message: str, exit_code: int) -> dict[str, object]:
    """The summary of a command that failed: ``{"type": "summary", "error": {"message", "exit_code"}}``."""
    return {"type": "summary", "error": {"message": masking.mask_text(message), "exit_code": exit_code}}


def error_summary(message: str, exit_code: int) -> None:
    """A failed command line's whole stream when it failed before any stream began (a usage error)."""
    import json

    line = json.dumps(error_line(message, exit_code), ensure_ascii=False, separators=(",", ":"))
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def end_stream(exit_code: int, error: str | None) -> None:
    """The stream's end: a command that failed before its document says so (``error_line``); then
    the stream is closed."""
    global _stream
    if _stream is None:
        return
    if not _summarized:
        write_stream_line(error_line(error or f"exit code {exit_code}", exit_code) if exit_code else summary_line(None))
    stream, _stream = _stream, None
    with contextlib.suppress(OSError, ValueError):
        stream.close()


def stdout_is_terminal() -> bool:
    """``streams.stdout_is_terminal`` (imported when asked: the relay's module is not light)."""
    from rigcli.streams import stdout_is_terminal as asked

    return asked()


def stderr_is_terminal() -> bool:
    from rigcli.streams import stderr_is_terminal as asked

    return asked()


def shown(value: object) -> object:
    """``value`` as it may be shown to the user: JSON-shaped, with secrets masked."""
    import json

    if not masking.active():
        return value
    return masking.mask_value(json.loads(json.dumps(value, ensure_ascii=False, default=_fallback)))


def _fallback(value: object) -> object:
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    return str(value)


__all__ = [
    "begin_stream",
    "emit_json",
    "end_stream",
    "error_line",
    "error_summary",
    "json_stdout",
    "shown",
    "stderr_is_terminal",
    "stdout_is_terminal",
    "summary_line",
    "write_stream_line",
]

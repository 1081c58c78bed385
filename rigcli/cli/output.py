"""stdout for results: exactly one JSON document in --json mode, and whether stdout is a terminal.

With --json, file descriptor 1 is pointed at stderr while the command runs (``json_stdout``), so
whatever else reaches it — a handler's child process, ``os.write(1, ...)``, print() with
``RIG_NO_CONSOLE_INTERCEPT=1`` — lands on stderr; the document goes to the real stdout, kept aside.
It stays pointed at stderr after the document: project code may still write at interpreter exit
(``atexit``), and stdout has had its one document.
"""

from __future__ import annotations

import sys

import rigcli.masking as masking  # not `from rigcli import`: that asks rigcli's lazy __getattr__ first
from rigcli.speed.lazy_modules import lazy_module

# json is imported where a document is written (it imports re), typing not at all: rig ls answered
# from the cache writes through here and imports neither. Not typing.TYPE_CHECKING: mypy treats any name
# TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import TextIO

if TYPE_CHECKING:
    import json
else:
    json = lazy_module("json")


_document: TextIO | None = None  # the real stdout while json_stdout() holds it aside
_stream: TextIO | None = None  # --json-stream: the real stdout, one JSON object per line
_summarized = False  # the stream's summary line is written


def hold_document(stream: TextIO | None) -> TextIO | None:
    """From now on ``emit_json`` writes to ``stream`` (None: to ``sys.stdout``); the one it wrote to before."""
    global _document
    previous, _document = _document, stream
    return previous


def hold_stream(stream: TextIO | None) -> TextIO | None:
    """From now on the --json-stream lines go to ``stream`` (None: nowhere); the stream held before."""
    global _stream, _summarized
    previous, _stream = _stream, stream
    if stream is not None:
        _summarized = False
    return previous


def stream_summarized() -> bool:
    """Whether the stream's summary line has been written."""
    return _summarized


def emit_json(document: object) -> None:
    """The command's whole stdout in --json mode: one indented document and a newline; with
    --json-stream, the stream's last line (``summary_line``).

    Every --json document passes here, so secrets are masked here.
    """
    global _summarized
    if _stream is not None:
        write_stream_line(summary_line(shown(document)))
        _summarized = True
        return
    stream = _document or sys.stdout
    stream.write(_dumps(shown(document), indent=2) + "\n")
    stream.flush()


def emit_json_line(document: object) -> None:
    """One compact JSON object on its own line of the real stdout, at once: a --json command that goes on
    (``rig forward``) says what it did line by line instead of one document at its end."""
    stream = _document or sys.stdout
    stream.write(_dumps(shown(document), separators=(",", ":")) + "\n")
    stream.flush()


# -- --json-stream: events as they happen, then the summary ---------------------------------------


def write_stream_line(data: dict[str, object]) -> None:
    """One object on one line of the stream (masked by the caller: events by the bus, documents by ``shown``)."""
    if _stream is not None:
        _stream.write(_dumps(data, separators=(",", ":")) + "\n")


def summary_line(document: object) -> dict[str, object]:
    """``{"type": "summary", ...}``: a JSON object document's keys beside ``type``, anything else (and an
    object that has its own ``type``) under ``result``."""
    if isinstance(document, dict) and "type" not in document:
        return {"type": "summary", **document}
    return {"type": "summary", "result": document}


def error_line(message: str, exit_code: int) -> dict[str, object]:
    """The summary of a command that failed: ``{"type": "summary", "error": {"message", "exit_code"}}``."""
    return {"type": "summary", "error": {"message": masking.mask_text(message), "exit_code": exit_code}}


def stdout_is_terminal() -> bool:
    """``streams.stdout_is_terminal`` (imported when asked: the relay's module is not light)."""
    from rigcli.streams import stdout_is_terminal as asked

    return asked()


def stderr_is_terminal() -> bool:
    from rigcli.streams import stderr_is_terminal as asked

    return asked()


def shown(value: object) -> object:
    """``value`` as it may be shown to the user: JSON-shaped, with secrets masked."""
    if not masking.active():
        return value

    return masking.mask_value(json.loads(_dumps(value)))


def _dumps(value: object, **options: object) -> str:
    """``json.dumps`` (json imports re: a command that writes no JSON imports neither)."""

    return json.dumps(value, ensure_ascii=False, default=_fallback, **options)  # type: ignore[arg-type]


def _fallback(value: object) -> object:
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    return str(value)


__all__ = [
    "emit_json",
    "error_line",
    "shown",
    "stderr_is_terminal",
    "stdout_is_terminal",
    "summary_line",
    "write_stream_line",
]

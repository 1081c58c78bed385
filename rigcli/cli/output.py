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
import json
import os
import sys
from collections.abc import Iterator
from typing import TextIO

from rigcli import masking
from rigcli.streams import stderr_is_terminal, stdout_is_terminal

_document: TextIO | None = None  # the real stdout while json_stdout() holds it aside


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
    """The command's whole stdout in --json mode: one indented document and a newline.

    Every --json document passes here, so secrets are masked here.
    """
    stream = _document or sys.stdout
    stream.write(json.dumps(shown(document), indent=2, ensure_ascii=False, default=_fallback) + "\n")
    stream.flush()


def shown(value: object) -> object:
    """``value`` as it may be shown to the user: JSON-shaped, with secrets masked."""
    if not masking.active():
        return value
    return masking.mask_value(json.loads(json.dumps(value, ensure_ascii=False, default=_fallback)))


def _fallback(value: object) -> object:
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    return str(value)


__all__ = ["emit_json", "json_stdout", "shown", "stderr_is_terminal", "stdout_is_terminal"]

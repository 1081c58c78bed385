"""Turn print() and logging inside a handler into ``log.output`` events for that node only.

A context variable names the node whose code is running; sys.stdout/sys.stderr proxies and
one logging handler route writes to that node's line buffer. Code outside any node writes
to the real streams untouched, so two parallel nodes never mix their output.
"""

from __future__ import annotations

import contextvars
import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import TextIO

from rigcli.events import Event, LogOutput
from rigcli.masking import mask_text

_CURRENT: contextvars.ContextVar[NodeConsole | None] = contextvars.ContextVar("rig_node_console", default=None)
_INSTALL_LOCK = threading.Lock()


class NodeConsole:
    """Line-buffers one node's writes per stream and emits each complete line."""

    def __init__(self, node_path: str, emit: Callable[[Event], None]) -> None:
        self.node_path = node_path
        self._emit = emit
        self._buffers: dict[str, str] = {}
        self._lock = threading.Lock()

    def write(self, stream: str, data: str) -> None:
        with self._lock:
            text = self._buffers.get(stream, "") + data
            *lines, rest = text.split("\n")
            self._buffers[stream] = rest
        for line in lines:
            self.line(stream, line)

    def line(self, stream: str, data: str) -> None:
        self._emit(LogOutput(node_path=self.node_path, stream=stream, data=data))

    def flush(self) -> None:
        with self._lock:
            pending, self._buffers = self._buffers, {}
        for stream, rest in pending.items():
            if rest:
                self.line(stream, rest)


class _StreamProxy:
    def __init__(self, real: TextIO, stream: str) -> None:
        self.rig_real_stream = real  # renderers and prompts write here, past the capture
        self._stream = stream

    def write(self, data: str) -> int:
        console = _CURRENT.get()
        if console is None:
            # Outside any node: rig's own lines (already masked), or project code writing at
            # import or interpreter exit (an atexit handler), which the masker must still see.
            self.rig_real_stream.write(mask_text(data))
            return len(data)
        console.write(self._stream, data)
        return len(data)

    def flush(self) -> None:
        if _CURRENT.get() is None:
            self.rig_real_stream.flush()

    def __getattr__(self, name: str) -> object:
        return getattr(self.rig_real_stream, name)


class _LogHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        console = _CURRENT.get()
        if console is None:
            return
        if record.levelno >= logging.ERROR:
            stream = "stderr"
        elif record.levelno >= logging.WARNING:
            stream = "warn"
        elif record.levelno >= logging.INFO:
            stream = "info"
        else:
            stream = "debug"
        for line in self.format(record).splitlines() or [""]:
            console.line(stream, line)


_HANDLER = _LogHandler(logging.DEBUG)
_HANDLER.setFormatter(logging.Formatter("%(message)s"))


def install() -> None:
    """Wrap the current sys streams (unless RIG_NO_CONSOLE_INTERCEPT=1).

    Called before every run because test harnesses and embedding hosts swap sys.stdout.
    """
    if os.environ.get("RIG_NO_CONSOLE_INTERCEPT") == "1":
        return
    with _INSTALL_LOCK:
        if not isinstance(sys.stdout, _StreamProxy):
            sys.stdout = _StreamProxy(sys.stdout, "info")
        if not isinstance(sys.stderr, _StreamProxy):
            sys.stderr = _StreamProxy(sys.stderr, "stderr")
        root = logging.getLogger()
        if _HANDLER not in root.handlers:
            root.addHandler(_HANDLER)


def handler_logger(node_path: str) -> logging.Logger:
    """The ``log`` parameter: a logger whose records reach the node's events only."""
    logger = logging.getLogger(f"rig.node.{node_path}")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    if _HANDLER not in logger.handlers:
        logger.addHandler(_HANDLER)
    return logger


def activate(console: NodeConsole | None) -> contextvars.Token[NodeConsole | None]:
    return _CURRENT.set(console)


def deactivate(token: contextvars.Token[NodeConsole | None]) -> None:
    _CURRENT.reset(token)


__all__ = ["NodeConsole", "activate", "deactivate", "handler_logger", "install"]

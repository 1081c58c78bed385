"""Run renderers: pick live or plain (``--progress``), and the plain append-only renderer itself.

Plain output prefixes each line a task printed with the task's path (``    base.install | ...``),
so that the lines of parallel branches can be told apart; with ``--json`` only the tasks' and
operations' output is written, to stderr, since stdout holds the document.
"""

from __future__ import annotations

import codecs
import contextlib
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol, TextIO

from rigcli.events import CommandCompleted, CommandOutput, Event, NodeEvent, NodeStarted, ProviderEvent
from rigcli.render.console import live_enabled, no_color, stderr_console
from rigcli.render.lines import OUTPUT_INDENT, EventFormatter, Line
from rigcli.render.plain import is_terminal
from rigcli.sanitize import sanitize
from rigcli.speed.lazy_modules import lazy_module
from rigcli.speed.pipes import widen_pipe
from rigcli.speed.tables import write_lines
from rigcli.streams import real_stderr, write_bytes

if TYPE_CHECKING:
    import rich.text as rich_text
else:
    rich_text = lazy_module("rich.text")


# Kinds whose lines sit under their node: a task's get its path in front in plain output.
NODE_DETAIL = frozenset({"log.output", "command.started", "command.output", "command.completed", "artifact.created"})
# What --json leaves on stderr: the output of tasks and operations, and warnings; nothing about progress.
TASK_OUTPUT = frozenset({"log.output", "command.output"})
WARNINGS = frozenset({"state.warning", "artifact.unconfirmed"})


class Renderer(Protocol):
    def handle(self, event: Event) -> None: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def paused(self) -> contextlib.AbstractContextManager[object]: ...


class NullRenderer:
    """Shows nothing (an embedding host's choice)."""

    def handle(self, event: Event) -> None:
        pass

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def paused(self) -> contextlib.AbstractContextManager[object]:
        return contextlib.nullcontext()


class PlainRenderer:
    """Append-only lines on stderr: one event, zero or more lines, one write, never redrawn.

    Off a terminal the lines go straight to the stream (no Rich: a command's 200 MB of output
    must cost what writing it costs); on a terminal with RIG_RENDER=0 Rich styles them.
    ``output_only`` (``--json``): only what tasks and operations print, a task's after its path, and
    warnings.
    """

    def __init__(self, *, output_only: bool = False) -> None:
        stream = real_stderr()
        self.stream = stream
        self.output_only = output_only
        self.console = None if not is_terminal(stream) else stderr_console()
        self.formatter = EventFormatter(colour=self.console is not None and not no_color())
        self.tasks: set[str] = set()  # paths of the tasks seen starting: their lines carry the path
        # Command output skips the text layer where that writes the same bytes: a UTF-8 stream.
        self._utf8 = _is_utf8(getattr(stream, "encoding", None))
        self._errors = getattr(stream, "errors", None) or "strict"
        self._widened = False  # stderr's pipe (if it is one), once a command's output is written to it
        # Parallel branches emit from worker threads; keep each event's lines together.
        self._lock = threading.Lock()

    def _prefix(self, event: Event) -> str | None:
        """What each of the event's lines starts with, instead of the formatter's indent (None: as is)."""
        if not isinstance(event, NodeEvent):
            return None
        if event.node_path in self.tasks and (event.kind in NODE_DETAIL or isinstance(event, ProviderEvent)):
            return f"{'' if self.output_only else OUTPUT_INDENT}{sanitize(event.node_path)} | "
        return "" if self.output_only else None  # an operation's output, as it came

    def handle(self, event: Event) -> None:
        if isinstance(event, NodeStarted):
            self.tasks.add(event.node_path)
        prefix = self._prefix(event)
        if self.output_only and isinstance(event, CommandCompleted):  # its last line, if unterminated
            with self._lock:
                rest = [
                    f"{prefix or ''}{sanitize(text, colour=self.formatter.colour)}"
                    for text in self.formatter.flush(event.command_id)
                ]
                write_lines(self.stream, rest)
            return
        if self.output_only and event.kind not in TASK_OUTPUT and event.kind not in WARNINGS:
            return
        if self.console is None and isinstance(event, CommandOutput):
            indent = OUTPUT_INDENT if prefix is None else prefix
            with self._lock:  # the formatter joins chunks into lines: one chunk at a time
                if self._utf8:
                    if not self._widened:
                        self._widened = True
                        _widen(self.stream)
                    pieces = self.formatter.output_bytes(event, indent, self._errors)
                    if pieces is not None:
                        write_bytes(self.stream, *pieces)
                        self.stream.flush()
                    return
                block = self.formatter.output_block(event, indent)
                if block is not None:
                    write_lines(self.stream, [block])
            return
        lines = self.formatter.lines(event)
        if not lines:
            return
        if prefix is not None:
            lines = [Line(prefix + line.text.removeprefix(OUTPUT_INDENT), line.style) for line in lines]
        with self._lock:
            if self.console is None:
                write_lines(self.stream, [line.text for line in lines])
                return

            for line in lines:
                self.console.print(rich_text.Text.from_ansi(line.text, style=line.style), soft_wrap=True)

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        yield


def _widen(stream: TextIO) -> None:
    """A MiB of a command's output is written in one go, not 64 KiB at a time, each waiting for the
    reader to wake: what the reader sees is the same (see ``widen_pipe``)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both of the last two
        return

    widen_pipe(fd)


def _is_utf8(encoding: str | None) -> bool:
    try:
        return encoding is not None and codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


def create_renderer(*, json_mode: bool, stream_output: bool = False, progress: str = "auto") -> Renderer:
    """``progress``: ``tty`` draws the live view (even off a terminal), ``plain`` appends lines, ``auto``
    is ``tty`` on a terminal that can redraw (not with RIG_RENDER=0, NO_COLOR or TERM=dumb).
    ``stream_output``: scroll every output line even in the live view (operations)."""
    if json_mode:
        return PlainRenderer(output_only=True)
    if progress == "tty" or (progress == "auto" and live_enabled()):
        from rigcli.render.live import LiveRenderer

        return LiveRenderer(stream_output=stream_output, force_terminal=progress == "tty")
    return PlainRenderer()


__all__ = ["NullRenderer", "PlainRenderer", "Renderer", "create_renderer"]

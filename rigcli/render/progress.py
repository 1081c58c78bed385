"""Run renderers: pick live, plain or silent, and the plain append-only renderer itself."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Protocol

from rigcli.events import CommandOutput, Event
from rigcli.render.console import live_enabled, no_color, stderr_console
from rigcli.render.lines import EventFormatter
from rigcli.render.plain import is_terminal
from rigcli.speed.tables import write_lines
from rigcli.streams import real_stderr


class Renderer(Protocol):
    def handle(self, event: Event) -> None: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def paused(self) -> contextlib.AbstractContextManager[object]: ...


class NullRenderer:
    """--json runs: stdout holds the one document and stderr stays quiet."""

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
    """

    def __init__(self) -> None:
        stream = real_stderr()
        self.stream = stream
        self.console = None if not is_terminal(stream) else stderr_console()
        self.formatter = EventFormatter(colour=self.console is not None and not no_color())
        # Parallel branches emit from worker threads; keep each event's lines together.
        self._lock = threading.Lock()

    def handle(self, event: Event) -> None:
        if self.console is None and isinstance(event, CommandOutput):
            with self._lock:  # the formatter joins chunks into lines: one chunk at a time
                block = self.formatter.output_block(event)
                if block is not None:
                    write_lines(self.stream, [block])
            return
        lines = self.formatter.lines(event)
        if not lines:
            return
        with self._lock:
            if self.console is None:
                write_lines(self.stream, [line.text for line in lines])
                return
            from rich.text import Text

            for line in lines:
                self.console.print(Text.from_ansi(line.text, style=line.style), soft_wrap=True)

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        yield


def create_renderer(*, json_mode: bool, stream_output: bool = False) -> Renderer:
    """``stream_output``: scroll every output line even in the live view (operations)."""
    if json_mode:
        return NullRenderer()
    if live_enabled():
        from rigcli.render.live import LiveRenderer

        return LiveRenderer(stream_output=stream_output)
    return PlainRenderer()


__all__ = ["NullRenderer", "PlainRenderer", "Renderer", "create_renderer"]

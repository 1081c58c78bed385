"""Run renderers: pick live, plain or silent, and the plain append-only renderer itself."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Protocol

from rich.text import Text

from rigcli.events import Event
from rigcli.render.console import live_enabled, stderr_console
from rigcli.render.lines import EventFormatter, Line


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
    """Append-only lines on stderr: one event, zero or more lines, never redrawn."""

    def __init__(self) -> None:
        self.console = stderr_console()
        self.formatter = EventFormatter()
        # Parallel branches emit from worker threads; keep each event's lines together.
        self._lock = threading.Lock()

    def handle(self, event: Event) -> None:
        lines = self.formatter.lines(event)
        with self._lock:
            for line in lines:
                self.write(line)

    def write(self, line: Line) -> None:
        self.console.print(Text(line.text, style=line.style), soft_wrap=True)

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

"""The terminal live view: finished lines scroll above, running nodes redraw below with their output tail."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.live import Live
from rich.text import Text

from rigcli.events import (
    Event,
    InteractionAwaitingUser,
    InteractionCompleted,
    NodeCached,
    NodeCompleted,
    NodeEvent,
    NodeFailed,
    NodeStarted,
    WorkflowApplyStarted,
    WorkspaceCreateStarted,
    WorkspaceOperationStarted,
)
from rigcli.render.console import stderr_console
from rigcli.render.lines import EventFormatter, Line, format_duration

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TAIL_LINES = 4  # output lines shown under a running node
FAILURE_LINES = 40  # output lines replayed above when a node fails
OUTPUT_EVENTS = frozenset({"log.output", "command.output", "command.started", "command.completed"})


@dataclass
class _Running:
    started: float
    output: deque[Line] = field(default_factory=lambda: deque(maxlen=FAILURE_LINES))


class LiveRenderer:
    """Rich Live on stderr. ``paused()`` hands the terminal to a prompt or attached command."""

    def __init__(self, *, stream_output: bool = False) -> None:
        self.console = stderr_console()
        self.formatter = EventFormatter(colour=True)  # the live view only runs without NO_COLOR
        self.stream_output = stream_output  # operations: their output is the point, so scroll it all
        self.title = ""
        self.total = 0
        self.done = 0
        self.running: dict[str, _Running] = {}
        self.waiting: dict[str, list[Line]] = {}
        self._began = time.monotonic()
        self._lock = threading.RLock()
        self._pauses = 0
        self._active = False
        self._live = Live(
            console=self.console,
            get_renderable=self._render,
            transient=True,
            refresh_per_second=8,
            redirect_stdout=False,
            redirect_stderr=False,
        )

    def start(self) -> None:
        with self._lock:
            self._live.start()
            self._active = True

    def stop(self) -> None:
        with self._lock:
            self._active = False
            self._live.stop()
            for path in list(self.running):
                self._print_output(path)
            self.running.clear()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        with self._lock:
            self._pauses += 1
            if self._pauses == 1 and self._active:
                self._live.stop()
        try:
            yield
        finally:
            with self._lock:
                self._pauses -= 1
                if self._pauses == 0 and self._active:
                    self._live.start()

    def handle(self, event: Event) -> None:
        with self._lock:
            self._handle(event)
            if self._active and self._pauses == 0:
                # Lines printed above the view redraw the last frame; draw the new state at once.
                self._live.refresh()

    def _handle(self, event: Event) -> None:
        path = event.node_path if isinstance(event, NodeEvent) else ""
        if event.kind in OUTPUT_EVENTS and path in self.running and not self.stream_output:
            self.running[path].output.extend(self.formatter.lines(event))
            return
        if isinstance(event, WorkflowApplyStarted):
            self.title = f"apply {event.workflow}"
            self.total = event.node_count
        elif isinstance(event, NodeStarted):
            self.running[path] = _Running(time.monotonic())
            self.total = max(self.total, event.total)
            self._print(self.formatter.release())  # the apply header and cached nodes it held
            self.formatter.lines(event)  # starts the formatter's clock; the line itself is drawn live
            return
        elif isinstance(event, (NodeCached, NodeCompleted)):
            self.done += 1
            self.running.pop(path, None)
        elif isinstance(event, NodeFailed):
            self._print_output(path)
            self.running.pop(path, None)
        elif isinstance(event, InteractionAwaitingUser):
            lines = self.formatter.lines(event)
            self.waiting[event.interaction_id] = lines
            self._print(lines)
            return
        elif isinstance(event, InteractionCompleted):
            self.waiting.pop(event.interaction_id, None)
        elif isinstance(event, WorkspaceCreateStarted):
            self.title = f"creating workspace {event.workspace}"
        elif isinstance(event, WorkspaceOperationStarted):
            self.title = f"{event.operation} on {event.workspace}"
        self._print(self.formatter.lines(event))

    def _print(self, lines: list[Line]) -> None:
        for line in lines:
            self._live.console.print(Text.from_ansi(line.text, style=line.style), soft_wrap=True)

    def _print_output(self, path: str) -> None:
        running = self.running.get(path)
        if running is not None:
            self._print(list(running.output))
            running.output.clear()

    def _render(self) -> RenderableType:
        # No self._lock here: Rich calls this holding its own lock, while handle() holds ours and
        # then prints (taking Rich's); taking both in opposite orders would deadlock. The list()
        # copies are single C-level steps, so a concurrent event cannot tear them.
        now = time.monotonic()
        frame = SPINNER[int(now * 10) % len(SPINNER)]
        progress = f"  {self.done}/{self.total}" if self.total else ""
        rows: list[RenderableType] = [
            Text(f"{frame} {self.title or 'working'}{progress}  {format_duration(now - self._began)}", style="bold")
        ]
        for path, running in list(self.running.items()):
            rows.append(Text(f"  {frame} {path}  {format_duration(now - running.started)}", style="cyan"))
            for line in list(running.output)[-TAIL_LINES:]:
                rows.append(Text.from_ansi("  " + line.text, style="dim", no_wrap=True, overflow="ellipsis"))
        for lines in list(self.waiting.values()):
            rows.extend(Text(line.text, style="yellow", no_wrap=True, overflow="ellipsis") for line in lines)
        return Group(*rows)


__all__ = ["LiveRenderer"]

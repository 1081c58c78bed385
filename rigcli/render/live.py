"""The terminal live view: finished lines scroll above, running nodes redraw below with their output tail.

What a finished task leaves in the scrollback is its status line and what is worth keeping of
its output: every command it ran (``$ ...``, and exit codes that were not 0) and its last
``KEPT_LINES`` lines — a failed task up to ``FAILURE_LINES`` — with the lines left out counted
(``… 40 lines``) and ``rig logs TASK`` named for the whole output.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import field

from rich.console import Group, RenderableType
from rich.live import Live
from rich.text import Text

from rigcli.events import (
    CommandStarted,
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
from rigcli.speed.records import lazy_dataclass
from rigcli.wording import counted

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
REFRESH_PER_SECOND = 8
TAIL_LINES = 4  # output lines shown under a running node
KEPT_LINES = 5  # output lines a finished task leaves in the scrollback, besides its commands
FAILURE_LINES = 200  # output lines a failed (or interrupted) task leaves
COMMAND_LINES = 100  # command lines a task leaves, at most
OUTPUT_EVENTS = frozenset({"log.output", "command.output", "command.started", "command.completed"})


@lazy_dataclass
class _Running:
    """A running node: when it started, and its output lines, numbered, as much as is worth keeping."""

    started: float
    count: int = 0  # every line it printed
    output: deque[tuple[int, Line]] = field(default_factory=lambda: deque(maxlen=FAILURE_LINES))
    commands: list[tuple[int, Line]] = field(default_factory=list)

    def add(self, lines: list[Line], *, commands: bool) -> None:
        for line in lines:
            numbered = (self.count, line)
            self.output.append(numbered)
            # A command line, or what a command ended with (its exit code when not 0): styled.
            if (commands or line.style) and len(self.commands) < COMMAND_LINES:
                self.commands.append(numbered)
            self.count += 1

    def tail(self, count: int) -> list[Line]:
        return [line for _, line in list(self.output)[-count:]]

    def kept(self, path: str, lines: int) -> list[Line]:
        """Its commands and last ``lines`` lines, gaps counted, and where to read the rest."""
        picked = dict(self.commands)
        picked.update(list(self.output)[-lines:] if lines else [])
        shown: list[Line] = []
        previous = -1
        for index in sorted(picked):
            if index > previous + 1:
                shown.append(Line(f"    … {counted(index - previous - 1, 'line')}", "dim"))
            shown.append(picked[index])
            previous = index
        if len(picked) < self.count:
            shown.append(Line(f"    rig logs {path} shows all {counted(self.count, 'line')}", "dim"))
        return shown


class LiveRenderer:
    """Rich Live on stderr. ``paused()`` hands the terminal to a prompt or attached command."""

    def __init__(self, *, stream_output: bool = False, force_terminal: bool = False) -> None:
        self.console = stderr_console(force_terminal=force_terminal)
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
        # Redrawn by our own ticker under self._lock, not by Rich's refresh thread: a redraw racing
        # a print writes its cursor moves for a frame of another height, and lines printed above
        # the view are overwritten (lost from the scrollback).
        self._live = self._new_live()
        self._ticking = threading.Event()
        self._ticker: threading.Thread | None = None

    def _new_live(self) -> Live:
        return Live(
            console=self.console,
            get_renderable=self._render,
            transient=True,
            auto_refresh=False,
            redirect_stdout=False,
            redirect_stderr=False,
        )

    def start(self) -> None:
        with self._lock:
            self._live.start()
            self._active = True
            if self._ticker is None:
                self._ticking.set()
                self._ticker = threading.Thread(target=self._tick, name="rig:live-view", daemon=True)
                self._ticker.start()

    def _tick(self) -> None:
        while self._ticking.is_set():
            time.sleep(1 / REFRESH_PER_SECOND)
            with self._lock:
                if self._ticking.is_set() and self._active and self._pauses == 0:
                    self._live.refresh()

    def stop(self) -> None:
        self._ticking.clear()
        ticker, self._ticker = self._ticker, None
        if ticker is not None and ticker is not threading.current_thread():
            ticker.join(timeout=1)
        with self._lock:
            self._active = False
            self._live.stop()
            for path in list(self.running):  # cut off: an interrupt, or a failure elsewhere
                self._print(self.running[path].kept(path, FAILURE_LINES))
            self.running.clear()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        with self._lock:
            self._pauses += 1
            if self._pauses == 1 and self._active:
                self._live.stop()
                # A new Live for the resume: the old one remembers how tall its last frame was and
                # would erase that many lines on its first refresh, which are now the attached
                # command's last lines (the shell's final prompt and what was typed there).
                self._live = self._new_live()
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
            self.running[path].add(self.formatter.lines(event), commands=isinstance(event, CommandStarted))
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
        elif isinstance(event, NodeCached):
            self.done += 1
        elif isinstance(event, (NodeCompleted, NodeFailed)):
            self.done += isinstance(event, NodeCompleted)
            finished = self.running.pop(path, None)
            self._print(self.formatter.lines(event))
            if finished is not None:
                self._print(finished.kept(path, KEPT_LINES if isinstance(event, NodeCompleted) else FAILURE_LINES))
            return
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
            for line in running.tail(TAIL_LINES):
                rows.append(Text.from_ansi("  " + line.text, style="dim", no_wrap=True, overflow="ellipsis"))
        for lines in list(self.waiting.values()):
            rows.extend(Text(line.text, style="yellow", no_wrap=True, overflow="ellipsis") for line in lines)
        return Group(*rows)


__all__ = ["LiveRenderer"]

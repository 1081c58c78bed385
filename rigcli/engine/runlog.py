"""Keep every node run's output in the state, bounded: its lines by stream, its commands with their
exit codes, and its provider events, as ``rig logs`` shows them.

The recorder listens to the engine's events (masked by the bus, so secrets are ``***`` here too,
even split across chunks), keeps each running node's output in memory, and writes it in batches
from a thread of its own — every ``FLUSH_SECONDS``, or sooner once ``FLUSH_CHARS`` wait to be
written — so a handler never waits for the database. The last batch is written by ``finish_run``
in the run's finishing transaction (``Evaluation`` takes it with ``take``).

Each run keeps at most ``cap`` characters (``RIG_LOG_CAP``, default 4 MiB; ``0`` keeps nothing),
its middle dropped beyond that (engine/run_buffer.py).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable

from rigcli.engine.run_buffer import CAP_VARIABLE, RunBuffer
from rigcli.errors import InputError
from rigcli.events import (
    ArtifactCreated,
    CommandCompleted,
    CommandOutput,
    CommandStarted,
    Event,
    InteractionAwaitingUser,
    InteractionCompleted,
    LogOutput,
    NodeEvent,
    ProviderEvent,
)
from rigcli.state.api import StateStore
from rigcli.state.run_output import OutputBatch
from rigcli.wording import counted

DEFAULT_CAP = 4 * 1024 * 1024
FLUSH_SECONDS = 0.5
COMMAND, EVENT = "command", "event"  # streams of rig's own lines beside the output's
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def cap_from_env(environ: dict[str, str] | None = None) -> int:
    """``RIG_LOG_CAP``: characters of output kept per run (``512k``, ``4m``, ``64MiB``, ``0``)."""
    raw = (environ if environ is not None else os.environ).get(CAP_VARIABLE, "").strip().lower()
    if not raw:
        return DEFAULT_CAP
    number = raw.removesuffix("ib").removesuffix("b")
    unit = number[-1:] if number[-1:] in _UNITS else ""
    try:
        value = int(float(number[: len(number) - len(unit)]) * _UNITS[unit])
    except ValueError:
        raise InputError(f"{CAP_VARIABLE}={raw} is not a size (say 4m, 512k or 0)") from None
    if value < 0:
        raise InputError(f"{CAP_VARIABLE}={raw} must not be negative")
    return value


def event_line(event: NodeEvent) -> tuple[str, str] | None:
    """The stored line of an event that is not streamed output: (stream, text), or None."""
    if isinstance(event, LogOutput):
        return event.stream, event.data + "\n"
    if isinstance(event, CommandStarted):
        return COMMAND, f"$ {event.command}\n"
    if isinstance(event, CommandCompleted):
        code = "no exit code" if event.exit_code is None else f"exit {event.exit_code}"
        lost = f", {counted(event.truncated_bytes, 'byte')} not kept in memory" if event.truncated_bytes else ""
        return COMMAND, f"[{code}{lost}]\n"
    if isinstance(event, ArtifactCreated) and isinstance(event.artifact, dict):
        return EVENT, f"+ {event.artifact.get('provider')}:{event.artifact.get('kind')}\n"
    if isinstance(event, InteractionAwaitingUser):
        where = " ".join(value for value in (event.url, event.instructions) if value)
        return EVENT, f"waiting on {event.title} {where}".rstrip() + "\n"
    if isinstance(event, InteractionCompleted):
        return EVENT, f"{event.title} completed\n"
    if isinstance(event, ProviderEvent):
        details = " ".join(
            f"{key}={value}"
            for key, value in event.extra.items()
            if key not in ("node_path", "provider_id", "workflow", "timestamp", "ts")
            and isinstance(value, (str, int, float))
            and not isinstance(value, bool)
        )
        return EVENT, f"{event.kind} {details}".rstrip() + "\n"
    return None


class OutputRecorder:
    """Routes each running node's events to its ``RunBuffer`` and writes the buffers in batches."""

    def __init__(self, subscribe: Callable[[Callable[[Event], None]], Callable[[], None]], cap: int) -> None:
        self.cap = cap
        self._subscribe = subscribe
        self._unsubscribe: Callable[[], None] | None = None
        self._runs: dict[str, RunBuffer] = {}  # node path -> its running run's buffer
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None

    @property
    def enabled(self) -> bool:
        return self.cap > 0

    def attach(self, node_path: str, run_id: str, store: StateStore) -> None:
        """Keep the output of ``node_path``'s events from now on, for run ``run_id``."""
        if not self.enabled:
            return
        with self._lock:
            if self._unsubscribe is None:
                self._unsubscribe = self._subscribe(self.handle)
            if self._thread is None:
                self._thread = threading.Thread(target=self._flush_loop, name="rig:run-output", daemon=True)
                self._thread.start()
            self._runs[node_path] = RunBuffer(run_id, store, self.cap)

    def take(self, node_path: str, run_id: str) -> OutputBatch | None:
        """Stop keeping the node's output; the last batch to write with the run's finish (None: nothing)."""
        with self._lock:
            buffer = self._runs.get(node_path)
            if buffer is None or buffer.run_id != run_id:
                return None
            del self._runs[node_path]
        with buffer.writing:  # a flush of this run in progress writes first: chunks stay in order
            return buffer.take(final=True)

    def handle(self, event: Event) -> None:
        if not isinstance(event, NodeEvent):
            return
        buffer = self._runs.get(event.node_path)
        if buffer is None:
            return
        if isinstance(event, CommandOutput):
            buffer.command_output((event.command_id, event.stream), event.stream, event.data)
        else:
            if isinstance(event, CommandCompleted):
                buffer.end_command(event.command_id)
            line = event_line(event)
            if line is not None:
                buffer.add(*line)
        if buffer.urgent:
            self._wake.set()

    def _flush_loop(self) -> None:
        while not self._closed:
            self._wake.wait(FLUSH_SECONDS)
            self._wake.clear()
            with self._lock:
                buffers = list(self._runs.values())
            for buffer in buffers:
                self._flush(buffer)

    def _flush(self, buffer: RunBuffer) -> None:
        with buffer.writing:
            batch = buffer.take()
            if not batch:
                return
            # Stored output is best effort: a write that fails (a full disk) must never fail the run.
            with contextlib.suppress(Exception):
                buffer.store.append_output(buffer.run_id, batch)

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None


__all__ = ["CAP_VARIABLE", "DEFAULT_CAP", "OutputRecorder", "cap_from_env", "event_line"]

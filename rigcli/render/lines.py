"""Turn engine events into short styled lines; shared by the plain renderer and the live view."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import NamedTuple, TypeVar

from rigcli.events import (
    ArtifactCreated,
    ArtifactUnconfirmed,
    CommandCompleted,
    CommandOutput,
    CommandStarted,
    Event,
    InteractionAwaitingUser,
    InteractionCompleted,
    LogOutput,
    NodeCached,
    NodeCompleted,
    NodeFailed,
    NodeStarted,
    ProviderEvent,
    StateLockTakeover,
    StateLockWaiting,
    StateWarning,
    WorkflowApplyCompleted,
    WorkflowApplyStarted,
    WorkspaceCreateStarted,
    WorkspaceOperationCompleted,
    WorkspaceOperationStarted,
    WorkspaceReady,
    WorkspaceReaped,
    WorkspaceRemoveCompleted,
    WorkspaceRemoveStarted,
)
from rigcli.records import LockHolder, held_for
from rigcli.sanitize import sanitize
from rigcli.speed.records import lazy_dataclass
from rigcli.wording import counted

E = TypeVar("E", bound=Event)

OUTPUT_INDENT = "    "  # command output sits under its node
# Longest unterminated line held back waiting for its newline; longer is shown as it comes.
PARTIAL_LINE_LIMIT = 64 * 1024
# Fields every provider event may carry that say nothing about the event itself.
_HOLDING = frozenset({"node.cached", "workflow.apply.completed"})  # kinds that keep an apply's lines held
_CONTEXT_FIELDS = frozenset({"type", "node_path", "provider_id", "workflow", "timestamp", "ts"})


class Line(NamedTuple):
    text: str
    style: str = ""


class Glyphs(NamedTuple):
    ok: str
    active: str
    err: str
    arrow: str
    dot: str
    warn: str


UNICODE = Glyphs("✓", "●", "✗", "→", "·", "!")
ASCII = Glyphs("ok", "*", "x", "->", "-", "!")


def glyphs() -> Glyphs:
    encoding = (getattr(sys.stderr, "encoding", None) or "").lower().replace("-", "")
    return UNICODE if encoding.startswith("utf") else ASCII


def format_duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f}s"
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class EventFormatter:
    """Stateful: it times nodes and operations, and joins streamed output into whole lines."""

    def __init__(self, *, debug: bool | None = None, colour: bool = False) -> None:
        self.debug = os.environ.get("RIG_DEBUG") == "1" if debug is None else debug
        self.colour = colour  # keep the colour in untrusted output (a terminal without NO_COLOR)
        self.g = glyphs()
        self.started: dict[str, float] = {}
        self._partial: dict[tuple[str, str], str] = {}
        # The apply header and cached nodes, held until something runs: an apply (or the apply
        # inside a fork) where everything is cached shows as one line, not a block per node.
        self._held: list[Line] | None = None
        self.formatters = self._formatter_map()

    def release(self) -> list[Line]:
        """The held apply header and cached-node lines, now that something else is shown."""
        held, self._held = self._held or [], None
        return [Line(sanitize(line.text, colour=self.colour), line.style) for line in held]

    def elapsed(self, key: str) -> str:
        start = self.started.get(key)
        return format_duration(time.monotonic() - start) if start is not None else ""

    def output_block(self, event: CommandOutput, indent: str = OUTPUT_INDENT) -> str | None:
        """The whole lines of a command's streamed chunk, sanitized, each after ``indent``, as one string.

        A trailing partial line waits for the next chunk. Whole chunks, not lines, keep 200 MB
        of output cheap: one regex pass and one replace per chunk instead of work per line.
        """
        body = self._output_body(event)
        return None if body is None else indent + body.replace("\n", "\n" + indent)

    def output_bytes(
        self, event: CommandOutput, indent: str, errors: str = "strict"
    ) -> tuple[bytes | memoryview, ...] | None:
        """``output_block`` and its line end, encoded as UTF-8 in pieces to write in turn: what writing
        it to a UTF-8 stream writes.

        The indent goes in after encoding: ``bytes.replace`` does in a fifth of the time what
        ``str.replace`` does, and 1 GB of output is 10 million lines to indent.
        """
        start = indent.encode("utf-8", errors)
        text = event.data
        if (
            text.endswith("\n")
            and (event.command_id, event.stream) not in self._partial
            and sanitize(text, colour=self.colour) is text
        ):
            # The usual chunk: whole lines, nothing to strip. Indented with its last line end, and
            # written but for the indent that puts after it: no copy of the lines without their end.
            indented = text.encode("utf-8", errors).replace(b"\n", b"\n" + start)
            return start, memoryview(indented)[: len(indented) - len(start)]
        body = self._output_body(event)
        if body is None:
            return None
        return start, body.encode("utf-8", errors).replace(b"\n", b"\n" + start), b"\n"

    def _output_body(self, event: CommandOutput) -> str | None:
        key = (event.command_id, event.stream)
        partial = self._partial.pop(key, None)
        text = event.data if partial is None else partial + event.data  # the usual chunk ends a line: no copy
        cut = text.rfind("\n")
        body, tail = (text[:cut], text[cut + 1 :]) if cut >= 0 else (None, text)
        if len(tail) >= PARTIAL_LINE_LIMIT:
            body = tail if body is None else f"{body}\n{tail}"  # no end in sight: show it in pieces
        elif tail:
            self._partial[key] = tail
        return None if body is None else sanitize(body, colour=self.colour)

    def flush(self, owner: str) -> list[str]:
        """Partial lines still held for one command id."""
        keys = [key for key in self._partial if key[0] == owner]
        return [self._partial.pop(key) for key in keys]

    def lines(self, event: Event) -> list[Line]:
        """The lines one event shows; events with no entry in ``_formatters`` show nothing."""
        formatter = self.formatters.get(event.kind)
        shown = formatter is not None or isinstance(event, ProviderEvent)
        if self._held is not None and shown and event.kind not in _HOLDING:
            return self.release() + self.lines(event)
        if formatter is not None:
            lines = formatter(event)
        elif isinstance(event, ProviderEvent):
            lines = [self.provider_line(event)]
        else:
            return []
        # Lines carry what commands, handlers and providers wrote: never let it drive the terminal.
        return [Line(sanitize(line.text, colour=self.colour), line.style) for line in lines]

    def _formatter_map(self) -> dict[str, KindFormatter]:
        # Every kind the plain and live views show, and the method that shows it. Kinds not
        # here show nothing (plan.created: the CLI prints the plan table itself).
        return {
            "state.warning": _only(StateWarning, self._state_warning),
            "artifact.unconfirmed": _only(ArtifactUnconfirmed, self._artifact_unconfirmed),
            "state.lock.waiting": _only(StateLockWaiting, self._state_lock_waiting),
            "state.lock.takeover": _only(StateLockTakeover, self._state_lock_takeover),
            "workflow.apply.started": _only(WorkflowApplyStarted, self._workflow_apply_started),
            "workflow.apply.completed": _only(WorkflowApplyCompleted, self._workflow_apply_completed),
            "node.cached": _only(NodeCached, self._node_cached),
            "node.started": _only(NodeStarted, self._node_started),
            "node.completed": _only(NodeCompleted, self._node_completed),
            "node.failed": _only(NodeFailed, self._node_failed),
            "log.output": _only(LogOutput, self._log_output),
            "command.started": _only(CommandStarted, self._command_started),
            "command.output": _only(CommandOutput, self._command_output),
            "command.completed": _only(CommandCompleted, self._command_completed),
            "artifact.created": _only(ArtifactCreated, self._artifact_created),
            "interaction.awaiting_user": _only(InteractionAwaitingUser, self._interaction_awaiting_user),
            "interaction.completed": _only(InteractionCompleted, self._interaction_completed),
            "workspace.create.started": _only(WorkspaceCreateStarted, self._workspace_create_started),
            "workspace.ready": _only(WorkspaceReady, self._workspace_ready),
            "workspace.remove.started": _only(WorkspaceRemoveStarted, self._workspace_remove_started),
            "workspace.remove.completed": _only(WorkspaceRemoveCompleted, self._workspace_remove_completed),
            "workspace.reaped": _only(WorkspaceReaped, self._workspace_reaped),
            "workspace.operation.started": _only(WorkspaceOperationStarted, self._workspace_operation_started),
            "workspace.operation.completed": _only(WorkspaceOperationCompleted, self._workspace_operation_completed),
        }

    def provider_line(self, event: ProviderEvent) -> Line:
        details = " ".join(
            f"{key}={value}"
            for key, value in event.extra.items()
            if key not in _CONTEXT_FIELDS and isinstance(value, (str, int, float)) and not isinstance(value, bool)
        )
        return Line(f"    {event.kind} {details}".rstrip(), "cyan")

    def _state_warning(self, event: StateWarning) -> list[Line]:
        return [Line(f"{self.g.warn} {event.message}", "yellow")]

    def _artifact_unconfirmed(self, event: ArtifactUnconfirmed) -> list[Line]:
        return [Line(f"{self.g.warn} {event.message}; its cached runs are kept", "yellow")]

    def _state_lock_waiting(self, event: StateLockWaiting) -> list[Line]:
        who = _holder_name(event.holder, detail=True)
        return [Line(f"{self.g.active} waiting for the state lock held by {who}", "yellow")]

    def _state_lock_takeover(self, event: StateLockTakeover) -> list[Line]:
        who = _holder_name(event.holder)
        return [Line(f"{self.g.warn} took over the state lock from {who}, which is no longer running", "yellow")]

    def _workflow_apply_started(self, event: WorkflowApplyStarted) -> list[Line]:
        self.started["workflow:" + event.workflow] = time.monotonic()
        self._held = [Line(f"{self.g.active} apply {event.workflow}", "bold")]
        return []

    def _workflow_apply_completed(self, event: WorkflowApplyCompleted) -> list[Line]:
        if self._held is not None and event.cached_node_count == event.node_count:
            self._held = None
            return [Line(f"{self.g.ok} {event.workflow}: {event.cached_node_count} cached", "green")]
        ran = event.node_count - event.cached_node_count - len(event.skipped)
        took = self.elapsed("workflow:" + event.workflow)
        suffix = f" in {took}" if took else ""
        done = f"{self.g.ok} {event.workflow}: ran {ran}, cached {event.cached_node_count}"
        if not event.skipped:
            return [Line(f"{done}{suffix}", "green")]
        return [
            Line(f"{done}, skipped {len(event.skipped)}{suffix}", "green"),
            Line(f"  skipped because of --only: {', '.join(event.skipped)}", "dim"),
        ]

    def _node_cached(self, event: NodeCached) -> list[Line]:
        line = Line(f"  {self.g.ok} {event.node_path}  cached", "dim")
        if self._held is not None:
            self._held.append(line)
            return []
        return [line]

    def _node_started(self, event: NodeStarted) -> list[Line]:
        self.started[event.node_path] = time.monotonic()
        return [Line(f"  {self.g.active} {event.node_path}", "cyan")]

    def _node_completed(self, event: NodeCompleted) -> list[Line]:
        return [Line(f"  {self.g.ok} {event.node_path}  {self.elapsed(event.node_path)}".rstrip(), "green")]

    def _node_failed(self, event: NodeFailed) -> list[Line]:
        error = (event.error or "failed").strip().splitlines()
        message = error[0] if error else "failed"
        took = self.elapsed(event.node_path)
        after = f" after {took}" if took else ""
        return [Line(f"  {self.g.err} {event.node_path}  failed{after}: {message}", "red")]

    def _log_output(self, event: LogOutput) -> list[Line]:
        """Handler print()/logging output: the engine sends it a whole line at a time."""
        if event.stream == "debug" and not self.debug:
            return []
        style, mark = {"warn": ("yellow", f"{self.g.warn} "), "debug": ("dim", "debug ")}.get(event.stream, ("", ""))
        return [Line(f"    {mark}{line}", style) for line in event.data.splitlines() if line.strip()]

    def _command_started(self, event: CommandStarted) -> list[Line]:
        return [Line(f"    $ {event.command}", "dim")]

    def _command_output(self, event: CommandOutput) -> list[Line]:
        block = self.output_block(event)
        return [] if block is None else [Line(line) for line in block.split("\n")]

    def _command_completed(self, event: CommandCompleted) -> list[Line]:
        result = [Line(f"    {line}") for line in self.flush(event.command_id)]
        if event.exit_code not in (0, None):
            label = event.name or event.command_id or "command"
            result.append(Line(f"    {label} exited {event.exit_code}", "yellow"))
        if event.truncated_bytes:
            result.append(Line(f"    ({counted(event.truncated_bytes, 'byte')} of output not kept)", "dim"))
        return result

    def _artifact_created(self, event: ArtifactCreated) -> list[Line]:
        if isinstance(event.artifact, dict):
            return [Line(f"    + {event.artifact.get('provider')}:{event.artifact.get('kind')}", "dim")]
        return []

    def _interaction_awaiting_user(self, event: InteractionAwaitingUser) -> list[Line]:
        lines = [Line(f"  {self.g.arrow} waiting on {event.title}", "yellow")]
        lines += [Line(f"    {value}") for value in (event.url, event.instructions) if value]
        return lines

    def _interaction_completed(self, event: InteractionCompleted) -> list[Line]:
        return [Line(f"  {self.g.ok} {event.title} completed", "green")]

    def _workspace_create_started(self, event: WorkspaceCreateStarted) -> list[Line]:
        return [Line(f"{self.g.active} creating workspace {event.workspace}", "bold")]

    def _workspace_ready(self, event: WorkspaceReady) -> list[Line]:
        return [Line(f"{self.g.ok} {event.workspace} ready", "green")]

    def _workspace_remove_started(self, event: WorkspaceRemoveStarted) -> list[Line]:
        return [Line(f"{self.g.active} removing workspace {event.workspace}", "bold")]

    def _workspace_remove_completed(self, event: WorkspaceRemoveCompleted) -> list[Line]:
        return [Line(f"{self.g.ok} removed {event.workspace}", "green")]

    def _workspace_reaped(self, event: WorkspaceReaped) -> list[Line]:
        if event.action == "failed":
            return [
                Line(
                    f"{self.g.warn} could not reap workspace {event.workspace}: {event.detail}; "
                    "it is marked reap-failed (rig reap tries again)",
                    "yellow",
                )
            ]
        which = "idle" if event.action == "stopped" else "expired"
        return [Line(f"{self.g.ok} {event.action} {which} workspace {event.workspace} ({event.detail})", "green")]

    def _workspace_operation_started(self, event: WorkspaceOperationStarted) -> list[Line]:
        self.started[f"op:{event.workspace}/{event.operation}"] = time.monotonic()
        return [Line(f"{self.g.active} {event.operation} on {event.workspace}", "bold")]

    def _workspace_operation_completed(self, event: WorkspaceOperationCompleted) -> list[Line]:
        took = self.elapsed(f"op:{event.workspace}/{event.operation}")
        return [Line(f"{self.g.ok} {event.operation} on {event.workspace}  {took}".rstrip(), "green")]


@lazy_dataclass(frozen=True)
class KindFormatter:
    """One row of the kind → method map: the event class it takes (its KIND is the key) and the method."""

    event_class: type[Event]
    method: Callable[..., list[Line]]  # takes an event_class instance; checked in __call__

    def __call__(self, event: Event) -> list[Line]:
        return self.method(event) if isinstance(event, self.event_class) else []


def _only(kind: type[E], method: Callable[[E], list[Line]]) -> KindFormatter:
    return KindFormatter(kind, method)


def _holder_name(holder: LockHolder, *, detail: bool = False) -> str:
    """``rig apply (pid 42 on box)``; with ``detail``, who runs it and for how long (a waiter's question)."""
    if not holder.pid:
        return "another rig process"
    where = f"pid {holder.pid} on {holder.host or 'an unknown host'}"
    if detail and holder.user:
        where += f" by {holder.user}"
    duration = held_for(holder) if detail else ""
    return f"rig {holder.command} ({where})" + (f", held for {duration}" if duration else "")


__all__ = ["ASCII", "UNICODE", "EventFormatter", "Glyphs", "Line", "format_duration", "glyphs"]

"""Engine events: frozen dataclasses, each with a ``kind`` and ``to_json()``, delivered in emission order.

The engine never prints; it emits. Renderers (terminal, tests, embedding hosts) subscribe to the
bus. ``to_json()`` gives the DESIGN §7 shape: ``{"type": kind, ...fields}`` with snake_case keys.

Providers emit plain mappings through ``RuntimeContext.emit`` (that is their public contract);
``from_provider`` turns one into the typed event of its kind when rig knows the kind (command
output, interactions), or a ``ProviderEvent`` (``vm.created``, ``machine.created``, ...) when not.
Fields a provider adds beyond the typed ones are kept in ``extra`` and appear in ``to_json()``.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from rigcli import masking
from rigcli.jsonutil import JsonValue, to_plain_json
from rigcli.records import LockHolder

ProviderEventData = Mapping[str, object]  # what a provider hands to ``context.emit``


@dataclass(frozen=True, eq=False, repr=False)
class Event:
    """Base of every event; subclasses set ``KIND`` and declare their fields."""

    KIND: ClassVar[str] = ""

    @property
    def kind(self) -> str:
        return self.KIND

    def __repr__(self) -> str:
        # Not generated per class: ~30 generated __repr__ functions cost a cached plan's import time.
        return f"{type(self).__name__}({self.to_json()!r})"

    def to_json(self) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = {"type": self.kind}
        extra: Mapping[str, JsonValue] = {}
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if item.name == "extra":
                extra = value
            else:
                data[item.name.rstrip("_")] = to_plain_json(value)
        return {**extra, **data}


@dataclass(frozen=True, eq=False, repr=False)
class NodeEvent(Event):
    """An event about one node; ``node_path`` is its display path (or a hook's label)."""

    node_path: str
    extra: Mapping[str, JsonValue] = field(default_factory=dict, kw_only=True)


# -- plan and apply -------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class PlanCreated(Event):
    KIND: ClassVar[str] = "plan.created"
    workflow: str
    cached_node_count: int
    node_count: int


@dataclass(frozen=True, eq=False, repr=False)
class WorkflowApplyStarted(Event):
    KIND: ClassVar[str] = "workflow.apply.started"
    workflow: str
    node_count: int


@dataclass(frozen=True, eq=False, repr=False)
class WorkflowApplyCompleted(Event):
    KIND: ClassVar[str] = "workflow.apply.completed"
    workflow: str
    ran: int
    cached_node_count: int
    node_count: int


@dataclass(frozen=True, eq=False, repr=False)
class NodeCached(NodeEvent):
    KIND: ClassVar[str] = "node.cached"
    run_id: str


@dataclass(frozen=True, eq=False, repr=False)
class NodeStarted(NodeEvent):
    KIND: ClassVar[str] = "node.started"
    index: int
    total: int
    run_id: str


@dataclass(frozen=True, eq=False, repr=False)
class NodeCompleted(NodeEvent):
    KIND: ClassVar[str] = "node.completed"
    run_id: str


@dataclass(frozen=True, eq=False, repr=False)
class NodeFailed(NodeEvent):
    KIND: ClassVar[str] = "node.failed"
    error: str
    run_id: str


@dataclass(frozen=True, eq=False, repr=False)
class LogOutput(NodeEvent):
    """A whole line a handler printed or logged; ``stream`` is info, warn, stderr or debug."""

    KIND: ClassVar[str] = "log.output"
    stream: str
    data: str


@dataclass(frozen=True, eq=False, repr=False)
class ArtifactCreated(NodeEvent):
    KIND: ClassVar[str] = "artifact.created"
    artifact: JsonValue


# -- commands and interactions (emitted by providers, typed here) ---------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class CommandStarted(NodeEvent):
    KIND: ClassVar[str] = "command.started"
    command_id: str
    command: str
    name: str | None = None


@dataclass(frozen=True, eq=False, repr=False)
class CommandOutput(NodeEvent):
    """A chunk of a command's output (whole lines where the provider could tell)."""

    KIND: ClassVar[str] = "command.output"
    command_id: str
    stream: str  # stdout | stderr
    data: str


@dataclass(frozen=True, eq=False, repr=False)
class CommandCompleted(NodeEvent):
    KIND: ClassVar[str] = "command.completed"
    command_id: str
    exit_code: int | None = None
    truncated_bytes: int = 0
    name: str | None = None


@dataclass(frozen=True, eq=False, repr=False)
class InteractionAwaitingUser(NodeEvent):
    KIND: ClassVar[str] = "interaction.awaiting_user"
    interaction_id: str
    title: str
    url: str | None = None
    instructions: str | None = None


@dataclass(frozen=True, eq=False, repr=False)
class InteractionCompleted(NodeEvent):
    KIND: ClassVar[str] = "interaction.completed"
    interaction_id: str
    title: str


@dataclass(frozen=True, eq=False, repr=False)
class ProviderEvent(NodeEvent):
    """Any other event a provider emits (``vm.created``, ``machine.created``, ...), kept whole."""

    type_: str

    @property
    def kind(self) -> str:
        return self.type_


# -- workspaces and operations --------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class WorkspaceCreateStarted(Event):
    KIND: ClassVar[str] = "workspace.create.started"
    workflow: str
    workspace: str


@dataclass(frozen=True, eq=False, repr=False)
class WorkspaceReady(Event):
    KIND: ClassVar[str] = "workspace.ready"
    workflow: str
    workspace: str


@dataclass(frozen=True, eq=False, repr=False)
class WorkspaceRemoveStarted(Event):
    KIND: ClassVar[str] = "workspace.remove.started"
    workflow: str
    workspace: str


@dataclass(frozen=True, eq=False, repr=False)
class WorkspaceRemoveCompleted(Event):
    KIND: ClassVar[str] = "workspace.remove.completed"
    workflow: str
    workspace: str


@dataclass(frozen=True, eq=False, repr=False)
class WorkspaceOperationStarted(Event):
    KIND: ClassVar[str] = "workspace.operation.started"
    workflow: str
    workspace: str
    operation: str


@dataclass(frozen=True, eq=False, repr=False)
class WorkspaceOperationCompleted(Event):
    KIND: ClassVar[str] = "workspace.operation.completed"
    workflow: str
    workspace: str
    operation: str


@dataclass(frozen=True, eq=False, repr=False)
class OperationStarted(Event):
    KIND: ClassVar[str] = "operation.started"
    workflow: str
    operation: str


@dataclass(frozen=True, eq=False, repr=False)
class OperationCompleted(Event):
    KIND: ClassVar[str] = "operation.completed"
    workflow: str
    operation: str


# -- state ------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class StateWarning(Event):
    """Something about the state database the user must know (e.g. it was moved aside)."""

    KIND: ClassVar[str] = "state.warning"
    message: str


@dataclass(frozen=True, eq=False, repr=False)
class StateLockWaiting(Event):
    KIND: ClassVar[str] = "state.lock.waiting"
    holder: LockHolder


@dataclass(frozen=True, eq=False, repr=False)
class StateLockTakeover(Event):
    KIND: ClassVar[str] = "state.lock.takeover"
    holder: LockHolder


# Provider-emitted kinds rig understands; anything else becomes a ProviderEvent.
_FROM_PROVIDERS: dict[str, type[NodeEvent]] = {
    cls.KIND: cls
    for cls in (CommandStarted, CommandOutput, CommandCompleted, InteractionAwaitingUser, InteractionCompleted)
}


def from_provider(raw: ProviderEventData, node_path: str) -> NodeEvent:
    """The typed event for a provider's mapping; ``node_path`` fills in when the provider left it out."""
    data = to_plain_json(dict(raw))
    assert isinstance(data, dict)
    kind = str(data.pop("type", "") or "provider.event")
    path = data.pop("node_path", None)
    where = path if isinstance(path, str) and path else node_path
    cls = _FROM_PROVIDERS.get(kind)
    if cls is not None:
        names = {item.name for item in dataclasses.fields(cls)} - {"node_path", "extra"}
        typed = {name: data.pop(name) for name in list(data) if name in names}
        try:
            return cls(node_path=where, extra=data, **typed)
        except TypeError:  # a required field is missing: keep the event whole rather than drop it
            data.update(typed)
    return ProviderEvent(node_path=where, type_=kind, extra=data)


EventListener = Callable[[Event], None]


class EventBus:
    """Fan events out to listeners, one event at a time, in the order they were emitted.

    The one masking point for events: listeners (renderers, the workspace journal, embedding
    hosts) only ever see events with registered secrets replaced by ``***``.
    """

    def __init__(self) -> None:
        self._listeners: list[EventListener] = []
        # Parallel branches emit from worker threads; one lock keeps delivery ordered.
        self._lock = threading.RLock()
        self._streams: dict[tuple[str, str, str], masking.StreamMasker] = {}

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def emit(self, event: Event) -> None:
        with self._lock:
            for item in self._masked(event) if masking.active() else (event,):
                for listener in list(self._listeners):
                    listener(item)

    def _masked(self, event: Event) -> list[Event]:
        """``event`` masked; command output is masked as a stream, so a secret split across chunks is too."""
        if isinstance(event, CommandOutput):
            key = (event.node_path, event.command_id, event.stream)
            data = self._streams.setdefault(key, masking.StreamMasker()).feed(event.data)
            return [masking.mask_fields(dataclasses.replace(event, data=data))] if data else []
        held: list[Event] = []
        if isinstance(event, CommandCompleted):
            for key in [key for key in self._streams if key[:2] == (event.node_path, event.command_id)]:
                rest = self._streams.pop(key).flush()
                if rest:
                    held.append(CommandOutput(node_path=key[0], command_id=key[1], stream=key[2], data=rest))
        return [*held, masking.mask_fields(event)]


__all__ = [
    "ArtifactCreated",
    "CommandCompleted",
    "CommandOutput",
    "CommandStarted",
    "Event",
    "EventBus",
    "EventListener",
    "InteractionAwaitingUser",
    "InteractionCompleted",
    "LogOutput",
    "NodeCached",
    "NodeCompleted",
    "NodeEvent",
    "NodeFailed",
    "NodeStarted",
    "OperationCompleted",
    "OperationStarted",
    "PlanCreated",
    "ProviderEvent",
    "ProviderEventData",
    "StateLockTakeover",
    "StateLockWaiting",
    "StateWarning",
    "WorkflowApplyCompleted",
    "WorkflowApplyStarted",
    "WorkspaceCreateStarted",
    "WorkspaceOperationCompleted",
    "WorkspaceOperationStarted",
    "WorkspaceReady",
    "WorkspaceRemoveCompleted",
    "WorkspaceRemoveStarted",
    "from_provider",
]

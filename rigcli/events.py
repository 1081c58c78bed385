"""Engine events: immutable dataclasses, each with a ``kind`` and ``to_json()``, delivered in emission order.

The engine never prints; it emits. Renderers (terminal, tests, embedding hosts) subscribe to the
bus (``event_bus.py``). ``to_json()`` gives the DESIGN §7 shape: ``{"type": kind, ...fields}`` with snake_case keys.

Providers emit plain mappings through ``RuntimeContext.emit`` (that is their public contract);
``from_provider`` turns one into the typed event of its kind when rig knows the kind (command
output, interactions), or a ``ProviderEvent`` (``vm.created``, ``machine.created``, ...) when not.
Fields a provider adds beyond the typed ones are kept in ``extra`` and appear in ``to_json()``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import field
from typing import ClassVar

from rigcli.jsonutil import JsonValue, to_plain_json
from rigcli.records import LockHolder
from rigcli.speed.immutable import WriteOnce
from rigcli.speed.records import lazy_dataclass

ProviderEventData = Mapping[str, object]  # what a provider hands to ``context.emit``


@lazy_dataclass(eq=False, repr=False)
class Event(WriteOnce):
    """Base of every event; subclasses set ``KIND`` and declare their fields.

    Immutable through ``WriteOnce`` rather than ``frozen=True`` (see rigcli/speed/immutable.py).
    """

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
            elif isinstance(value, LockHolder):
                data[item.name] = value.to_json()
            else:
                data[item.name.rstrip("_")] = to_plain_json(value)
        return {**extra, **data}


@lazy_dataclass(eq=False, repr=False)
class NodeEvent(Event):
    """An event about one node; ``node_path`` is its display path (or a hook's label)."""

    node_path: str
    extra: Mapping[str, JsonValue] = field(default_factory=dict, kw_only=True)


# -- plan and apply -------------------------------------------------------------------------------


@lazy_dataclass(eq=False, repr=False)
class PlanCreated(Event):
    """A workflow's plan was computed: how many of its nodes are cached."""

    KIND: ClassVar[str] = "plan.created"
    workflow: str
    cached_node_count: int
    node_count: int


@lazy_dataclass(eq=False, repr=False)
class WorkflowApplyStarted(Event):
    """An apply of a workflow began."""

    KIND: ClassVar[str] = "workflow.apply.started"
    workflow: str
    node_count: int
    apply_id: str = ""  # its record in the apply history (``rig runs``, ``rig logs --run``)


@lazy_dataclass(eq=False, repr=False)
class WorkflowApplyCompleted(Event):
    """An apply of a workflow finished: how many nodes ran and how many were reused."""

    KIND: ClassVar[str] = "workflow.apply.completed"
    workflow: str
    ran: int
    cached_node_count: int
    node_count: int
    apply_id: str = ""
    skipped: tuple[str, ...] = ()  # tasks left pending (``apply --only``), by path


@lazy_dataclass(eq=False, repr=False)
class NodeCached(NodeEvent):
    """A node's cached run is reused."""

    KIND: ClassVar[str] = "node.cached"
    run_id: str


@lazy_dataclass(eq=False, repr=False)
class NodeStarted(NodeEvent):
    """A node's handler is about to run (``index`` of ``total``)."""

    KIND: ClassVar[str] = "node.started"
    index: int
    total: int
    run_id: str


@lazy_dataclass(eq=False, repr=False)
class NodeCompleted(NodeEvent):
    """A node's run succeeded and was recorded."""

    KIND: ClassVar[str] = "node.completed"
    run_id: str


@lazy_dataclass(eq=False, repr=False)
class NodeFailed(NodeEvent):
    """A node's run failed; ``error`` is the one-line message."""

    KIND: ClassVar[str] = "node.failed"
    error: str
    run_id: str


@lazy_dataclass(eq=False, repr=False)
class LogOutput(NodeEvent):
    """A whole line a handler printed or logged; ``stream`` is info, warn, stderr or debug."""

    KIND: ClassVar[str] = "log.output"
    stream: str
    data: str


@lazy_dataclass(eq=False, repr=False)
class ArtifactCreated(NodeEvent):
    """A node's output holds an artifact ref (``provider`` and ``kind`` keys)."""

    KIND: ClassVar[str] = "artifact.created"
    artifact: JsonValue


# -- commands and interactions (emitted by providers, typed here) ---------------------------------


@lazy_dataclass(eq=False, repr=False)
class CommandStarted(NodeEvent):
    """A provider started a command for a node."""

    KIND: ClassVar[str] = "command.started"
    command_id: str
    command: str
    name: str | None = None


@lazy_dataclass(eq=False, repr=False)
class CommandOutput(NodeEvent):
    """A chunk of a command's output (whole lines where the provider could tell)."""

    KIND: ClassVar[str] = "command.output"
    command_id: str
    stream: str  # stdout | stderr
    data: str


@lazy_dataclass(eq=False, repr=False)
class CommandCompleted(NodeEvent):
    """A provider's command ended; ``truncated_bytes`` counts output not kept in memory."""

    KIND: ClassVar[str] = "command.completed"
    command_id: str
    exit_code: int | None = None
    truncated_bytes: int = 0
    name: str | None = None


@lazy_dataclass(eq=False, repr=False)
class InteractionAwaitingUser(NodeEvent):
    """A provider waits for the user (a login URL, a device code)."""

    KIND: ClassVar[str] = "interaction.awaiting_user"
    interaction_id: str
    title: str
    url: str | None = None
    instructions: str | None = None


@lazy_dataclass(eq=False, repr=False)
class InteractionCompleted(NodeEvent):
    """The user finished an interaction."""

    KIND: ClassVar[str] = "interaction.completed"
    interaction_id: str
    title: str


@lazy_dataclass(eq=False, repr=False)
class ProviderEvent(NodeEvent):
    """Any other event a provider emits (``vm.created``, ``machine.created``, ...), kept whole."""

    type_: str

    @property
    def kind(self) -> str:
        return self.type_


# -- workspaces and operations --------------------------------------------------------------------


@lazy_dataclass(eq=False, repr=False)
class WorkspaceCreateStarted(Event):
    """A workspace's create hook is about to run."""

    KIND: ClassVar[str] = "workspace.create.started"
    workflow: str
    workspace: str


@lazy_dataclass(eq=False, repr=False)
class WorkspaceReady(Event):
    """A workspace was created and recorded."""

    KIND: ClassVar[str] = "workspace.ready"
    workflow: str
    workspace: str


@lazy_dataclass(eq=False, repr=False)
class WorkspaceRemoveStarted(Event):
    """A workspace's remove hook (or clean-up) is about to run."""

    KIND: ClassVar[str] = "workspace.remove.started"
    workflow: str
    workspace: str


@lazy_dataclass(eq=False, repr=False)
class WorkspaceRemoveCompleted(Event):
    """A workspace's record was deleted."""

    KIND: ClassVar[str] = "workspace.remove.completed"
    workflow: str
    workspace: str


@lazy_dataclass(eq=False, repr=False)
class WorkspaceReaped(Event):
    """Expiry acted on a workspace: ``removed`` (its ttl is over), ``stopped`` (unused for its
    idle_stop), or ``failed`` (it is marked ``reap-failed``; ``detail`` says why)."""

    KIND: ClassVar[str] = "workspace.reaped"
    workflow: str
    workspace: str
    action: str
    detail: str


@lazy_dataclass(eq=False, repr=False)
class WorkspaceOperationStarted(Event):
    """A workspace operation is about to run."""

    KIND: ClassVar[str] = "workspace.operation.started"
    workflow: str
    workspace: str
    operation: str


@lazy_dataclass(eq=False, repr=False)
class WorkspaceOperationCompleted(Event):
    """A workspace operation finished."""

    KIND: ClassVar[str] = "workspace.operation.completed"
    workflow: str
    workspace: str
    operation: str


@lazy_dataclass(eq=False, repr=False)
class OperationStarted(Event):
    """A workflow-level operation is about to run."""

    KIND: ClassVar[str] = "operation.started"
    workflow: str
    operation: str


@lazy_dataclass(eq=False, repr=False)
class OperationCompleted(Event):
    """A workflow-level operation finished."""

    KIND: ClassVar[str] = "operation.completed"
    workflow: str
    operation: str


# -- state ------------------------------------------------------------------------------------------


@lazy_dataclass(eq=False, repr=False)
class StateWarning(Event):
    """Something about the state database the user must know (e.g. it was moved aside)."""

    KIND: ClassVar[str] = "state.warning"
    message: str


@lazy_dataclass(eq=False, repr=False)
class StateLockWaiting(Event):
    """Another rig process holds the state's writer lock; this one waits for it."""

    KIND: ClassVar[str] = "state.lock.waiting"
    holder: LockHolder


@lazy_dataclass(eq=False, repr=False)
class StateLockTakeover(Event):
    """The writer lock's holder died without releasing it; this process took it over."""

    KIND: ClassVar[str] = "state.lock.takeover"
    holder: LockHolder


# -- providers --------------------------------------------------------------------------------------


@lazy_dataclass(eq=False, repr=False)
class ArtifactUnconfirmed(Event):
    """Whether a cached run's artifact is still there could not be asked (its registry does not answer):
    the run stays cached; ``message`` names where and why."""

    KIND: ClassVar[str] = "artifact.unconfirmed"
    provider_id: str
    message: str


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


__all__ = [
    "ArtifactCreated",
    "ArtifactUnconfirmed",
    "CommandCompleted",
    "CommandOutput",
    "CommandStarted",
    "Event",
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
    "WorkspaceReaped",
    "WorkspaceRemoveCompleted",
    "WorkspaceRemoveStarted",
    "from_provider",
]

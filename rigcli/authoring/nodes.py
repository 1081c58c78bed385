"""Workflow nodes (task, sequence, parallel) and their immutable builder methods.

Nodes are values: every builder call returns a new node and never changes the one it was
called on, so a fragment can be reused in several places. Sequences keep their children as
a linked chain so appending is O(1) even for very long sequences.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol, TypeGuard, Union, overload

from rigcli.authoring.base import EMPTY_CONFIG, NodeMethods, frozen
from rigcli.authoring.operations import (
    Handler,
    OperationDefinition,
    ProviderScope,
    WorkspaceDefinition,
    check_operation_id,
    make_operation,
)
from rigcli.authoring.ports import parse_ports
from rigcli.authoring.ttl import CacheTtl, parse_lifetime, parse_ttl
from rigcli.authoring.values import ProviderDefinition
from rigcli.errors import ConfigError
from rigcli.jsonutil import JsonValue
from rigcli.speed.records import evolve, lazy_dataclass

if TYPE_CHECKING:
    from pydantic import BaseModel  # type-only: loading a project must not import pydantic

# Names handlers receive by parameter; a provider cannot be scoped under one of them.
CONTEXT_NAMES = frozenset({"step", "providers", "config", "local", "log", "workflow", "workspace", "input"})

_NO_PROVIDERS: ProviderScope = MappingProxyType({})


class _Validates(Protocol):
    def model_validate(self, value: object, /) -> object: ...  # a pydantic model class


class _Parses(Protocol):
    def parse(self, value: object, /) -> object: ...


OutputSchema = _Validates | _Parses
"""What ``output=`` takes: a pydantic model, or anything with ``model_validate`` or ``parse``."""


def _is_output_schema(value: object) -> TypeGuard[OutputSchema]:
    return hasattr(value, "model_validate") or hasattr(value, "parse")


@lazy_dataclass(frozen=True, eq=False)
class TaskNode(NodeMethods):
    """A task: a handler with its cache options, configure stack and cache scope."""

    name: str
    handler: Handler
    cache_ttl: float | None = None
    output: OutputSchema | None = None
    version: str | None = None
    config: Mapping[str, JsonValue] = field(default_factory=lambda: EMPTY_CONFIG)
    cache_scope: str | None = None
    defined_at: str | None = field(default=None, compare=False, repr=False)  # "file:line", for messages
    kind = "task"


@lazy_dataclass(frozen=True, eq=False)
class ParallelNode(NodeMethods):
    """Parallel branches, each a node that starts from the same incoming context."""

    branches: tuple[tuple[str, Node], ...]
    config: Mapping[str, JsonValue] = field(default_factory=lambda: EMPTY_CONFIG)
    cache_scope: str | None = None
    name = "parallel"
    kind = "parallel"


@lazy_dataclass(frozen=True, eq=False)
class Child:
    """A node placed in a sequence, with the builder's provider scope at that point."""

    node: Node
    scope: ProviderScope


@lazy_dataclass(frozen=True, eq=False)
class _Link:
    """One child of a sequence, linked to the one before it (appending shares the prefix)."""

    child: Child
    previous: _Link | None


def make_task(
    name: str,
    handler: Handler | None,
    *,
    cache_ttl: CacheTtl = None,
    output: OutputSchema | None = None,
    version: str | int | None = None,
) -> TaskNode:
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("Task names must be non-empty strings")
    if "." in name:
        raise ConfigError(f'Task name "{name}" cannot contain "."; nest a sequence instead')
    if handler is None or not callable(handler):
        raise ConfigError(f"Task {name} is missing a handler")
    if output is not None and not _is_output_schema(output):
        raise ConfigError(f"Task {name} output= needs a pydantic model or an object with model_validate/parse")
    return TaskNode(
        name=name,
        handler=handler,
        cache_ttl=parse_ttl(cache_ttl),
        output=output,
        version=None if version is None else str(version),
        defined_at=_call_site(),
    )


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _call_site() -> str | None:
    """``file:line`` of the project code that made the node (the first frame outside rigcli)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back  # type: ignore[assignment]
    return None if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"


@overload
def task(
    name: str,
    handler: Handler,
    *,
    cache_ttl: CacheTtl = None,
    output: OutputSchema | None = None,
    version: str | int | None = None,
) -> TaskNode: ...
@overload
def task(
    name: str,
    handler: None = None,
    *,
    cache_ttl: CacheTtl = None,
    output: OutputSchema | None = None,
    version: str | int | None = None,
) -> Callable[[Handler], TaskNode]: ...
def task(
    name: str,
    handler: Handler | None = None,
    *,
    cache_ttl: CacheTtl = None,
    output: OutputSchema | None = None,
    version: str | int | None = None,
) -> TaskNode | Callable[[Handler], TaskNode]:
    """``@task("name", cache_ttl=...)`` turns a function into a standalone task node."""
    if handler is not None:
        return make_task(name, handler, cache_ttl=cache_ttl, output=output, version=version)

    def decorate(fn: Handler) -> TaskNode:
        return make_task(name, fn, cache_ttl=cache_ttl, output=output, version=version)

    return decorate


@lazy_dataclass(frozen=True, eq=False)
class SequenceNode(NodeMethods):
    """A sequence of children with its workflow name, provider scope, workspace and operations."""

    name: str
    workflow: str
    scope: ProviderScope = field(default_factory=lambda: _NO_PROVIDERS)
    config: Mapping[str, JsonValue] = field(default_factory=lambda: EMPTY_CONFIG)
    cache_scope: str | None = None
    workspace_definition: WorkspaceDefinition | None = None
    operations: tuple[OperationDefinition, ...] = ()
    workspace_operations: tuple[OperationDefinition, ...] = ()
    _tail: _Link | None = field(default=None, repr=False)
    _length: int = 0
    kind = "sequence"

    @property
    def children(self) -> tuple[Child, ...]:
        items: list[Child] = []
        link = self._tail
        while link is not None:
            items.append(link.child)
            link = link.previous
        items.reverse()
        return tuple(items)

    def __iter__(self) -> Iterator[Child]:
        return iter(self.children)

    def __len__(self) -> int:
        return self._length

    def _append(self, node: Node) -> SequenceNode:
        link = _Link(Child(node, self.scope), self._tail)
        return evolve(self, _tail=link, _length=self._length + 1)

    def task(
        self,
        name: str,
        handler: Handler | None = None,
        *,
        cache_ttl: CacheTtl = None,
        output: OutputSchema | None = None,
        version: str | int | None = None,
    ) -> SequenceNode:
        """Append a task; its returned ``{"ctx": ...}`` replaces the context for later nodes."""
        return self._append(make_task(name, handler, cache_ttl=cache_ttl, output=output, version=version))

    step = task

    def add(self, node: Node) -> SequenceNode:
        """Append a reusable node (a fragment): a task, sequence or parallel node."""
        if not isinstance(node, (TaskNode, SequenceNode, ParallelNode)):
            raise ConfigError(f"add() takes a task, sequence or parallel node, not {type(node).__name__}")
        return self._append(node)

    def parallel(self, branches: Mapping[str, Node] | None = None, /, **named: Node) -> SequenceNode:
        """Append branches that run concurrently from the same context; their outputs are namespaced."""
        items = dict(branches or {})
        items.update(named)
        if not items:
            raise ConfigError("parallel() needs at least one branch")
        for key, node in items.items():
            if not isinstance(key, str) or not key.strip():
                raise ConfigError("Parallel branch names must be non-empty")
            if not isinstance(node, (TaskNode, SequenceNode, ParallelNode)):
                raise ConfigError(f"Parallel branch {key} must be a task, sequence or parallel node")
        return self._append(ParallelNode(tuple(items.items())))

    def add_provider(self, name: str, provider: ProviderDefinition) -> SequenceNode:
        """Put a provider in scope, under ``name``, for every later node of this sequence."""
        if name in CONTEXT_NAMES:
            raise ConfigError(f"Provider name {name} is reserved by the task context")
        if not name.isidentifier():
            raise ConfigError(f"Provider name {name!r} must be a Python identifier")
        if not isinstance(provider, ProviderDefinition):
            raise ConfigError(f"Provider {name} is not a valid rig provider (use define_provider)")
        return replace(self, scope=frozen({**self.scope, name: provider}))

    def remove_provider(self, name: str) -> SequenceNode:
        """Take a provider out of scope for every later node of this sequence."""
        return replace(self, scope=frozen({**self.scope, name: None}))

    def workspace(
        self,
        create: Handler,
        remove: Handler | None = None,
        *,
        ttl: CacheTtl = None,
        idle_stop: CacheTtl = None,
        on_start: Handler | None = None,
        on_attach: Handler | None = None,
        ports: Sequence[int | Mapping[str, object]] | None = None,
    ) -> SequenceNode:
        """Let this workflow create workspaces: ``create`` returns the workspace ctx.

        ``ttl``: a workspace is removed that long after its fork (``rig reap``, or any later rig
        command); ``idle_stop``: stopped after that long unused, where its provider can tell.
        Durations as for ``cache_ttl`` (seconds, a timedelta, "8h"); ``rig fork --ttl`` overrides.
        ``on_start``: called after ``rig start`` started the workspace's machines; ``on_attach``:
        before each ``rig shell`` session (not ``rig exec``); both get what ``remove`` gets.
        ``ports``: what a workspace serves (``3000`` or ``{"port": 8080, "label": "api", "protocol":
        "http"}``): ``rig forward WS`` forwards them, ``rig ls --json`` lists them.
        """
        hooks = (create, remove, on_start, on_attach)
        if not callable(create) or any(hook is not None and not callable(hook) for hook in hooks):
            raise ConfigError("workspace(create=..., remove=..., on_start=..., on_attach=...) needs functions")
        definition = WorkspaceDefinition(
            create,
            remove,
            self.scope,
            ttl=parse_lifetime(ttl, "workspace ttl"),
            idle_stop=parse_lifetime(idle_stop, "workspace idle_stop"),
            on_start=on_start,
            on_attach=on_attach,
            ports=parse_ports(ports),
        )
        return replace(self, workspace_definition=definition)

    def workspace_operation(
        self,
        id: str,
        run: Handler,
        input: type[BaseModel] | None = None,
        title: str | None = None,
        description: str | None = None,
    ) -> SequenceNode:
        """An operation run against one workspace: ``rig op WORKSPACE ID``."""
        op_id = check_operation_id(id, workspace=True, existing=self.workspace_operations)
        definition = make_operation(op_id, run, input, title, description, self.scope, workspace=True)
        return replace(self, workspace_operations=(*self.workspace_operations, definition))

    def operation(
        self,
        id: str,
        run: Handler,
        input: type[BaseModel] | None = None,
        title: str | None = None,
        description: str | None = None,
    ) -> SequenceNode:
        """A workflow-level operation: ``rig op ID [ARGS]``."""
        op_id = check_operation_id(id, workspace=False, existing=self.operations)
        definition = make_operation(op_id, run, input, title, description, self.scope, workspace=False)
        return replace(self, operations=(*self.operations, definition))


Node = Union[TaskNode, SequenceNode, ParallelNode]  # noqa: UP007 - a runtime alias must work on 3.10 with forward refs


__all__ = [
    "CONTEXT_NAMES",
    "Child",
    "Node",
    "ParallelNode",
    "ProviderScope",
    "SequenceNode",
    "TaskNode",
    "make_task",
    "task",
]

"""Workflow nodes (task, sequence, parallel) and their immutable builder methods.

Nodes are values: every builder call returns a new node and never changes the one it was
called on, so a fragment can be reused in several places. Sequences keep their children as
a linked chain so appending is O(1) even for very long sequences.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Union

from rigcli.authoring.ttl import parse_ttl
from rigcli.authoring.values import ProviderDefinition
from rigcli.errors import ConfigError, InputError
from rigcli.jsonutil import find_non_json, to_plain_json

RESERVED_OPERATION_IDS = frozenset(
    [
        "apply",
        "cache",
        "completion",
        "create",
        "doctor",
        "fork",
        "help",
        "init",
        "ls",
        "op",
        "plan",
        "projects",
        "providers",
        "remove",
        "rm",
        "run",
        "version",
    ]
)
# Names handlers receive by parameter; a provider cannot be scoped under one of them.
CONTEXT_NAMES = frozenset({"step", "providers", "config", "local", "log", "workflow", "workspace", "input"})
WORKSPACE_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
WORKSPACE_NAME_MAX = 63

ProviderScope = Mapping[str, ProviderDefinition | None]  # None: removed from scope
_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


def _json_config(values: Mapping[str, Any]) -> dict[str, Any]:
    bad = find_non_json(values)
    if bad is not None:
        raise ConfigError(f"configure input must be JSON-serializable (at {bad})")
    plain = to_plain_json(values)
    assert isinstance(plain, dict)
    return plain


def _merge_config(current: Mapping[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Mapping[str, Any]:
    merged = dict(current)
    for arg in args:
        if not isinstance(arg, Mapping):
            raise ConfigError("configure takes a dict or keyword arguments")
        merged.update(_json_config(arg))
    merged.update(_json_config(kwargs))
    return _frozen(merged)


def _check_scope(scope: str | None) -> str | None:
    if scope not in (None, "global", "local"):
        raise ConfigError(f"cache scope must be 'global' or 'local', not {scope!r}")
    return scope


class _NodeMethods:
    """configure/global_/local shared by every node kind."""

    config: Mapping[str, Any]
    cache_scope: str | None

    def configure(self, *values: Mapping[str, Any], **options: Any) -> Any:
        """Stack JSON config for this subtree; calls on one node shallow-merge (later keys win)."""
        return replace(self, config=_merge_config(self.config, values, options))  # type: ignore[type-var]

    def global_(self) -> Any:
        """Cache this subtree in the global fragment cache, shared across projects."""
        return replace(self, cache_scope="global")  # type: ignore[type-var]

    def local(self) -> Any:
        """Cache this subtree in the project's own state again."""
        return replace(self, cache_scope="local")  # type: ignore[type-var]


@dataclass(frozen=True, eq=False)
class TaskNode(_NodeMethods):
    name: str
    handler: Callable[..., Any]
    cache_ttl: float | None = None
    output: Any = None
    version: str | None = None
    config: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    cache_scope: str | None = None
    kind = "task"


@dataclass(frozen=True, eq=False)
class ParallelNode(_NodeMethods):
    branches: tuple[tuple[str, Node], ...]
    config: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    cache_scope: str | None = None
    name = "parallel"
    kind = "parallel"


@dataclass(frozen=True, eq=False)
class Child:
    """A node placed in a sequence, with the builder's provider scope at that point."""

    node: Node
    scope: ProviderScope


@dataclass(frozen=True, eq=False)
class _Link:
    child: Child
    previous: _Link | None


@dataclass(frozen=True, eq=False)
class WorkspaceDefinition:
    create: Callable[..., Any]
    remove: Callable[..., Any] | None
    scope: ProviderScope


@dataclass(frozen=True, eq=False)
class OperationDefinition:
    id: str
    run: Callable[..., Any]
    input: Any
    title: str | None
    description: str | None
    scope: ProviderScope
    workspace: bool  # True: runs against one workspace (``rig op WS OP``)


def make_task(
    name: str,
    handler: Callable[..., Any] | None,
    *,
    cache_ttl: Any = None,
    output: Any = None,
    version: Any = None,
) -> TaskNode:
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("Task names must be non-empty strings")
    if "." in name:
        raise ConfigError(f'Task name "{name}" cannot contain "."; nest a sequence instead')
    if handler is None or not callable(handler):
        raise ConfigError(f"Task {name} is missing a handler")
    if output is not None and not (hasattr(output, "model_validate") or hasattr(output, "parse")):
        raise ConfigError(f"Task {name} output= needs a pydantic model or an object with model_validate/parse")
    return TaskNode(
        name=name,
        handler=handler,
        cache_ttl=parse_ttl(cache_ttl),
        output=output,
        version=None if version is None else str(version),
    )


def task(
    name: str,
    handler: Callable[..., Any] | None = None,
    *,
    cache_ttl: Any = None,
    output: Any = None,
    version: Any = None,
) -> Any:
    """``@task("name", cache_ttl=...)`` turns a function into a standalone task node."""
    if handler is not None:
        return make_task(name, handler, cache_ttl=cache_ttl, output=output, version=version)

    def decorate(fn: Callable[..., Any]) -> TaskNode:
        return make_task(name, fn, cache_ttl=cache_ttl, output=output, version=version)

    return decorate


@dataclass(frozen=True, eq=False)
class SequenceNode(_NodeMethods):
    name: str
    workflow: str
    scope: ProviderScope = field(default_factory=lambda: _EMPTY)
    config: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
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
        return replace(self, _tail=link, _length=self._length + 1)

    def task(
        self,
        name: str,
        handler: Callable[..., Any] | None = None,
        *,
        cache_ttl: Any = None,
        output: Any = None,
        version: Any = None,
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
        return replace(self, scope=_frozen({**self.scope, name: provider}))

    def remove_provider(self, name: str) -> SequenceNode:
        """Take a provider out of scope for every later node of this sequence."""
        return replace(self, scope=_frozen({**self.scope, name: None}))

    def workspace(self, create: Callable[..., Any], remove: Callable[..., Any] | None = None) -> SequenceNode:
        """Let this workflow create workspaces: ``create`` returns the workspace ctx."""
        if not callable(create) or (remove is not None and not callable(remove)):
            raise ConfigError("workspace(create=..., remove=...) needs functions")
        return replace(self, workspace_definition=WorkspaceDefinition(create, remove, self.scope))

    def workspace_operation(
        self,
        id: str,
        run: Callable[..., Any],
        input: Any = None,
        title: str | None = None,
        description: str | None = None,
    ) -> SequenceNode:
        """An operation run against one workspace: ``rig op WORKSPACE ID``."""
        op_id = _check_operation_id(id, workspace=True, existing=self.workspace_operations)
        definition = _operation(op_id, run, input, title, description, self.scope, workspace=True)
        return replace(self, workspace_operations=(*self.workspace_operations, definition))

    def operation(
        self,
        id: str,
        run: Callable[..., Any],
        input: Any = None,
        title: str | None = None,
        description: str | None = None,
    ) -> SequenceNode:
        """A workflow-level operation: ``rig op ID [ARGS]``."""
        op_id = _check_operation_id(id, workspace=False, existing=self.operations)
        definition = _operation(op_id, run, input, title, description, self.scope, workspace=False)
        return replace(self, operations=(*self.operations, definition))


Node = Union[TaskNode, SequenceNode, ParallelNode]  # noqa: UP007 - a runtime alias must work on 3.10 with forward refs


def _check_operation_id(op_id: Any, *, workspace: bool, existing: tuple[OperationDefinition, ...]) -> str:
    label = "Workspace operation" if workspace else "Operation"
    if not isinstance(op_id, str) or not op_id.strip():
        raise ConfigError(f"{label} ids must be non-empty")
    op_id = op_id.strip()
    if workspace and "/" in op_id:
        raise ConfigError(f'{label} ids cannot contain "/" ({op_id})')
    if op_id in RESERVED_OPERATION_IDS:
        raise ConfigError(
            f"{label} id {op_id} is reserved by rig (reserved: {', '.join(sorted(RESERVED_OPERATION_IDS))})"
        )
    if any(item.id == op_id for item in existing):
        raise ConfigError(f"{label} id {op_id} is already defined")
    return op_id


def _operation(
    op_id: str,
    run: Any,
    input_model: Any,
    title: str | None,
    description: str | None,
    scope: ProviderScope,
    *,
    workspace: bool,
) -> OperationDefinition:
    if not callable(run):
        raise ConfigError(f"Operation {op_id} needs run=<function>")
    if input_model is not None and not (inspect.isclass(input_model) and hasattr(input_model, "model_validate")):
        raise ConfigError(f"Operation {op_id} input= must be a pydantic model class")
    return OperationDefinition(op_id, run, input_model, title, description, scope, workspace)


@dataclass(frozen=True)
class App:
    """``workflow(name, providers=...)``: names a workflow and the providers in scope from the start."""

    name: str
    providers: Mapping[str, ProviderDefinition] = field(default_factory=lambda: _EMPTY)

    def sequence(self, name: str) -> SequenceNode:
        return new_sequence(name, workflow=self.name, scope=self.providers)

    def task(self, name: str, handler: Callable[..., Any] | None = None, **options: Any) -> TaskNode:
        return make_task(name, handler, **options)

    step = task


def new_sequence(name: str, *, workflow: str | None = None, scope: ProviderScope = _EMPTY) -> SequenceNode:
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("Sequence names must be non-empty strings")
    return SequenceNode(name=name, workflow=workflow or name, scope=_frozen(scope))


def _check_providers(providers: Mapping[str, Any] | None) -> Mapping[str, ProviderDefinition]:
    result: dict[str, ProviderDefinition] = {}
    for name, definition in (providers or {}).items():
        if name in CONTEXT_NAMES:
            raise ConfigError(f"Provider name {name} is reserved by the task context")
        if not isinstance(definition, ProviderDefinition):
            raise ConfigError(f"Provider {name} is not a valid rig provider (use define_provider)")
        result[name] = definition
    return _frozen(result)


def workflow(name: str, providers: Mapping[str, ProviderDefinition] | None = None) -> App:
    """Start a workflow; ``app.sequence(name)`` builds its root sequence."""
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("Workflow names must be non-empty strings")
    return App(name, _check_providers(providers))


def sequence(name: str) -> SequenceNode:
    """A sequence that is also a workflow of the same name (or a fragment to ``.add``)."""
    return new_sequence(name)


@dataclass(frozen=True)
class ProjectConfig:
    """``define_config(workflows=[...], providers={...})``."""

    workflows: tuple[SequenceNode, ...]
    providers: Mapping[str, ProviderDefinition]


def define_config(workflows: Any, providers: Mapping[str, ProviderDefinition] | None = None) -> ProjectConfig:
    """Several workflows and the providers in scope for all of them."""
    items = list(workflows.values()) if isinstance(workflows, Mapping) else workflows
    if isinstance(items, SequenceNode):
        items = [items]
    if not isinstance(items, (list, tuple)):
        raise ConfigError("define_config(workflows=...) takes a list of workflows")
    for item in items:
        if not isinstance(item, SequenceNode):
            raise ConfigError(f"define_config workflows must be sequences, not {type(item).__name__}")
    return ProjectConfig(tuple(items), _check_providers(providers))


def check_workspace_name(name: Any) -> str:
    if not isinstance(name, str) or name == "":
        raise InputError("create requires a workspace name")
    if len(name) > WORKSPACE_NAME_MAX or not WORKSPACE_NAME_PATTERN.match(name):
        raise InputError(
            f'Workspace name "{name}" is invalid. Use only letters, numbers, ".", "_" and "-", '
            f"start with a letter or number, and keep it under {WORKSPACE_NAME_MAX + 1} characters."
        )
    return name


__all__ = [
    "CONTEXT_NAMES",
    "RESERVED_OPERATION_IDS",
    "App",
    "Child",
    "Node",
    "OperationDefinition",
    "ParallelNode",
    "ProjectConfig",
    "ProviderScope",
    "SequenceNode",
    "TaskNode",
    "WorkspaceDefinition",
    "check_workspace_name",
    "define_config",
    "make_task",
    "sequence",
    "task",
    "workflow",
]

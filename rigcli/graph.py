"""Compile a workflow's node tree into plan order: paths, scopes, config stacks, fragments.

Pure: no I/O. Display paths join names with "."; the root sequence's name is omitted;
nested sequences and parallel branch keys prefix their children, and a branch whose node
has the branch's own name is not repeated. Inside a ``.global_()`` subtree the cache path
restarts at the fragment boundary (including the fragment's own name), so the same fragment
has the same cache paths wherever it is used.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import field, replace
from types import MappingProxyType
from typing import Union

from rigcli.authoring.nodes import (
    CONTEXT_NAMES,
    Node,
    ParallelNode,
    ProviderScope,
    SequenceNode,
    TaskNode,
)
from rigcli.authoring.operations import Handler, OperationDefinition, WorkspaceDefinition
from rigcli.authoring.values import ProviderDefinition
from rigcli.errors import ConfigError
from rigcli.handler_params import HOOK_NAMES, TASK_NAMES, check_handler_params
from rigcli.jsonutil import JsonValue
from rigcli.speed.records import evolve, lazy_dataclass

Scope = Mapping[str, ProviderDefinition]
ConfigStack = tuple[Mapping[str, JsonValue], ...]  # configure() levels, root first


@lazy_dataclass(frozen=True, eq=False)
class TaskSpec:
    """A task placed in a workflow: path, store, configure stack and provider scope."""

    index: int  # 0-based position in plan order
    path: str  # display path
    name: str
    node: TaskNode
    store: str  # "local", or the fragment hash that caches it
    cache_path: str
    config_stack: ConfigStack
    providers: Scope
    kind = "task"

    @property
    def config(self) -> Mapping[str, JsonValue]:
        merged: dict[str, JsonValue] = {}
        for level in self.config_stack:
            merged.update(level)
        return MappingProxyType(merged)


@lazy_dataclass(frozen=True, eq=False)
class ParallelSpec:
    """Parallel branches placed in a workflow, each a tuple of steps."""

    path: str
    branches: tuple[tuple[str, tuple[StepSpec, ...]], ...]
    kind = "parallel"


StepSpec = Union[TaskSpec, ParallelSpec]  # noqa: UP007 - referenced before ParallelSpec is complete


@lazy_dataclass(frozen=True, eq=False)
class FragmentSpec:
    """A ``.global_()`` subtree; ``hash`` is filled in by the cache-key room."""

    node: Node
    config_stack: ConfigStack
    hash: str = ""


@lazy_dataclass(frozen=True, eq=False)
class HookSpec:
    """A workspace hook with the providers in its scope."""

    fn: Handler
    providers: Scope
    label: str


@lazy_dataclass(frozen=True, eq=False)
class OperationSpec:
    """An operation with the providers in its scope."""

    definition: OperationDefinition
    providers: Scope


@lazy_dataclass(eq=False)
class CompiledWorkflow:
    """A workflow compiled to steps: tasks in plan order, fragments, hooks and operations."""

    name: str
    root: SequenceNode
    steps: tuple[StepSpec, ...]
    tasks: tuple[TaskSpec, ...]
    fragments: dict[str, FragmentSpec]  # by hash, once hashes are known
    create_hook: HookSpec | None
    remove_hook: HookSpec | None
    operations: dict[str, OperationSpec]
    workspace_operations: dict[str, OperationSpec]
    root_providers: Scope = field(default_factory=dict)
    workspace_ttl: float | None = None  # workspace(ttl=...): seconds until the reaper removes one
    workspace_idle_stop: float | None = None  # workspace(idle_stop=...): seconds unused until it is stopped
    start_hook: HookSpec | None = None  # workspace(on_start=...): after rig start
    attach_hook: HookSpec | None = None  # workspace(on_attach=...): before each rig shell

    @property
    def creates_workspace(self) -> bool:
        return self.create_hook is not None

    def all_scopes(self) -> list[Scope]:
        scopes: list[Scope] = [task.providers for task in self.tasks]
        for hook in (self.create_hook, self.remove_hook, self.start_hook, self.attach_hook):
            if hook is not None:
                scopes.append(hook.providers)
        for op in (*self.operations.values(), *self.workspace_operations.values()):
            scopes.append(op.providers)
        return scopes


LOCAL_STORE = "local"


@lazy_dataclass(frozen=True)
class _Place:
    """Where in the tree the walk is: display and cache prefixes, scope, config stack, store."""

    prefix: str
    scope: Scope
    stack: ConfigStack
    store: str
    cache_prefix: str

    def within(self, name: str) -> _Place:
        return evolve(self, prefix=_join(self.prefix, name), cache_prefix=_join(self.cache_prefix, name))


class _Compiler:
    def __init__(self, workflow: str, fragment_hasher: Callable[[FragmentSpec], str]) -> None:
        self.workflow = workflow
        self.tasks: list[TaskSpec] = []
        self.fragments: dict[str, FragmentSpec] = {}
        self._hash_fragment = fragment_hasher
        self._scopes: dict[tuple[int, int], Scope] = {}
        self._paths: dict[str, TaskNode] = {}  # two tasks at one path would share one cache entry

    def overlay(self, inherited: Scope, delta: ProviderScope) -> Scope:
        if not delta:
            return inherited
        key = (id(inherited), id(delta))
        cached = self._scopes.get(key)
        if cached is None:
            merged = dict(inherited)
            for name, definition in delta.items():
                if definition is None:
                    merged.pop(name, None)
                else:
                    merged[name] = definition
            cached = MappingProxyType(merged)
            self._scopes[key] = cached
        return cached

    def node(self, node: Node, at: _Place) -> tuple[StepSpec, ...]:
        if node.config:
            at = replace(at, stack=(*at.stack, node.config))
        if node.cache_scope == "global" and at.store == LOCAL_STORE:
            fragment = FragmentSpec(node, at.stack)
            fragment = replace(fragment, hash=self._hash_fragment(fragment))
            self.fragments.setdefault(fragment.hash, fragment)
            # Cache paths restart at the fragment boundary, keeping the fragment's own name.
            at = replace(at, store=fragment.hash, cache_prefix=node.name if isinstance(node, SequenceNode) else "")
        elif node.cache_scope == "local" and at.store != LOCAL_STORE:
            at = replace(at, store=LOCAL_STORE, cache_prefix=at.prefix)
        if isinstance(node, TaskNode):
            return (self.task(node, at),)
        if isinstance(node, ParallelNode):
            return (self.parallel(node, at),)
        return self.sequence(node, at)

    def sequence(self, seq: SequenceNode, at: _Place) -> tuple[StepSpec, ...]:
        steps: list[StepSpec] = []
        for child in seq.children:
            scope = self.overlay(at.scope, child.scope)
            child_at = at if scope is at.scope else evolve(at, scope=scope)
            if isinstance(child.node, SequenceNode):
                child_at = child_at.within(child.node.name)
            steps.extend(self.node(child.node, child_at))
        return tuple(steps)

    def parallel(self, node: ParallelNode, at: _Place) -> ParallelSpec:
        branches: list[tuple[str, tuple[StepSpec, ...]]] = []
        for key, branch in node.branches:
            branch_at = at
            if not (isinstance(branch, TaskNode) and branch.name == key):
                branch_at = branch_at.within(key)
            if isinstance(branch, SequenceNode) and branch.name != key:
                branch_at = branch_at.within(branch.name)
            branches.append((key, self.node(branch, branch_at)))
        return ParallelSpec(at.prefix, tuple(branches))

    def task(self, node: TaskNode, at: _Place) -> TaskSpec:
        path = _join(at.prefix, node.name)
        earlier = self._paths.get(path)
        if earlier is not None:
            places = " and ".join(str(where or "an unknown place") for where in (earlier.defined_at, node.defined_at))
            raise ConfigError(
                f"Duplicate task {path} in workflow {self.workflow}: defined at {places}; "
                "give one of them another name (or nest it in a sequence)"
            )
        self._paths[path] = node
        check_handler_params(node.handler, TASK_NAMES, at.scope, f"Task {path}")
        spec = TaskSpec(
            index=len(self.tasks),
            path=path,
            name=node.name,
            node=node,
            store=at.store,
            cache_path=_join(at.cache_prefix, node.name),
            config_stack=at.stack,
            providers=at.scope,
        )
        self.tasks.append(spec)
        return spec


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


# Compiling a nested sequence costs two Python frames per level: this allows about 5,000
# levels (Python's default of 1,000 frames stopped at about 490).
COMPILE_RECURSION_LIMIT = 10_000


def compile_workflow(
    root: SequenceNode, root_providers: Scope, fragment_hasher: Callable[[FragmentSpec], str]
) -> CompiledWorkflow:
    """The workflow ``root`` in plan order, with its scopes, hooks and operations resolved."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, COMPILE_RECURSION_LIMIT))
    try:
        return _compile(root, root_providers, fragment_hasher)
    except RecursionError:
        raise ConfigError(
            f"Workflow {root.workflow} is nested too deeply to compile (sequences inside sequences, "
            f"more than about {COMPILE_RECURSION_LIMIT // 2} levels deep)"
        ) from None
    finally:
        sys.setrecursionlimit(previous)


def _compile(
    root: SequenceNode, root_providers: Scope, fragment_hasher: Callable[[FragmentSpec], str]
) -> CompiledWorkflow:
    compiler = _Compiler(root.workflow, fragment_hasher)
    base_scope: Scope = MappingProxyType(dict(root_providers))
    steps = compiler.node(root, _Place(prefix="", scope=base_scope, stack=(), store=LOCAL_STORE, cache_prefix=""))
    create_hook = remove_hook = start_hook = attach_hook = None
    definition: WorkspaceDefinition | None = root.workspace_definition
    if definition is not None:
        hook_scope = compiler.overlay(base_scope, definition.scope)
        check_handler_params(definition.create, HOOK_NAMES, hook_scope, f"Workflow {root.workflow} workspace create")
        create_hook = HookSpec(definition.create, hook_scope, "create")
        if definition.remove is not None:
            check_handler_params(
                definition.remove, HOOK_NAMES, hook_scope, f"Workflow {root.workflow} workspace remove"
            )
            remove_hook = HookSpec(definition.remove, hook_scope, "remove")
        start_hook, attach_hook = (
            _hook(function, hook_scope, label, root.workflow)
            for function, label in ((definition.on_start, "on_start"), (definition.on_attach, "on_attach"))
        )
    operations = {}
    for op in root.operations:
        op_scope = compiler.overlay(base_scope, op.scope)
        check_handler_params(op.run, HOOK_NAMES, op_scope, f"Operation {op.id}")
        operations[op.id] = OperationSpec(op, op_scope)
    workspace_operations = {}
    for op in root.workspace_operations:
        op_scope = compiler.overlay(base_scope, op.scope)
        check_handler_params(op.run, HOOK_NAMES, op_scope, f"Workspace operation {op.id}")
        workspace_operations[op.id] = OperationSpec(op, op_scope)
    return CompiledWorkflow(
        name=root.workflow,
        root=root,
        steps=steps,
        tasks=tuple(compiler.tasks),
        fragments=compiler.fragments,
        create_hook=create_hook,
        remove_hook=remove_hook,
        operations=operations,
        workspace_operations=workspace_operations,
        root_providers=base_scope,
        workspace_ttl=definition.ttl if definition is not None else None,
        workspace_idle_stop=definition.idle_stop if definition is not None else None,
        start_hook=start_hook,
        attach_hook=attach_hook,
    )


def _hook(function: Handler | None, scope: Scope, label: str, workflow: str) -> HookSpec | None:
    if function is None:
        return None
    check_handler_params(function, HOOK_NAMES, scope, f"Workflow {workflow} workspace {label}")
    return HookSpec(function, scope, label)


__all__ = [
    "CONTEXT_NAMES",
    "CompiledWorkflow",
    "FragmentSpec",
    "HookSpec",
    "OperationSpec",
    "ParallelSpec",
    "StepSpec",
    "TaskSpec",
    "compile_workflow",
]

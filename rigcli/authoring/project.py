"""Workflows and projects: ``workflow()``, ``sequence()``, ``define_config()`` and workspace names."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import field
from types import MappingProxyType

from rigcli.authoring.base import frozen
from rigcli.authoring.nodes import CONTEXT_NAMES, OutputSchema, ProviderScope, SequenceNode, TaskNode, make_task
from rigcli.authoring.operations import Handler
from rigcli.authoring.ttl import CacheTtl
from rigcli.authoring.values import ProviderDefinition
from rigcli.errors import ConfigError, InputError
from rigcli.speed.records import lazy_dataclass

WORKSPACE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"  # compiled on first use, by re's own cache
WORKSPACE_NAME_MAX = 63
_EMPTY: Mapping[str, ProviderDefinition] = MappingProxyType({})


@lazy_dataclass(frozen=True)
class App:
    """``workflow(name, providers=...)``: names a workflow and the providers in scope from the start."""

    name: str
    providers: Mapping[str, ProviderDefinition] = field(default_factory=lambda: _EMPTY)

    def sequence(self, name: str) -> SequenceNode:
        return new_sequence(name, workflow=self.name, scope=self.providers)

    def task(
        self,
        name: str,
        handler: Handler | None = None,
        *,
        cache_ttl: CacheTtl = None,
        output: OutputSchema | None = None,
        version: str | int | None = None,
    ) -> TaskNode:
        return make_task(name, handler, cache_ttl=cache_ttl, output=output, version=version)

    step = task


def new_sequence(name: str, *, workflow: str | None = None, scope: ProviderScope = _EMPTY) -> SequenceNode:
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("Sequence names must be non-empty strings")
    return SequenceNode(name=name, workflow=workflow or name, scope=frozen(scope))


def _check_providers(providers: Mapping[str, object] | None) -> Mapping[str, ProviderDefinition]:
    result: dict[str, ProviderDefinition] = {}
    for name, definition in (providers or {}).items():
        if name in CONTEXT_NAMES:
            raise ConfigError(f"Provider name {name} is reserved by the task context")
        if not isinstance(definition, ProviderDefinition):
            raise ConfigError(f"Provider {name} is not a valid rig provider (use define_provider)")
        result[name] = definition
    return frozen(result)


def workflow(name: str, providers: Mapping[str, ProviderDefinition] | None = None) -> App:
    """Start a workflow; ``app.sequence(name)`` builds its root sequence."""
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("Workflow names must be non-empty strings")
    return App(name, _check_providers(providers))


def sequence(name: str) -> SequenceNode:
    """A sequence that is also a workflow of the same name (or a fragment to ``.add``)."""
    return new_sequence(name)


@lazy_dataclass(frozen=True)
class ProjectConfig:
    """``define_config(workflows=[...], providers={...})``."""

    workflows: tuple[SequenceNode, ...]
    providers: Mapping[str, ProviderDefinition]


def define_config(
    workflows: SequenceNode | Sequence[SequenceNode] | Mapping[str, SequenceNode],
    providers: Mapping[str, ProviderDefinition] | None = None,
) -> ProjectConfig:
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


def check_workspace_name(name: object) -> str:
    if not isinstance(name, str) or name == "":
        raise InputError("create requires a workspace name")
    if len(name) > WORKSPACE_NAME_MAX or not re.match(WORKSPACE_NAME_PATTERN, name):
        raise InputError(
            f'Workspace name "{name}" is invalid. Use only letters, numbers, ".", "_" and "-", '
            f"start with a letter or number, and keep it under {WORKSPACE_NAME_MAX + 1} characters."
        )
    return name


__all__ = [
    "App",
    "ProjectConfig",
    "check_workspace_name",
    "define_config",
    "new_sequence",
    "sequence",
    "workflow",
]

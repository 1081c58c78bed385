"""The authoring DSL used in rig_config.py: pure data, no I/O."""

from __future__ import annotations

from rigcli.authoring.nodes import (
    App,
    OperationDefinition,
    ParallelNode,
    ProjectConfig,
    SequenceNode,
    TaskNode,
    WorkspaceDefinition,
    define_config,
    sequence,
    task,
    workflow,
)
from rigcli.authoring.values import ProviderDefinition, define_provider, env, secret

__all__ = [
    "App",
    "OperationDefinition",
    "ParallelNode",
    "ProjectConfig",
    "ProviderDefinition",
    "SequenceNode",
    "TaskNode",
    "WorkspaceDefinition",
    "define_config",
    "define_provider",
    "env",
    "secret",
    "sequence",
    "task",
    "workflow",
]

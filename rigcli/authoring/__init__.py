"""The authoring DSL used in rig_config.py: pure data, no I/O."""

from __future__ import annotations

from rigcli.authoring.nodes import (
    ParallelNode,
    SequenceNode,
    TaskNode,
    task,
)
from rigcli.authoring.operations import OperationDefinition, WorkspaceDefinition
from rigcli.authoring.project import App, ProjectConfig, define_config, sequence, workflow
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

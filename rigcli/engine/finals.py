"""A workflow's final tasks, and a workspace's provenance: the runs of them it was made from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from rigcli.engine.outdated import outdated_against
from rigcli.engine.results import WorkflowPlan
from rigcli.graph import CompiledWorkflow, StepSpec, TaskSpec
from rigcli.jsonutil import JsonObject, JsonValue
from rigcli.records import WorkspaceRecord


def final_tasks(workflow: CompiledWorkflow) -> tuple[TaskSpec, ...]:
    """The tasks whose output is the workflow's final context (several after a parallel step)."""

    def last(steps: tuple[StepSpec, ...]) -> list[TaskSpec]:
        for step in reversed(steps):
            if isinstance(step, TaskSpec):
                return [step]
            found = [task for _, branch in step.branches for task in last(branch)]
            if found:
                return found
        return []

    return tuple(last(workflow.steps))


def make_provenance(workflow: CompiledWorkflow, keys: Mapping[int, str], runs: Mapping[int, str]) -> JsonObject:
    """``{"final": [{"path", "run_id", "node_key"}], "ports": [...]}`` of an apply that used ``runs`` (task
    index → run id), and the ports its workspace() declares."""
    final: list[JsonValue] = [
        {"path": task.path, "run_id": runs.get(task.index), "node_key": keys.get(task.index)}
        for task in final_tasks(workflow)
    ]
    definition = workflow.root.workspace_definition
    ports = [cast("JsonValue", dict(port)) for port in definition.ports] if definition is not None else []
    return {"final": final, "ports": ports}  # ports: what rig ls --json lists without the config


def is_outdated(record: WorkspaceRecord, plan: WorkflowPlan, workflow: CompiledWorkflow) -> bool | None:
    """Whether ``plan`` would give the workflow's final tasks other runs than ``record`` was made
    from; None when the record has no provenance (made by an older rig)."""
    return outdated_against(record.provenance, plan_finals(plan, workflow))


def plan_finals(plan: WorkflowPlan, workflow: CompiledWorkflow) -> dict[str, str | None]:
    """Each final task's path and the run ``plan`` reuses for it (None: pending)."""
    nodes = {node.path: node for node in plan.nodes}
    finals: dict[str, str | None] = {}
    for task in final_tasks(workflow):
        node = nodes.get(task.path)
        finals[task.path] = node.run_id if node is not None and node.status == "cached" else None
    return finals


__all__ = ["final_tasks", "is_outdated", "make_provenance", "plan_finals"]

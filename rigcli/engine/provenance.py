"""What a workspace was made from, whether the workflow would now make something else, and why.

A fork records its workspace's **provenance**: the run id and cache key of each of the workflow's
final tasks (the ones whose output is the context the create hook received), and, for a fork of a
live workspace, which one. The context itself is the record's ``workflow_ctx``.

A workspace is **outdated** when the plan's final tasks are no longer exactly those runs: one is
pending (its handler, config or provider changed, it expired or was invalidated, an upstream task
is pending), a newer run replaced it (someone applied since), or the workflow's final tasks are
other tasks now. ``rig ls`` plans anyway, so this costs nothing more than reading the record.

``rig diff`` names the tasks: the runs the workspace was made from are found again by following
each final run's upstream run ids through the run journal, and each one that the plan would not
use now is judged as the plan judges a cached run (``judge_run``), so the reasons are the plan's
codes: ``task-changed``, ``provider-changed``, ``invalidated``, ``expired``, or the plan's own
reason (``artifact-invalid``, ...), else ``upstream-changed`` (it is the same, but built on
something that is not).
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from rigcli.cachekeys import judge_run, reason
from rigcli.engine.finals import is_outdated
from rigcli.engine.outdated import recorded_finals
from rigcli.engine.project import Project
from rigcli.engine.results import PlanNode, WorkflowPlan
from rigcli.engine.runindex import RunIndex
from rigcli.errors import RigError
from rigcli.graph import CompiledWorkflow
from rigcli.jsonutil import JsonObject
from rigcli.records import NodeRun, Reason, WorkspaceRecord, utc_datetime
from rigcli.speed.records import lazy_dataclass

if TYPE_CHECKING:
    from rigcli.engine.planner import Planner
    from rigcli.engine.workspaces import Workspaces

# A pending task whose plan reason says only that something before it differs.
_UPSTREAM_ONLY = frozenset({"upstream-pending", "upstream-changed"})


@lazy_dataclass(frozen=True)
class WorkspaceChange:
    """One task whose run the workflow would not use for this workspace now, and why."""

    path: str
    reason: Reason

    def to_json(self) -> JsonObject:
        return {"path": self.path, "reason": self.reason.to_json()}


@lazy_dataclass(frozen=True)
class WorkspaceDiff:
    """``rig diff WS``: whether it is outdated, and which tasks differ (plan order)."""

    workspace: str
    workflow: str
    outdated: bool
    changes: list[WorkspaceChange] = field(default_factory=list)

    def to_json(self) -> JsonObject:
        return {
            "workspace": self.workspace,
            "outdated": self.outdated,
            "changes": [change.to_json() for change in self.changes],
        }


def _made_from(record: WorkspaceRecord, workflow: CompiledWorkflow, runs: RunIndex) -> dict[str, NodeRun]:
    """The runs the workspace was made from, by cache path: its final runs and, through their
    upstream run ids, every run before them that the journal still has."""
    recorded = recorded_finals(record.provenance) or {}
    by_id: dict[str, NodeRun] = {}
    for task in workflow.tasks:
        for run in runs.candidates(task):
            by_id[run.id] = run
    found: dict[str, NodeRun] = {}
    queue = [run_id for run_id in recorded.values() if run_id]
    while queue:
        upstream = by_id.get(queue.pop())
        if upstream is None or upstream.node_path in found:
            continue
        found[upstream.node_path] = upstream
        queue.extend(upstream.upstream_run_ids)
    return found


class Drift:
    """Outdated workspaces and ``rig diff``."""

    def __init__(self, project: Project, planner: Planner, workspaces: Workspaces) -> None:
        self.project = project
        self.planner = planner
        self.workspaces = workspaces

    def outdated(self, record: WorkspaceRecord, plan: WorkflowPlan) -> bool | None:
        workflow = self.project.workflows.get(plan.workflow)
        return None if workflow is None else is_outdated(record, plan, workflow)

    async def diff(self, name: str, workflow_name: str | None = None) -> WorkspaceDiff:
        workflow, record = self.workspaces.find_workspace(name, workflow_name)
        if recorded_finals(record.provenance) is None:
            raise RigError(
                f"Workspace {record.name} was made before rig recorded what workspaces are made from; "
                f"rig fork {record.name} --replace remakes it from the current snapshot"
            )
        session = await self.project.session(workflow, "plan")
        plan, evaluation = await self.planner.plan_judged(workflow, session)
        made_from = _made_from(record, workflow, RunIndex(self.project.stores, workflow.name))
        keys = self.project.keys_for(workflow)
        nodes: dict[int, PlanNode] = {node.index - 1: node for node in plan.nodes}
        now = utc_datetime()
        changes: list[WorkspaceChange] = []
        for task in workflow.tasks:
            node = nodes[task.index]
            run = made_from.pop(task.cache_path, None)
            if run is not None and node.status == "cached" and node.run_id == run.id:
                continue
            if run is None:
                detail = "the workspace was not made from a run of it (or the run is no longer recorded)"
                why = node.reason if node.status == "pending" else reason("no-previous-run", detail)
            else:
                own = judge_run(
                    run,
                    key=keys[task.index],
                    provider_fp=session.fingerprint(task.providers),
                    upstream=run.upstream_run_ids,  # its own: upstream changes are named on their own tasks
                    ttl=task.node.cache_ttl,
                    now=now,
                )
                if own is not None:
                    # Worded as the plan words it: the component that changed since this run.
                    why = evaluation.named(task, own, run)
                elif node.status == "pending" and node.reason.code not in _UPSTREAM_ONLY:
                    why = node.reason
                else:
                    why = reason("upstream-changed")
            changes.append(WorkspaceChange(task.path, why))
        for path in made_from:  # a task the workspace was made from that the workflow no longer has
            changes.append(WorkspaceChange(path, reason("task-changed", "no longer in the workflow")))
        outdated = is_outdated(record, plan, workflow)
        return WorkspaceDiff(record.name, workflow.name, bool(outdated) or bool(changes), changes)


__all__ = ["Drift", "WorkspaceChange", "WorkspaceDiff"]

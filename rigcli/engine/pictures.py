"""Pictures of a project: the selected workflow as a graph (``rig graph``).

The graph is the plan (each task's verdict) laid on the compiled workflow's shape (shape.py).
"""

from __future__ import annotations

from rigcli.engine.planner import Planner
from rigcli.engine.project import Project
from rigcli.engine.shape import WorkflowGraph, workflow_graph


class Pictures:
    """What ``rig graph`` asks: the workflow's graph with its plan."""

    def __init__(self, project: Project, planner: Planner) -> None:
        self.project = project
        self.planner = planner

    async def graph(self, workflow: str | None = None) -> WorkflowGraph:
        selected = self.project.select(workflow)
        plan = await self.planner.plan_with(selected, await self.project.session(selected, "plan"))
        return workflow_graph(selected.name, selected.steps, plan.nodes)


__all__ = ["Pictures"]

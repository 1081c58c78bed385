"""Pictures of a project: the workflow as a graph (``rig graph``), an apply as a timeline and tasks
across applies (``rig runs --timeline`` and ``--stats``).

The graph is the plan (each task's verdict) laid on the compiled workflow's shape (shape.py); the
timeline and statistics are computed from the applies the history knows (timing.py), the timeline's
critical path along the workflow's edges.
"""

from __future__ import annotations

from rigcli.engine.journal_applies import journal_applies
from rigcli.engine.planner import Planner
from rigcli.engine.project import Project
from rigcli.engine.shape import WorkflowGraph, execution_edges, workflow_graph
from rigcli.engine.timing import ApplyTimes, RunStats, Timeline, run_stats, timeline
from rigcli.errors import NotFoundError
from rigcli.graph import CompiledWorkflow
from rigcli.records import utc_datetime


class Pictures:
    """What ``rig graph`` and ``rig runs --timeline/--stats`` ask."""

    def __init__(self, project: Project, planner: Planner) -> None:
        self.project = project
        self.planner = planner

    async def graph(self, workflow: str | None = None) -> WorkflowGraph:
        selected = self.project.select(workflow)
        plan = await self.planner.plan_with(selected, await self.project.session(selected, "plan"))
        return workflow_graph(selected.name, selected.steps, plan.nodes)

    def _applies(self, selected: CompiledWorkflow) -> list[ApplyTimes]:
        """The workflow's applies, newest first: the one place the timeline and statistics read them
        from (the run journal, until the state keeps a history of applies of its own)."""
        return journal_applies(self.project, selected)

    def timeline(self, run: str | None = None, workflow: str | None = None) -> Timeline:
        selected = self.project.select(workflow)
        applies = self._applies(selected)
        if run is None:
            if not applies:
                raise NotFoundError(f"Workflow {selected.name} has no apply that ran a task yet: run rig apply")
            chosen = applies[0]
        else:
            found = next((apply for apply in applies if apply.is_named(run)), None)
            if found is None:
                raise NotFoundError(f"No apply of workflow {selected.name} has the id {run} (rig runs lists them)")
            chosen = found
        return timeline(chosen, execution_edges(selected.steps), utc_datetime())

    def run_stats(self, workflow: str | None = None, last: int = 20) -> RunStats:
        selected = self.project.select(workflow)
        applies = self._applies(selected)[: max(0, last)]
        return run_stats(selected.name, applies, [task.path for task in selected.tasks])


__all__ = ["Pictures"]

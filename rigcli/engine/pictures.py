"""Pictures of a project's applies: one as a timeline and tasks across them (``rig runs --timeline`` and
``--stats``). (``rig graph``, the plan laid on the workflow's shape, is ``listing_memo.py`` and
``shape.py``: it is kept with the plan for the next ``rig graph``.)

The timeline and statistics are computed (timing.py) from the applies the history recorded
(history.py: ``apply_runs`` and the node runs that carry their ``apply_id``), the timeline's
critical path along the workflow's edges. Node runs from before the history have no apply and are
not in either.
"""

from __future__ import annotations

from rigcli.engine.history import LOOK_BACK, History, ambiguous, check_ref
from rigcli.engine.history_views import AppliedRun
from rigcli.engine.project import Project
from rigcli.engine.shape import execution_edges
from rigcli.engine.timing import ApplyTimes, NodeTimes, RunStats, Timeline, run_stats, timeline
from rigcli.errors import NotFoundError
from rigcli.graph import CompiledWorkflow
from rigcli.records import parse_timestamp, utc_datetime
from rigcli.run_ids import names


class Pictures:
    """What ``rig runs --timeline/--stats`` ask."""

    def __init__(self, project: Project, history: History) -> None:
        self.project = project
        self.history = history

    def _applies(self, selected: CompiledWorkflow, last: int | None = None) -> list[ApplyTimes]:
        """The workflow's recorded applies, newest first (at most ``last``): the one place the timeline
        and statistics read them from."""
        return [_times(apply) for apply in self.history.list_applies(selected.name, last)]

    def timeline(self, run: str | None = None, workflow: str | None = None) -> Timeline:
        selected = self.project.select(workflow)
        chosen = self._last_that_ran(selected) if run is None else self._named(selected, run)
        return timeline(chosen, execution_edges(selected.steps), utc_datetime())

    def _last_that_ran(self, selected: CompiledWorkflow) -> ApplyTimes:
        """The newest apply that ran a task (one that found everything cached has no time to show),
        looking back as far as ``rig logs`` does; else the newest."""
        applies = self._applies(selected, LOOK_BACK)
        if not applies:
            raise NotFoundError(f"Workflow {selected.name} has no apply that ran a task yet: run rig apply")
        return next((apply for apply in applies if apply.ran_any), applies[0])

    def _named(self, selected: CompiledWorkflow, ref: str) -> ApplyTimes:
        """The apply ``ref`` names: its id (or its beginning), else the id of a run it ran."""
        by_id = self.project.store.find_applies(check_ref(ref))
        found = [record for record in by_id if record.workflow == selected.name]
        if len(found) > 1:
            raise ambiguous("Apply id", ref, [record.id for record in found])
        if found:
            return _times(self.history.applied(found[0]))
        ran = [apply for apply in self._applies(selected) if apply.is_named(ref)]
        if len(ran) > 1:
            raise ambiguous("Run id", ref, [run for apply in ran for run in apply.ran_ids if names(ref, run)])
        if not ran:
            raise NotFoundError(f"No apply of workflow {selected.name} has the id {ref} (rig runs lists them)")
        return ran[0]

    def run_stats(self, workflow: str | None = None, last: int = 20) -> RunStats:
        selected = self.project.select(workflow)
        applies = self._applies(selected, max(0, last))
        return run_stats(selected.name, applies, [task.path for task in selected.tasks])


def _times(apply: AppliedRun) -> ApplyTimes:
    """A recorded apply as the timeline and statistics take it, spanning its tasks: from when its first
    task started to when its last one ended (planning before and writing its own row after are not
    where a task's time went); one that ran none spans nothing."""
    record = apply.record
    nodes = tuple(
        NodeTimes(node.path, node.run_id, node.status, node.cached, node.started_at, node.finished_at)
        for node in apply.nodes
    )
    ran = [node for node in nodes if not node.cached and node.started_at is not None]
    started = min((node.started_at for node in ran if node.started_at), key=parse_timestamp, default=record.started_at)
    ends = [node.finished_at for node in ran if node.finished_at is not None]
    finished = None if record.finished_at is None else max(ends, key=parse_timestamp, default=started)
    return ApplyTimes(record.id, record.workflow, started, finished, nodes)


__all__ = ["Pictures"]

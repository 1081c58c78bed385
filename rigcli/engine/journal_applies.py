"""Applies read back from the run journal alone, for the timeline and statistics.

The journal records node runs, not applies: an apply is found as the runs one rig process
recorded one after another (same pid and host, no task twice), and a task of the workflow it did
not run was cached when an earlier run of it had succeeded (and the apply got that far). An
apply that ran nothing (everything cached) left no run, so it is not found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rigcli.engine.project import Project
from rigcli.engine.stores import LOCAL
from rigcli.engine.timing import ApplyTimes, NodeTimes
from rigcli.graph import CompiledWorkflow
from rigcli.records import NodeRun
from rigcli.state.process import left_by_dead_process


@dataclass(frozen=True)
class _Run:
    path: str  # as plans show it
    run: NodeRun


def _journal(project: Project, workflow: CompiledWorkflow) -> list[_Run]:
    """Every run of the workflow's tasks, in its project store and its fragments' stores, oldest first."""
    stores = project.stores
    stores.register_fragments(workflow.fragments)
    shown = {(task.store, task.cache_path): task.path for task in workflow.tasks}
    runs: list[_Run] = []
    for key in (LOCAL, *workflow.fragments):
        for run in stores.get(key).list_runs(workflow=stores.workflow_column(key, workflow.name)):
            path = shown.get((key, run.node_path))
            if path is not None:
                runs.append(_Run(path, run))
    runs.sort(key=lambda item: (item.run.created_at, item.run.id))
    return runs


def _groups(runs: Sequence[_Run]) -> list[list[_Run]]:
    groups: list[list[_Run]] = []
    for item in runs:
        current = groups[-1] if groups else None
        owner = (item.run.pid, item.run.host)
        if current is None or (current[0].run.pid, current[0].run.host) != owner or _has(current, item.path):
            groups.append([item])
        else:
            current.append(item)
    return groups


def _has(group: Sequence[_Run], path: str) -> bool:
    return any(earlier.path == path for earlier in group)


def _node(item: _Run) -> NodeTimes:
    run = item.run
    status = "in-doubt" if left_by_dead_process(run) else run.status
    return NodeTimes(item.path, run.id, status, False, run.created_at, run.finished_at)


def journal_applies(project: Project, workflow: CompiledWorkflow) -> list[ApplyTimes]:
    """The workflow's applies that ran something, newest first."""
    runs = _journal(project, workflow)
    order = [task.path for task in workflow.tasks]
    index = {path: position for position, path in enumerate(order)}
    succeeded: dict[str, list[str]] = {}  # path -> when its succeeded runs were recorded, oldest first
    for item in runs:
        if item.run.status == "succeeded":
            succeeded.setdefault(item.path, []).append(item.run.created_at)
    applies: list[ApplyTimes] = []
    for group in _groups(runs):
        started = group[0].run.created_at
        ran = {item.path: item for item in group}
        stopped = any(item.run.status != "succeeded" for item in group)
        reached = max(index[path] for path in ran)
        nodes: list[NodeTimes] = []
        for path in order:
            if path in ran:
                nodes.append(_node(ran[path]))
            elif any(when < started for when in succeeded.get(path, ())) and (not stopped or index[path] < reached):
                nodes.append(NodeTimes(path, None, "cached", True, None, None))
        ends = [item.run.finished_at for item in group]
        finished = None if any(end is None for end in ends) else max(end for end in ends if end is not None)
        applies.append(ApplyTimes(group[0].run.id, workflow.name, started, finished, tuple(nodes)))
    applies.reverse()
    return applies


__all__ = ["journal_applies"]

"""Cache inspection and maintenance: list, explain, invalidate, clear, snapshots."""

from __future__ import annotations

import functools
from collections.abc import Callable

from rigcli.engine.planner import Planner
from rigcli.engine.project import Project
from rigcli.engine.results import CacheEntry, JsonObject, NodeExplanation
from rigcli.engine.selection import match_tasks, require_tasks
from rigcli.engine.stores import LOCAL
from rigcli.errors import InputError
from rigcli.graph import CompiledWorkflow, TaskSpec
from rigcli.records import LockHolder, NodeRun
from rigcli.state.api import StateStore
from rigcli.state.process import is_ours, judge_liveness
from rigcli.statuses import CacheEntryStatus


def _entry_status(run: NodeRun, holder: Callable[[], LockHolder | None]) -> CacheEntryStatus:
    if run.status == "running":
        # A run still "running" whose rig is gone was cut off mid-way: in doubt, never reused.

        return "running" if is_ours(run) or judge_liveness(run, holder()).alive else "in-doubt"
    return "invalidated" if run.invalidated else "cached"


class CacheAdmin:
    """What ``rig cache`` and ``rig ls snapshots`` ask: the cached runs of a workflow, and changes to them."""

    def __init__(self, project: Project, planner: Planner) -> None:
        self.project = project
        self.planner = planner

    def _stores_of(self, workflow: CompiledWorkflow) -> list[tuple[str, StateStore, str]]:
        """(key, store, workflow column) for the project store and each global fragment's store."""
        stores = self.project.stores
        stores.register_fragments(workflow.fragments)
        keys = [LOCAL, *workflow.fragments]
        return [(key, stores.get(key), stores.workflow_column(key, workflow.name)) for key in keys]

    async def list_cache(self, workflow: str | None = None) -> list[CacheEntry]:
        selected = self.project.select(workflow)
        display = {(task.store, task.cache_path): task for task in selected.tasks}
        entries: list[CacheEntry] = []
        for key, store, column in self._stores_of(selected):
            holder = functools.cache(lambda store=store: store.status().lock)  # read once, if a run is running
            for run in store.list_runs(workflow=column, statuses=["succeeded", "running"]):
                task = display.get((key, run.node_path))
                status = _entry_status(run, holder)
                entries.append(
                    CacheEntry(
                        scope="local" if key == LOCAL else "global",
                        workflow=column,
                        node_path=run.node_path,
                        display_path=task.path if task else run.node_path,
                        node_name=run.node_name,
                        run_id=run.id,
                        invalidated=run.invalidated,
                        created_at=run.created_at,
                        status=status,
                        fragment_hash=None if key == LOCAL else key,
                    )
                )
        return entries

    def match_tasks(self, workflow: CompiledWorkflow, target: str) -> list[TaskSpec]:
        return match_tasks(workflow, target)

    def require_tasks(self, workflow: CompiledWorkflow, target: str) -> list[TaskSpec]:
        """``match_tasks``, or a NotFoundError that names the closest task paths."""
        return require_tasks(workflow, target)

    async def explain(self, workflow: str | None = None, task: str | None = None) -> list[NodeExplanation]:
        selected = self.project.select(workflow)
        wanted: set[int] | None = None
        if task is not None:
            matches = self.require_tasks(selected, task)
            if len(matches) > 1:
                raise InputError(f"Task {task} matches multiple tasks: {', '.join(t.path for t in matches)}")
            wanted = {matches[0].index + 1}
        plan = await self.planner.plan(selected.name)
        by_index = {t.index + 1: t for t in selected.tasks}
        return [
            NodeExplanation(
                path=node.path,
                name=node.name,
                status=node.status,
                reason=node.reason,
                run_id=node.run_id,
                scope=node.scope,
                cache_ttl=by_index[node.index].node.cache_ttl,
            )
            for node in plan.nodes
            if wanted is None or node.index in wanted
        ]

    async def invalidate(self, workflow: str | None = None, task: str | None = None, all: bool = False) -> int:
        selected = self.project.select(workflow)
        if all:
            targets = list(selected.tasks)
        elif task is not None:
            targets = self.require_tasks(selected, task)
            if len(targets) > 1:
                raise InputError(f"Task {task} matches multiple cached tasks: {', '.join(t.path for t in targets)}")
        else:
            raise InputError("invalidate needs a task or all=True")
        with self.project.stores.writing("cache invalidate"):
            self.project.stores.register_fragments(selected.fragments)
            return self.planner.invalidate_tasks(selected, [t.index for t in targets])

    async def clear_cache(self, workflow: str | None = None, scope: str = "all") -> int:
        if scope not in ("all", "local", "global"):
            raise InputError(f"Unknown cache scope {scope}; expected all, local or global")
        selected = self.project.select(workflow)
        stores = self.project.stores
        deleted = 0
        with stores.writing("cache clear"):
            for key, _, _ in self._stores_of(selected):
                if key == LOCAL and scope in ("all", "local"):
                    deleted += stores.for_write(key).delete_runs(selected.name)
                elif key != LOCAL and scope in ("all", "global"):
                    # Only this fragment's runs: on PostgreSQL every fragment shares one schema.
                    deleted += stores.for_write(key).delete_runs(stores.workflow_column(key, selected.name))
        return deleted

    async def list_snapshots(self, workflow: str | None = None) -> list[JsonObject]:
        selected = self.project.select(workflow)
        snapshots: list[JsonObject] = []
        display = {(task.store, task.cache_path): task.path for task in selected.tasks}
        for key, store, column in self._stores_of(selected):
            for run in store.list_runs(workflow=column, statuses=["succeeded"]):
                if run.invalidated:
                    continue
                for artifact in run.artifacts:
                    snapshots.append(
                        {
                            "run_id": run.id,
                            "workflow": selected.name,
                            "node_path": display.get((key, run.node_path), run.node_path),
                            "created_at": run.created_at,
                            "scope": "local" if key == LOCAL else "global",
                            "artifact": artifact,
                        }
                    )
        return snapshots


__all__ = ["CacheAdmin"]

"""ProjectEngine: the ``Engine`` protocol answered by the engine's parts, each owning one thing.

- ``Project`` (project.py): the loaded config and workflows, state stores, provider hub, events,
  and which workflow a command means;
- ``Planner`` (planner.py): plan and apply;
- ``Workspaces`` (workspaces.py): fork, rm, finding a workspace;
- ``Lifecycle`` (lifecycle.py): live status, stop and start, shell and exec;
- ``Forks`` (forks.py): ``fork --count``, ``--from``, ``--replace``;
- ``Drift`` (provenance.py): outdated workspaces and ``rig diff``;
- ``Reaper`` (reaper.py): expiry, by ``rig reap`` and by any command;
- ``Operations`` (operations.py): listing and running operations;
- ``CacheAdmin`` (cache_admin.py): cache entries, explain, invalidate, clear, snapshots;
- ``Garbage`` (garbage.py): ``rig gc``;
- ``Diagnosis`` (diagnosis.py): ``rig doctor``'s view of the project;
- ``Pictures`` (pictures.py): ``rig graph``, and a run's timeline and statistics;
- ``History`` (history.py): the apply history and the runs' stored output (``rig runs``, ``rig logs``);
- ``Runner`` (runner.py): the event loop the engine's coroutines run on when called from
  synchronous code.

Each method below hands the call to the part that owns it, and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, TypeVar

from rigcli.engine.project import Project
from rigcli.engine.runner import Runner
from rigcli.records import utc_now

if TYPE_CHECKING:
    from rigcli.engine.cache_admin import CacheAdmin
    from rigcli.engine.connect_target import ConnectTarget
    from rigcli.engine.diagnosis import Diagnosis
    from rigcli.engine.forks import Forks
    from rigcli.engine.garbage import Garbage
    from rigcli.engine.history import History
    from rigcli.engine.history_views import AppliedRun, LogSelection, LogUpdate
    from rigcli.engine.lifecycle import Lifecycle
    from rigcli.engine.listing_memo import ListingMemo
    from rigcli.engine.operations import Operations
    from rigcli.engine.pictures import Pictures
    from rigcli.engine.planner import Planner
    from rigcli.engine.provenance import Drift, WorkspaceDiff
    from rigcli.engine.reap_report import ReapReport
    from rigcli.engine.reaper import Reaper
    from rigcli.engine.results import (
        ApplyResult,
        CacheEntry,
        GcReport,
        JsonObject,
        NodeExplanation,
        OperationInfo,
        ProjectDiagnosis,
        ProjectInfo,
        WorkflowPlan,
        WorkflowSummary,
    )
    from rigcli.engine.shape import WorkflowGraph
    from rigcli.engine.timing import RunStats, Timeline
    from rigcli.engine.workspaces import Workspaces
    from rigcli.event_bus import EventListener
    from rigcli.jsonutil import JsonValue
    from rigcli.provider_api import LiveStatus
    from rigcli.records import NodeRun, WorkspaceRecord
    from rigcli.state.api import StateStatus

T = TypeVar("T")


class ProjectEngine:
    """A rig project's engine (implements ``rigcli.engine.api.Engine``); see ``create_engine``."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.project_dir = project.project_dir
        self.config_path = project.config_path
        self.cancellation = project.cancellation
        self.runner = Runner()

    # The parts are made, and their modules imported, when a command first needs one: a cached
    # plan needs only the planner, `rig exec` only the workspaces and their lifecycle, and each
    # part's imports are its own (the speed room's rule).
    @cached_property
    def planner(self) -> Planner:
        from rigcli.engine.planner import Planner

        return Planner(self.project)

    @cached_property
    def workspaces(self) -> Workspaces:
        from rigcli.engine.workspaces import Workspaces

        return Workspaces(self.project, lambda: self.planner)

    @cached_property
    def lifecycle(self) -> Lifecycle:
        from rigcli.engine.lifecycle import Lifecycle

        return Lifecycle(self.project, self.workspaces)

    @cached_property
    def forks(self) -> Forks:
        from rigcli.engine.forks import Forks

        return Forks(self.project, self.planner, self.workspaces)

    @cached_property
    def drift(self) -> Drift:
        from rigcli.engine.provenance import Drift

        return Drift(self.project, self.planner, self.workspaces)

    @cached_property
    def listing_memo(self) -> ListingMemo:
        from rigcli.engine.listing_memo import ListingMemo

        return ListingMemo(self.project, self.planner)

    @cached_property
    def reaper(self) -> Reaper:
        from rigcli.engine.reaper import Reaper

        return Reaper(self.project, self.workspaces)

    @cached_property
    def operations(self) -> Operations:
        from rigcli.engine.operations import Operations

        return Operations(self.project, lambda: self.planner, self.workspaces, self.lifecycle)

    @cached_property
    def cache(self) -> CacheAdmin:
        from rigcli.engine.cache_admin import CacheAdmin

        return CacheAdmin(self.project, self.planner)

    @cached_property
    def garbage(self) -> Garbage:
        from rigcli.engine.garbage import Garbage

        return Garbage(self.project)

    @cached_property
    def diagnosis(self) -> Diagnosis:
        from rigcli.engine.diagnosis import Diagnosis

        return Diagnosis(self.project)

    @cached_property
    def history(self) -> History:
        from rigcli.engine.history import History

        return History(self.project, self.cache)

    @cached_property
    def pictures(self) -> Pictures:
        from rigcli.engine.pictures import Pictures

        return Pictures(self.project, self.history)

    # -- lifetime, events and the event loop ------------------------------------------------------
    async def load(self) -> None:
        await self.project.load()

    def on_event(self, listener: EventListener) -> Callable[[], None]:
        return self.project.on_event(listener)

    def run(self, coro: Coroutine[object, object, T], *, on_loop: Callable[[bool], None] | None = None) -> T:
        return self.runner.run(coro, on_loop=on_loop)

    def interrupt(self) -> None:
        self.cancellation.cancel()
        self.runner.cancel()

    def close(self) -> None:
        try:
            self.project.close()
        finally:
            self.runner.close()

    # -- the project --------------------------------------------------------------------------------
    def workflow_names(self) -> list[str]:
        return list(self.project.workflows)

    def select_workflow(self, workflow: str | None = None) -> str:
        return self.project.select(workflow).name

    def list_workflow_summaries(self) -> list[WorkflowSummary]:
        return self.project.summaries()

    def state_status(self) -> StateStatus:
        return self.project.state_status()

    def get_project_info(self) -> ProjectInfo:
        return self.project.info()

    def diagnose(self) -> ProjectDiagnosis:
        return self.diagnosis.diagnose()

    # -- plan and apply -----------------------------------------------------------------------------
    async def plan(self, workflow: str | None = None) -> WorkflowPlan:
        return await self.planner.plan(workflow)

    async def apply(
        self,
        workflow: str | None = None,
        dry_run: bool = False,
        *,
        expect_cached: bool = False,
        only: Sequence[str] = (),
    ) -> ApplyResult:
        return await self.planner.apply(workflow, dry_run, expect_cached=expect_cached, only=only)

    async def plan_listed(self, workflow: str | None) -> WorkflowPlan:
        return await self.listing_memo.plan(workflow)

    def remember_listed(self, workflows: Sequence[str]) -> None:
        self.listing_memo.remember(workflows)

    def remember_plan(self, workflow: str, hint: str | None) -> None:
        self.listing_memo.remember_plan(workflow, hint)

    def list_node_runs(self, workflow: str | None = None) -> list[NodeRun]:
        return self.project.node_runs(workflow)

    # -- pictures -------------------------------------------------------------------------------------
    async def graph(self, workflow: str | None = None) -> WorkflowGraph:
        plan = await self.listing_memo.plan(workflow)
        return self.listing_memo.graph(plan.workflow)

    def timeline(self, run: str | None = None, workflow: str | None = None) -> Timeline:
        return self.pictures.timeline(run, workflow)

    def run_stats(self, workflow: str | None = None, last: int = 20) -> RunStats:
        return self.pictures.run_stats(workflow, last)

    # -- workspaces ---------------------------------------------------------------------------------
    async def fork(self, name: str, workflow: str | None = None, *, ttl: float | None = None) -> WorkspaceRecord:
        return await self.workspaces.fork(name, workflow, ttl=ttl)

    async def remove_workspace(self, name: str, workflow: str | None = None, *, force: bool = False) -> WorkspaceRecord:
        return await self.workspaces.remove_workspace(name, workflow, force=force)

    def list_workspaces(self, workflow: str | None = None) -> list[WorkspaceRecord]:
        return self.workspaces.list_workspaces(workflow)

    def workspace_workflow(self, name: str, workflow: str | None = None) -> str:
        return self.workspaces.workspace_workflow(name, workflow)

    # -- forks of several, of a live one, in place; outdated; expiry ---------------------------------
    async def fork_many(
        self, name: str, count: int, workflow: str | None = None, *, ttl: float | None = None
    ) -> list[WorkspaceRecord]:
        return await self.forks.fork_many(name, count, workflow, ttl=ttl)

    async def fork_from(
        self, name: str, source: str, workflow: str | None = None, *, ttl: float | None = None
    ) -> WorkspaceRecord:
        return await self.forks.fork_from(name, source, workflow, ttl=ttl)

    async def replace_workspace(
        self, name: str, workflow: str | None = None, *, ttl: float | None = None
    ) -> WorkspaceRecord:
        return await self.forks.replace(name, workflow, ttl=ttl)

    def workspace_outdated(self, record: WorkspaceRecord, plan: WorkflowPlan) -> bool | None:
        return self.drift.outdated(record, plan)

    async def diff_workspace(self, name: str, workflow: str | None = None) -> WorkspaceDiff:
        return await self.drift.diff(name, workflow)

    async def reap(self, dry_run: bool = False, *, implicit: bool = False) -> ReapReport:
        if implicit and not self.project.store.due_workspaces(utc_now()):
            # the usual case of every command: one indexed query, and the reaper is never imported
            from rigcli.engine.reap_report import ReapReport

            return ReapReport(dry_run=dry_run)
        return await self.reaper.reap(dry_run=dry_run, implicit=implicit)

    # -- operations ---------------------------------------------------------------------------------
    def list_operations(self, workflow: str | None = None) -> list[OperationInfo]:
        return self.operations.list_operations(workflow)

    def list_workspace_operations(self, workflow: str | None = None) -> list[OperationInfo]:
        return self.operations.list_workspace_operations(workflow)

    async def run_operation(
        self, operation: str, input: dict[str, object] | None = None, workflow: str | None = None
    ) -> JsonValue:
        return await self.operations.run_operation(operation, input, workflow)

    async def run_workspace_operation(
        self,
        workspace: str,
        operation: str,
        input: dict[str, object] | None = None,
        workflow: str | None = None,
        *,
        start: bool = False,
    ) -> JsonValue:
        return await self.operations.run_workspace_operation(workspace, operation, input, workflow, start=start)

    # -- a workspace's life after fork ----------------------------------------------------------------
    async def probe_workspaces(
        self, workspaces: Sequence[WorkspaceRecord], *, timeout: float | None = None
    ) -> dict[str, LiveStatus]:
        return await self.lifecycle.probe_workspaces(workspaces, timeout=timeout)

    async def stop_workspace(self, name: str, workflow: str | None = None) -> LiveStatus:
        return await self.lifecycle.set_power(name, workflow, stop=True)

    async def start_workspace(self, name: str, workflow: str | None = None) -> LiveStatus:
        return await self.lifecycle.set_power(name, workflow, stop=False)

    async def attach(
        self,
        name: str,
        argv: Sequence[str] | None,
        *,
        tty: bool,
        env: Mapping[str, str],
        workflow: str | None = None,
        start: bool = False,
    ) -> int:
        return await self.lifecycle.attach(name, argv, tty=tty, env=env, workflow=workflow, start=start)

    async def connect_target(
        self, name: str, workflow: str | None, primitives: Sequence[str], *, start: bool = True
    ) -> ConnectTarget:
        from rigcli.engine.connect import Connections

        return await Connections(self.project, self.workspaces, self.lifecycle).target(
            name, workflow, primitives, start=start
        )

    # -- the cache ----------------------------------------------------------------------------------
    async def list_cache(self, workflow: str | None = None) -> list[CacheEntry]:
        return await self.cache.list_cache(workflow)

    async def explain(self, workflow: str | None = None, task: str | None = None) -> list[NodeExplanation]:
        return await self.cache.explain(workflow, task)

    async def invalidate(self, workflow: str | None = None, task: str | None = None, all: bool = False) -> int:
        return await self.cache.invalidate(workflow, task, all)

    async def clear_cache(self, workflow: str | None = None, scope: str = "all") -> int:
        return await self.cache.clear_cache(workflow, scope)

    async def list_snapshots(self, workflow: str | None = None) -> list[JsonObject]:
        return await self.cache.list_snapshots(workflow)

    # -- garbage ------------------------------------------------------------------------------------
    async def collect_garbage(self, dry_run: bool = False, forget_unreachable: bool = False) -> GcReport:
        return await self.garbage.collect_garbage(dry_run, forget_unreachable)

    # -- the run history ------------------------------------------------------------------------------
    def list_applies(self, workflow: str | None = None, limit: int | None = 20) -> list[AppliedRun]:
        return self.history.list_applies(workflow, limit)

    def find_apply(self, ref: str | None = None, workflow: str | None = None) -> AppliedRun:
        return self.history.find_apply(ref, workflow)

    def select_logs(self, workflow: str | None = None, task: str | None = None, run: str | None = None) -> LogSelection:
        return self.history.select_logs(workflow, task, run)

    def read_logs(
        self, selection: LogSelection, *, follow: bool = False, as_bytes: bool = False
    ) -> Iterator[LogUpdate]:
        return self.history.read_logs(selection, follow=follow, as_bytes=as_bytes)


__all__ = ["ProjectEngine"]

"""Workspaces: fork and rm (reconciled from the effects journal), and looking a workspace up.

What a workspace's create made is journaled as effects owned by the workspace (its record id),
by the providers themselves: the record refers to them, it keeps no copy.
"""

from __future__ import annotations

import math
import os
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING

from rigcli.authoring.project import check_workspace_name
from rigcli.engine.effects import Owner
from rigcli.engine.finals import make_provenance
from rigcli.engine.forget import forget_workspace, hook_cannot_run
from rigcli.engine.hooks import run_hook
from rigcli.engine.invoke import NamedContext, freeze, json_result
from rigcli.engine.liveness import probe_records
from rigcli.engine.project import Project
from rigcli.engine.reconcile import remove_workspace_effects
from rigcli.engine.results import ApplyResult
from rigcli.engine.session import ProviderSession
from rigcli.engine.workspace_history import entry_node_path, recorded
from rigcli.errors import (
    AmbiguousWorkspaceError,
    InputError,
    NotFoundError,
    RigError,
    TaskError,
    UnknownWorkspaceError,
    describe_exception,
)
from rigcli.events import (
    StateWarning,
    WorkspaceCreateStarted,
    WorkspaceReady,
    WorkspaceRemoveCompleted,
    WorkspaceRemoveStarted,
)
from rigcli.graph import CompiledWorkflow
from rigcli.jsonutil import JsonValue
from rigcli.records import WorkspaceRecord, timestamp, utc_datetime, utc_now
from rigcli.state.process import pid_alive, this_host
from rigcli.state.workspaces import new_workspace
from rigcli.statuses import WorkspaceStatus

if TYPE_CHECKING:  # only fork applies; finding a workspace (exec, ls, rm, the reaper) never imports the planner
    from rigcli.engine.planner import Planner

REMOVE = "remove"  # every workflow that creates workspaces has this workspace operation built in
# Records whose create completed: their remove hook runs on rm (a failed reap keeps a usable one).
CREATED: frozenset[WorkspaceStatus] = frozenset({"ready", "removing", "reap-failed"})


def expiry(selected: CompiledWorkflow, ttl: float | None) -> tuple[str | None, int | None, str | None]:
    """``(expires_at, idle_stop, reap_at)`` of a workspace forked now: ``ttl`` (or the workflow's
    ``workspace(ttl=...)``) from now, the workflow's ``idle_stop`` in whole seconds, and when the
    reaper should first look (the sooner of the two)."""
    now = utc_datetime()
    seconds = ttl if ttl is not None else selected.workspace_ttl
    expires_at = None if seconds is None else timestamp(now + timedelta(seconds=seconds))
    idle = selected.workspace_idle_stop
    idle_stop = None if idle is None else max(1, math.ceil(idle))
    first_idle_check = None if idle_stop is None else timestamp(now + timedelta(seconds=idle_stop))
    due = [moment for moment in (expires_at, first_idle_check) if moment is not None]
    return expires_at, idle_stop, min(due) if due else None


def error_message(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, RigError) else describe_exception(exc)


def refuse_a_live_create(record: WorkspaceRecord) -> None:
    """A create that is still running (its rig process is alive) is not rm's to clean up."""
    pid, host = record.pid, record.host
    if record.status != "creating" or not pid:
        return
    if host == this_host() and not pid_alive(pid):
        return  # cut off: what it made is in the journal, and rm cleans that
    where = "" if host == this_host() else f" on {host}"
    raise RigError(
        f"Workspace {record.name} is still being created by rig (pid {pid}{where}); "
        f"wait for it to finish, or rig rm --force {record.name} if that process is gone"
    )


class Workspaces:
    """Fork, rm and look up the project's workspaces."""

    def __init__(self, project: Project, planner: Callable[[], Planner]) -> None:
        self.project = project
        self._planner = planner  # made when a fork first applies

    def list_workspaces(self, workflow: str | None = None) -> list[WorkspaceRecord]:
        return self.project.store.list_workspaces(workflow)

    def find_record(self, name: str, workflow: str | None = None) -> WorkspaceRecord:
        """The stored workspace ``name`` (in ``workflow``, checked against the config when it loads)."""
        store = self.project.store
        if workflow is not None:
            record = store.get_workspace(name, workflow)  # also of a workflow the config no longer defines
            if record is not None:
                return record
            if self.project.config_error is None:
                workflow = self.project.select(workflow).name  # an unknown workflow is said as such
                record = store.get_workspace(name, workflow)
            if record is None:
                raise UnknownWorkspaceError(f'Unknown workspace "{name}" in workflow {workflow}')
            return record
        matches = [item for item in store.list_workspaces() if item.name == name]
        if not matches:
            raise UnknownWorkspaceError(f'Unknown workspace "{name}"')
        if len(matches) > 1:
            raise AmbiguousWorkspaceError(name, [item.workflow for item in matches])
        return matches[0]

    def find_workspace(self, name: str, workflow: str | None = None) -> tuple[CompiledWorkflow, WorkspaceRecord]:
        """The stored workspace ``name`` and its workflow: the one lookup, with one wording."""
        record = self.find_record(name, workflow)
        if record.workflow not in self.project.workflows:
            raise NotFoundError(
                f'Workspace "{name}" belongs to workflow {record.workflow}, which rig_config.py no longer defines '
                f"(rig rm --forget {name} removes it without its remove hook)"
            )
        return self.project.workflows[record.workflow], record

    def workspace_workflow(self, name: str, workflow: str | None = None) -> str:
        """The workflow that owns workspace ``name`` (for the CLI to ask which, when several do)."""
        return self.find_record(name, workflow).workflow

    async def fork(self, name: str, workflow: str | None = None, *, ttl: float | None = None) -> WorkspaceRecord:
        """Apply the workflow and create workspace ``name`` from its context.

        The apply and the ``creating`` record happen under the state lock; the create hook runs
        without it (copying a machine may take a while, and other forks must not wait for it),
        with this process's pid on the record so ``rm`` can tell a live create from a cut-off one.
        ``ttl`` (seconds) overrides the workflow's ``workspace(ttl=...)``.
        """
        name = check_workspace_name(name)
        selected = self.creating_workflow(workflow)
        with self.project.stores.writing("fork"):
            self.refuse_existing(selected, [name])
            session = await self.project.session(selected, "require")
            applied = await self._planner().apply_held(selected, session, command="fork", workspace=name)
            record = self.project.store.save_workspace(self.new_record(selected, name, applied, ttl))
        return await self.create(selected, session, record)

    def creating_workflow(self, workflow: str | None) -> CompiledWorkflow:
        """The workflow meant, which must define a workspace."""
        selected = self.project.select(workflow)
        if selected.create_hook is None:
            raise RigError(f"Workflow {selected.name} does not define a workspace")
        return selected

    def refuse_existing(self, selected: CompiledWorkflow, names: list[str]) -> None:
        """Under the lock: none of ``names`` may exist in ``selected`` yet."""
        for name in names:
            existing = self.project.store.get_workspace(name, selected.name)
            if existing is not None:
                hint = f'; run "rig rm {name}" to clean it up first' if existing.status != "ready" else ""
                raise InputError(f"Workspace {name} already exists in workflow {selected.name}{hint}")

    def new_record(
        self, selected: CompiledWorkflow, name: str, applied: ApplyResult, ttl: float | None
    ) -> WorkspaceRecord:
        """A ``creating`` record of this process, made from ``applied``: its provenance and expiry."""
        expires_at, idle_stop, reap_at = expiry(selected, ttl)
        return new_workspace(
            name,
            selected.name,
            status="creating",
            workflow_ctx=applied.context,
            ctx={},
            pid=os.getpid(),
            host=this_host(),
            provenance=make_provenance(selected, self.project.keys_for(selected), applied.runs),
            expires_at=expires_at,
            idle_stop=idle_stop,
            reap_at=reap_at,
        )

    async def create(
        self, selected: CompiledWorkflow, session: ProviderSession, record: WorkspaceRecord
    ) -> WorkspaceRecord:
        """Run the create hook of a ``creating`` record (the lock not held) and record how it ended:
        ``ready`` with its ctx, or ``failed`` with the error (what it made stays journaled for rm)."""
        name = record.name
        store = self.project.store
        self.project.emit(WorkspaceCreateStarted(workflow=selected.name, workspace=name))
        try:
            ctx = await self.run_create_hook(selected, session, name, record.workflow_ctx, ("workspace", record.id))
        except BaseException as exc:
            message = error_message(exc)
            with self.project.stores.writing("fork"):
                failed = store.get_workspace(name, selected.name)
                if failed is not None:  # unless rm --force took it meanwhile
                    store.save_workspace(replace(failed, status="failed", error=message, updated_at=utc_now()))
            if isinstance(exc, Exception) and not isinstance(exc, RigError):
                raise TaskError(f"Workspace {name} create failed: {message}") from exc
            raise
        with self.project.stores.writing("fork"):
            stored = store.get_workspace(name, selected.name)
            if stored is None:  # removed with rm --force while it was being created
                raise TaskError(
                    f"Workspace {name} was removed while it was being created; rig gc collects what it made"
                )
            ready = replace(stored, ctx=ctx, status="ready", error=None, updated_at=utc_now(), pid=None, host=None)
            store.save_workspace(ready)
        self.project.emit(WorkspaceReady(workflow=selected.name, workspace=name))
        return ready

    async def _gone(self, record: WorkspaceRecord) -> bool:
        """Its machine is confirmed gone (``missing``): a remove hook that failed had nothing left to
        remove, so plain ``rm`` goes on without ``--force``."""
        live = await probe_records(self.project, [record])
        return live[record.id].state == "missing"

    async def run_create_hook(
        self, selected: CompiledWorkflow, session: ProviderSession, name: str, workflow_ctx: JsonValue, owner: Owner
    ) -> dict[str, JsonValue]:
        """The create hook's result (the workspace ctx); what its providers make belongs to ``owner``,
        so rm cleans it even if this process dies."""
        assert selected.create_hook is not None
        called = run_hook(
            self.project,
            selected,
            session,
            selected.create_hook,
            node_path=entry_node_path("create", name),
            workflow_ctx=workflow_ctx,
            workspace=NamedContext(name, freeze({})),
            owner=owner,
        )
        result = await recorded(self.project, called, workflow=selected.name, workspace=name, command="create")
        ctx = json_result(result if result is not None else {}, f"Workflow {selected.name} workspace create result")
        if not isinstance(ctx, dict):
            raise TaskError(f"Workflow {selected.name} workspace create result must be an object")
        return ctx

    async def remove_workspace(
        self,
        name: str,
        workflow: str | None = None,
        *,
        consented: bool = False,
        force: bool = False,
        forget: bool = False,
    ) -> WorkspaceRecord:
        """Remove a workspace in any state: its remove hook if its create completed, then everything
        the effects journal says was made for it; the record goes only once all of that is gone.

        ``force``: delete the record even when the remove hook fails or a resource's removal is
        uncertain; what could not be removed stays journaled for ``rig gc`` (a warning says so).
        ``forget``: no remove hook (engine/forget.py); without it, a config that does not load refuses.
        """
        with self.project.stores.writing("rm"):
            if forget or self.project.config_error is not None:
                record = self.find_record(name, workflow)
                if not forget:
                    raise hook_cannot_run(self.project, name)
                if not force:
                    refuse_a_live_create(record)
                forgetting = forget_workspace(self.project, record, force=force)
                return await self._recorded_rm(record, forgetting)
            # Read under the lock: a concurrent rm must find the record gone, not remove it twice.
            selected, record = self.find_workspace(name, workflow)
            if not force:
                refuse_a_live_create(record)
            return await self.remove_held(selected, record, consented=consented, force=force)

    async def _recorded_rm(self, record: WorkspaceRecord, removal: Awaitable[WorkspaceRecord]) -> WorkspaceRecord:
        """A removal as the workspace's ``rm`` entry in the history; its output is the remove hook's."""
        name, workflow = record.name, record.workflow
        return await recorded(self.project, removal, workflow=workflow, workspace=name, command="rm")

    async def remove_held(
        self, selected: CompiledWorkflow, record: WorkspaceRecord, *, consented: bool = False, force: bool = False
    ) -> WorkspaceRecord:
        """``remove_workspace`` under the lock the caller holds (rm, and the reaper)."""
        return await self._recorded_rm(record, self._remove_held(selected, record, consented=consented, force=force))

    async def _remove_held(
        self, selected: CompiledWorkflow, record: WorkspaceRecord, *, consented: bool, force: bool
    ) -> WorkspaceRecord:
        store = self.project.store
        name = record.name
        # Only a workspace whose create completed (ready, or removing since) gets the user's
        # remove hook; a cut-off or failed create has nothing the hook could rely on. Such a
        # record keeps its status while it is cleaned, so a retry still knows.
        created = record.status in CREATED
        if created:
            record = store.save_workspace(replace(record, status="removing", updated_at=utc_now()))
        self.project.emit(WorkspaceRemoveStarted(workflow=selected.name, workspace=name))
        problems: list[str] = []
        try:
            remove_hook = selected.remove_hook if created else None
            session = await self.project.session(selected, "plan" if remove_hook is None else "require")
            if remove_hook is not None:
                try:
                    await self.run_remove_hook(selected, session, name, record, consented=consented)
                except Exception as exc:
                    if not force and not await self._gone(record):
                        raise
                    problems.append(f"the remove hook failed: {error_message(exc)}")
            outcome = await remove_workspace_effects(store, session, record)
            if outcome.failed:
                problems.append(outcome.summary())
                if not force:
                    raise RigError(problems[-1])
        except Exception as exc:
            message = error_message(exc)
            store.save_workspace(replace(record, error=message, updated_at=utc_now()))
            raise TaskError(
                f"Workspace {name} was not removed: {message}. Its record is kept: run rig rm {name} "
                f"again once that is fixed, or rig rm --force {name} to forget it"
            ) from exc
        store.delete_workspace(name, selected.name)
        if problems:
            how = "with --force" if force else "(its machine was already gone)"
            self.project.emit(
                StateWarning(
                    message=f"Workspace {name} removed {how}, but {'; '.join(problems)}; "
                    "what could not be removed stays in the effects journal for rig gc"
                )
            )
        self.project.emit(WorkspaceRemoveCompleted(workflow=selected.name, workspace=name))
        return record

    async def run_remove_hook(
        self,
        selected: CompiledWorkflow,
        session: ProviderSession,
        name: str,
        record: WorkspaceRecord,
        *,
        consented: bool = False,
    ) -> None:
        assert selected.remove_hook is not None
        await run_hook(
            self.project,
            selected,
            session,
            selected.remove_hook,
            node_path=f"workspace:{name}:remove",
            workflow_ctx=record.workflow_ctx,
            workspace=NamedContext(name, freeze(record.ctx)),
            consented=consented,
            owner=("workspace", record.id),
        )


__all__ = ["CREATED", "REMOVE", "Workspaces", "expiry"]

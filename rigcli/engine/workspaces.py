"""Workspaces: fork and rm (reconciled from the effects journal), and looking a workspace up."""

from __future__ import annotations

import contextlib
import os

from rigcli.authoring.project import check_workspace_name
from rigcli.engine.core import EngineCore
from rigcli.engine.driver import need_event_loop
from rigcli.engine.effects import Owner
from rigcli.engine.invoke import NamedContext, build_kwargs, call_handler, freeze, json_result
from rigcli.engine.reconcile import remove_workspace_effects
from rigcli.engine.session import ProviderSession
from rigcli.errors import (
    AmbiguousWorkspaceError,
    InputError,
    NotFoundError,
    RigError,
    TaskError,
    UnknownWorkspaceError,
)
from rigcli.events import (
    Event,
    ProviderEvent,
    StateWarning,
    WorkspaceCreateStarted,
    WorkspaceReady,
    WorkspaceRemoveCompleted,
    WorkspaceRemoveStarted,
)
from rigcli.graph import CompiledWorkflow, HookSpec
from rigcli.host import operation_consent
from rigcli.jsonutil import JsonValue
from rigcli.records import WorkspaceRecord, utc_now
from rigcli.state.process import pid_alive, this_host

REMOVE = "remove"  # every workflow that creates workspaces has this workspace operation built in


def _message(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, RigError) else f"{type(exc).__name__}: {exc}"


def _refuse_a_live_create(record: WorkspaceRecord) -> None:
    """A create that is still running (its rig process is alive) is not rm's to clean up."""
    pid, host = record.get("pid"), record.get("host")
    if record.get("status") != "creating" or not pid:
        return
    if host == this_host() and not pid_alive(pid):
        return  # cut off: what it made is in the journal, and rm cleans that
    where = "" if host == this_host() else f" on {host}"
    raise RigError(
        f"Workspace {record['name']} is still being created by rig (pid {pid}{where}); "
        f"wait for it to finish, or rig rm --force {record['name']} if that process is gone"
    )


class WorkspaceMixin(EngineCore):
    def list_workspaces(self, workflow: str | None = None) -> list[WorkspaceRecord]:
        return self.project.store.list_workspaces(workflow)

    def find_workspace(self, name: str, workflow: str | None = None) -> tuple[CompiledWorkflow, WorkspaceRecord]:
        """The stored workspace ``name`` and its workflow: the one lookup, with one wording."""
        store = self.project.store
        if workflow is not None:
            selected = self.select(workflow)
            record = store.get_workspace(name, selected.name)
            if record is None:
                raise UnknownWorkspaceError(f'Unknown workspace "{name}" in workflow {selected.name}')
            return selected, record
        matches = [item for item in store.list_workspaces() if item["name"] == name]
        if not matches:
            raise UnknownWorkspaceError(f'Unknown workspace "{name}"')
        if len(matches) > 1:
            raise AmbiguousWorkspaceError(name, [item["workflow"] for item in matches])
        record = matches[0]
        if record["workflow"] not in self.project.workflows:
            raise NotFoundError(
                f'Workspace "{name}" belongs to workflow {record["workflow"]}, which rig_config.py no longer defines'
            )
        return self.project.workflows[record["workflow"]], record

    def workspace_workflow(self, name: str, workflow: str | None = None) -> str:
        """The workflow that owns workspace ``name`` (for the CLI to ask which, when several do)."""
        return self.find_workspace(name, workflow)[0].name

    async def _run_hook(
        self,
        workflow: CompiledWorkflow,
        session: ProviderSession,
        hook: HookSpec,
        *,
        node_path: str,
        workflow_ctx: JsonValue,
        workspace: NamedContext | None,
        input_value: object = None,
        consented: bool = False,
        owner: Owner | None = None,
    ) -> object:
        """Call a hook; ``consented``: an operation the user named, so its host commands need no asking."""
        await need_event_loop()  # hooks run in a worker thread that reports back to the loop
        from rigcli.engine import capture  # with logging, only when a hook really runs

        fixed: dict[str, object] = {
            "config": freeze({}),
            "local": self.local,
            "log": capture.handler_logger(node_path),
            "workflow": NamedContext(workflow.name, freeze(workflow_ctx)),
            "workspace": workspace,
            "input": input_value,
            "step": None,
        }
        factories = session.runtime_factories(
            hook.providers, node_path=node_path, workspace=workspace.name if workspace else None, owner=owner
        )
        # Entered here, on the loop, so the consent is in the context the handler's thread copies.
        with operation_consent() if consented else contextlib.nullcontext():
            kwargs = await build_kwargs(hook.fn, fixed, factories)
            return await call_handler(hook.fn, kwargs, capture.NodeConsole(node_path, self.emit))

    async def fork(self, name: str, workflow: str | None = None) -> WorkspaceRecord:
        """Apply the workflow and create workspace ``name`` from its context.

        The apply and the ``creating`` record happen under the state lock; the create hook runs
        without it (copying a machine may take a while, and other forks must not wait for it),
        with this process's pid on the record so ``rm`` can tell a live create from a cut-off one.
        """
        name = check_workspace_name(name)
        selected = self.select(workflow)
        if selected.create_hook is None:
            raise RigError(f"Workflow {selected.name} does not define a workspace")
        store = self.project.store
        with self.project.stores.writing("fork"):
            existing = store.get_workspace(name, selected.name)
            if existing is not None:
                hint = f'; run "rig rm {name}" to clean it up first' if existing.get("status") != "ready" else ""
                raise InputError(f"Workspace {name} already exists in workflow {selected.name}{hint}")
            session = await self.session(selected, "require")
            applied = await self.apply_locked(selected, session)
            now = utc_now()
            record: WorkspaceRecord = {
                "id": os.urandom(16).hex(),
                "name": name,
                "workflow": selected.name,
                "workflow_ctx": applied.context,
                "ctx": {},
                "status": "creating",
                "resources": [],
                "error": None,
                "created_at": now,
                "updated_at": now,
                "pid": os.getpid(),
                "host": this_host(),
            }
            record = store.save_workspace(record)
        self.emit(WorkspaceCreateStarted(workflow=selected.name, workspace=name))
        node_path = f"workspace:{name}:create"

        def journal(event: Event) -> None:
            # Machines made while create runs are attached to the record as they appear,
            # so a failed create still knows what to clean up.
            if isinstance(event, ProviderEvent) and event.node_path == node_path and event.kind.endswith(".created"):
                store.attach_workspace_resource(name, selected.name, event.to_json())

        unsubscribe = self.on_event(journal)
        try:
            result = await self._run_hook(
                selected,
                session,
                selected.create_hook,
                node_path=node_path,
                workflow_ctx=applied.context,
                workspace=NamedContext(name, freeze({})),
                owner=("workspace", record["id"]),  # what rm cleans, even if this process dies
            )
            ctx = json_result(result if result is not None else {}, f"Workflow {selected.name} workspace create result")
            if not isinstance(ctx, dict):
                raise TaskError(f"Workflow {selected.name} workspace create result must be an object")
        except BaseException as exc:
            message = str(exc) if isinstance(exc, RigError) else f"{type(exc).__name__}: {exc}"
            with self.project.stores.writing("fork"):
                failed = store.get_workspace(name, selected.name)
                if failed is not None:  # unless rm --force took it meanwhile
                    store.save_workspace({**failed, "status": "failed", "error": message, "updated_at": utc_now()})
            if isinstance(exc, Exception) and not isinstance(exc, RigError):
                raise TaskError(f"Workspace {name} create failed: {message}") from exc
            raise
        finally:
            unsubscribe()
        with self.project.stores.writing("fork"):
            stored = store.get_workspace(name, selected.name)
            if stored is None:  # removed with rm --force while it was being created
                raise TaskError(
                    f"Workspace {name} was removed while it was being created; rig gc collects what it made"
                )
            ready: WorkspaceRecord = {
                **stored,
                "ctx": ctx,
                "status": "ready",
                "error": None,
                "updated_at": utc_now(),
                "pid": None,
                "host": None,
            }
            store.save_workspace(ready)
        self.emit(WorkspaceReady(workflow=selected.name, workspace=name))
        return ready

    async def remove_workspace(
        self, name: str, workflow: str | None = None, *, consented: bool = False, force: bool = False
    ) -> WorkspaceRecord:
        """Remove a workspace in any state: its remove hook if its create completed, then everything
        the effects journal says was made for it; the record goes only once all of that is gone.

        ``force``: delete the record even when the remove hook fails or a resource's removal is
        uncertain; what could not be removed stays journaled for ``rig gc`` (a warning says so).
        """
        store = self.project.store
        with self.project.stores.writing("rm"):
            # Read under the lock: a concurrent rm must find the record gone, not remove it twice.
            selected, record = self.find_workspace(name, workflow)
            if not force:
                _refuse_a_live_create(record)
            # Only a workspace whose create completed (ready, or removing since) gets the user's
            # remove hook; a cut-off or failed create has nothing the hook could rely on. Such a
            # record keeps its status while it is cleaned, so a retry still knows.
            created = record.get("status") in ("ready", "removing")
            if created:
                record = store.save_workspace({**record, "status": "removing", "updated_at": utc_now()})
            self.emit(WorkspaceRemoveStarted(workflow=selected.name, workspace=name))
            problems: list[str] = []
            try:
                run_hook = created and selected.remove_hook is not None
                session = await self.session(selected, "require" if run_hook else "plan")
                if run_hook and selected.remove_hook is not None:
                    try:
                        await self._run_hook(
                            selected,
                            session,
                            selected.remove_hook,
                            node_path=f"workspace:{name}:remove",
                            workflow_ctx=record.get("workflow_ctx"),
                            workspace=NamedContext(name, freeze(record.get("ctx"))),
                            consented=consented,
                            owner=("workspace", record["id"]),
                        )
                    except Exception as exc:
                        if not force:
                            raise
                        problems.append(f"the remove hook failed: {_message(exc)}")
                outcome = await remove_workspace_effects(store, session, record, created=created)
                if outcome.failed:
                    problems.append(outcome.summary())
                    if not force:
                        raise RigError(problems[-1])
            except Exception as exc:
                message = _message(exc)
                store.save_workspace({**record, "error": message, "updated_at": utc_now()})
                raise TaskError(
                    f"Workspace {name} was not removed: {message}. Its record is kept: run rig rm {name} "
                    f"again once that is fixed, or rig rm --force {name} to forget it"
                ) from exc
            store.delete_workspace(name, selected.name)
            if problems:
                self.emit(
                    StateWarning(
                        message=f"Workspace {name} removed with --force, but {'; '.join(problems)}; "
                        "what could not be removed stays in the effects journal for rig gc"
                    )
                )
            self.emit(WorkspaceRemoveCompleted(workflow=selected.name, workspace=name))
            return record


__all__ = ["REMOVE", "WorkspaceMixin"]

"""Operations: workflow-level ones (``rig op OPERATION``) and workspace ones (``rig op WORKSPACE OPERATION``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from rigcli.engine.hooks import run_hook
from rigcli.engine.inputs import WorkspaceResolver, operation_info, validate_input
from rigcli.engine.invoke import NamedContext, freeze, json_result
from rigcli.engine.lifecycle import Lifecycle
from rigcli.engine.project import Project
from rigcli.engine.results import OperationInfo
from rigcli.engine.workspace_history import recorded
from rigcli.engine.workspaces import REMOVE, Workspaces
from rigcli.errors import NotFoundError, RigError, TaskError, UsageError, describe_exception
from rigcli.events import (
    OperationCompleted,
    OperationStarted,
    WorkspaceOperationCompleted,
    WorkspaceOperationStarted,
)
from rigcli.graph import CompiledWorkflow, HookSpec
from rigcli.jsonutil import JsonValue

if TYPE_CHECKING:  # only a workflow operation plans; listing operations (rig exec asks) never imports it
    from rigcli.engine.planner import Planner


@contextlib.contextmanager
def _failures_as(label: str) -> Iterator[None]:
    """An operation's own exception becomes a TaskError naming it (exit 1), never an internal error."""
    try:
        yield
    except RigError:
        raise
    except Exception as exc:
        raise TaskError(f"{label} failed: {describe_exception(exc)}") from exc


class Operations:
    """List and run the project's operations."""

    def __init__(
        self, project: Project, planner: Callable[[], Planner], workspaces: Workspaces, lifecycle: Lifecycle
    ) -> None:
        self.project = project
        self._planner = planner  # made when a workflow operation first plans (listing them never does)
        self.workspaces = workspaces
        self.lifecycle = lifecycle

    def list_operations(self, workflow: str | None = None) -> list[OperationInfo]:
        """Workflow-level operations (``rig op OPERATION``)."""
        return [
            operation_info(wf.name, op.definition)
            for wf in self.project.chosen(workflow)
            for op in wf.operations.values()
        ]

    def list_workspace_operations(self, workflow: str | None = None) -> list[OperationInfo]:
        """Workspace operations (``rig op WORKSPACE OPERATION``), with the built-in ``remove``."""
        infos: list[OperationInfo] = []
        for wf in self.project.chosen(workflow):
            infos.extend(operation_info(wf.name, op.definition) for op in wf.workspace_operations.values())
            if wf.creates_workspace:
                infos.append(OperationInfo(REMOVE, wf.name, True, "Remove", "Remove this workspace", None, None))
        return infos

    async def run_workspace_operation(
        self,
        workspace: str,
        operation: str,
        input: dict[str, object] | None = None,
        workflow: str | None = None,
        *,
        start: bool = False,
    ) -> JsonValue:
        """Run ``operation`` on ``workspace``; running it is the user's consent to its host commands.

        A stopped workspace is refused in one line (``start`` starts it first), a missing one too.
        """
        selected, record = self.workspaces.find_workspace(workspace, workflow)
        if operation == REMOVE:
            removed = await self.workspaces.remove_workspace(workspace, selected.name, consented=True)
            return json_result(removed.to_json(), "Removed workspace")
        spec = selected.workspace_operations.get(operation)
        if spec is None:
            available = ", ".join([*selected.workspace_operations, REMOVE])
            raise NotFoundError(
                f'Workflow {selected.name} has no workspace operation "{operation}" (available: {available})'
            )
        value = validate_input(spec.definition, input or {}, self._resolve_workspace_ref(selected))
        await self.lifecycle.require_running(selected, record, start=start)
        with self.project.stores.writing(f"op {workspace} {operation}"):
            selected, record = self.workspaces.find_workspace(workspace, selected.name)  # again, under the lock
            self.project.emit(
                WorkspaceOperationStarted(workflow=selected.name, workspace=workspace, operation=operation)
            )
            session = await self.project.session(selected, "require")
            with _failures_as(f"Workspace operation {operation} on {workspace}"):
                called = run_hook(
                    self.project,
                    selected,
                    session,
                    HookSpec(spec.definition.run, spec.providers, operation),
                    node_path=f"{workspace}/{operation}",
                    workflow_ctx=record.workflow_ctx,
                    workspace=NamedContext(workspace, freeze(record.ctx)),
                    input_value=value,
                    owner=("workspace", record.id),  # machines an operation makes are the workspace's
                    consented=True,
                )
                command = f"op {operation}"
                result = await recorded(
                    self.project,
                    called,
                    workflow=selected.name,
                    workspace=workspace,
                    command=command,
                )
            output = json_result(result, f"Workspace operation {operation} result")
            self.project.emit(
                WorkspaceOperationCompleted(workflow=selected.name, workspace=workspace, operation=operation)
            )
            return output

    async def run_operation(
        self, operation: str, input: dict[str, object] | None = None, workflow: str | None = None
    ) -> JsonValue:
        """Run a workflow-level operation against the workflow's planned context."""
        owners = [wf for wf in self.project.workflows.values() if operation in wf.operations]
        if workflow is not None:
            owners = [wf for wf in owners if wf.name == self.project.select(workflow).name]
        if not owners:
            raise NotFoundError(f'Unknown operation "{operation}"')
        if len(owners) > 1:
            raise UsageError(f"Multiple workflows define operation {operation}; pass --workflow")
        selected = owners[0]
        spec = selected.operations[operation]
        value = validate_input(spec.definition, input or {}, self._resolve_workspace_ref(selected))
        with self.project.stores.writing(f"op {operation}"):
            session = await self.project.session(selected, "require")
            plan = await self._planner().plan_with(selected, session)
            self.project.emit(OperationStarted(workflow=selected.name, operation=operation))
            with _failures_as(f"Operation {operation}"):
                called = run_hook(
                    self.project,
                    selected,
                    session,
                    HookSpec(spec.definition.run, spec.providers, operation),
                    node_path=f"op:{operation}",
                    workflow_ctx=plan.final_context,
                    workspace=None,
                    input_value=value,
                    consented=True,
                )
                command = f"op {operation}"
                result = await recorded(self.project, called, workflow=selected.name, workspace=None, command=command)
            output = json_result(result, f"Operation {operation} result")
            self.project.emit(OperationCompleted(workflow=selected.name, operation=operation))
            return output

    def _resolve_workspace_ref(self, workflow: CompiledWorkflow) -> WorkspaceResolver:
        def resolve(name: str) -> dict[str, JsonValue]:
            _, record = self.workspaces.find_workspace(name, workflow.name)
            return {"name": record.name, "ctx": record.ctx or {}}

        return resolve


__all__ = ["Operations"]

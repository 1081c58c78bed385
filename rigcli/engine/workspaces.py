"""Workspaces and operations: fork, remove, workspace operations and workflow operations."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any

from rigcli.authoring.project import check_workspace_name
from rigcli.engine import capture
from rigcli.engine.core import EngineCore
from rigcli.engine.inputs import operation_info, validate_input
from rigcli.engine.invoke import NamedContext, build_kwargs, call_handler, freeze, json_result
from rigcli.engine.results import OperationInfo, WorkspaceRecord
from rigcli.errors import InputError, NotFoundError, RigError, TaskError, UsageError
from rigcli.events import Event
from rigcli.graph import CompiledWorkflow, HookSpec

REMOVE = "remove"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


class WorkspaceMixin(EngineCore):
    def list_workspaces(self, workflow: str | None = None) -> list[WorkspaceRecord]:
        self._require_loaded()
        records: list[WorkspaceRecord] = self.store.list_workspaces(workflow)
        return records

    def find_workspace(self, name: str, workflow: str | None = None) -> tuple[CompiledWorkflow, WorkspaceRecord]:
        self._require_loaded()
        if workflow is not None:
            selected = self.select(workflow)
            record = self.store.get_workspace(name, selected.name)
            if record is None:
                raise NotFoundError(f'Unknown workspace "{name}" in workflow {selected.name}')
            return selected, record
        matches = [item for item in self.store.list_workspaces() if item["name"] == name]
        if not matches:
            raise NotFoundError(f'Unknown workspace "{name}"')
        if len(matches) > 1:
            owners = ", ".join(item["workflow"] for item in matches)
            raise UsageError(
                f'Workspace "{name}" exists in multiple workflows: {owners}. Pass --workflow to choose one.'
            )
        record = matches[0]
        if record["workflow"] not in self.workflows:
            raise NotFoundError(
                f'Workspace "{name}" belongs to workflow {record["workflow"]}, which rig_config.py no longer defines'
            )
        return self.workflows[record["workflow"]], record

    async def _run_hook(
        self,
        workflow: CompiledWorkflow,
        hook: HookSpec,
        *,
        node_path: str,
        workflow_ctx: Any,
        workspace: NamedContext | None,
        input_value: Any = None,
        on_event: Any = None,
    ) -> Any:
        session = await self.session(workflow, "require")
        emit = self.emit
        if on_event is not None:

            def emit(event: Event) -> None:
                on_event(event)
                self.emit(event)

            session.emit = emit
        fixed = {
            "config": freeze({}),
            "local": self.local,
            "log": capture.handler_logger(node_path),
            "workflow": NamedContext(workflow.name, freeze(workflow_ctx)),
            "workspace": workspace,
            "input": input_value,
            "step": None,
        }
        factories = session.runtime_factories(
            hook.providers, node_path=node_path, workspace=workspace.name if workspace else None
        )
        kwargs = await build_kwargs(hook.fn, fixed, factories)
        return await call_handler(hook.fn, kwargs, capture.NodeConsole(node_path, emit))

    async def fork(self, name: str, workflow: str | None = None) -> WorkspaceRecord:
        name = check_workspace_name(name)
        selected = self.select(workflow)
        if selected.create_hook is None:
            raise RigError(f"Workflow {selected.name} does not define a workspace")
        assert self.stores is not None
        with self.stores.writing("fork"):
            existing = self.store.get_workspace(name, selected.name)
            if existing is not None:
                hint = f'; run "rig rm {name}" to clean it up first' if existing.get("status") != "ready" else ""
                raise InputError(f"Workspace {name} already exists in workflow {selected.name}{hint}")
            applied = await self.apply(selected.name)
            now = _now()
            record: WorkspaceRecord = {
                "id": uuid.uuid4().hex,
                "name": name,
                "workflow": selected.name,
                "workflow_ctx": applied.context,
                "ctx": {},
                "status": "creating",
                "resources": [],
                "error": None,
                "created_at": now,
                "updated_at": now,
            }
            self.store.save_workspace(record)
            self.emit({"type": "workspace.create.started", "workflow": selected.name, "workspace": name})

            def journal(event: Event) -> None:
                # Machines made while create runs are attached to the record as they appear,
                # so a failed create still knows what to clean up.
                if str(event.get("type", "")).endswith(".created") and event.get("type") != "artifact.created":
                    self.store.attach_workspace_resource(name, selected.name, dict(event))

            try:
                result = await self._run_hook(
                    selected,
                    selected.create_hook,
                    node_path=f"workspace:{name}:create",
                    workflow_ctx=applied.context,
                    workspace=NamedContext(name, freeze({})),
                    on_event=journal,
                )
                ctx = json_result(
                    result if result is not None else {}, f"Workflow {selected.name} workspace create result"
                )
                if not isinstance(ctx, dict):
                    raise TaskError(f"Workflow {selected.name} workspace create result must be an object")
            except BaseException as exc:
                failed = self.store.get_workspace(name, selected.name) or record
                message = str(exc) if isinstance(exc, RigError) else f"{type(exc).__name__}: {exc}"
                self.store.save_workspace({**failed, "status": "failed", "error": message, "updated_at": _now()})
                if isinstance(exc, Exception) and not isinstance(exc, RigError):
                    raise TaskError(f"Workspace {name} create failed: {message}") from exc
                raise
            stored = self.store.get_workspace(name, selected.name) or record
            ready: WorkspaceRecord = {**stored, "ctx": ctx, "status": "ready", "error": None, "updated_at": _now()}
            self.store.save_workspace(ready)
            self.emit({"type": "workspace.ready", "workflow": selected.name, "workspace": name})
            return ready

    async def remove_workspace(self, name: str, workflow: str | None = None) -> WorkspaceRecord:
        selected, record = self.find_workspace(name, workflow)
        assert self.stores is not None
        with self.stores.writing("rm"):
            self.store.save_workspace({**record, "status": "removing", "updated_at": _now()})
            self.emit({"type": "workspace.remove.started", "workflow": selected.name, "workspace": name})
            try:
                if selected.remove_hook is not None and record.get("status") != "failed":
                    await self._run_hook(
                        selected,
                        selected.remove_hook,
                        node_path=f"workspace:{name}:remove",
                        workflow_ctx=record.get("workflow_ctx"),
                        workspace=NamedContext(name, freeze(record.get("ctx"))),
                    )
                await self._clean_resources(selected, record)
            except Exception as exc:
                message = str(exc) if isinstance(exc, RigError) else f"{type(exc).__name__}: {exc}"
                self.store.save_workspace({**record, "status": "removing", "error": message, "updated_at": _now()})
                raise TaskError(
                    f"Workspace {name} remove failed (run rig rm {name} again to retry): {message}"
                ) from exc
            self.store.delete_workspace(name, selected.name)
            self.emit({"type": "workspace.remove.completed", "workflow": selected.name, "workspace": name})
            return record

    async def _clean_resources(self, workflow: CompiledWorkflow, record: WorkspaceRecord) -> None:
        """Leftovers of a failed create: ask their providers to clean them up (idempotently)."""
        if record.get("status") != "failed":
            return
        session = await self.session(workflow, "plan")
        for resource in record.get("resources") or []:
            controller = session.controller_for_artifact(str(resource.get("provider_id", "")), workflow.root_providers)
            cleanup = getattr(controller, "cleanup_resource", None)
            if cleanup is not None:
                from rigcli.engine.providers import maybe_await

                await maybe_await(cleanup(resource))

    def list_operations(self, workflow: str | None = None) -> list[OperationInfo]:
        self._require_loaded()
        chosen = [self.select(workflow)] if workflow else list(self.workflows.values())
        return [operation_info(wf.name, op.definition) for wf in chosen for op in wf.operations.values()]

    def list_runtime_workspace_operations(self, workflow: str | None = None) -> list[OperationInfo]:
        self._require_loaded()
        chosen = [self.select(workflow)] if workflow else list(self.workflows.values())
        infos: list[OperationInfo] = []
        for wf in chosen:
            infos.extend(operation_info(wf.name, op.definition) for op in wf.workspace_operations.values())
            if wf.creates_workspace:
                infos.append(OperationInfo(REMOVE, wf.name, True, "Remove", "Remove this workspace", None, None))
        return infos

    async def run_runtime_operation(
        self, operation: str, input: dict[str, Any] | None = None, workflow: str | None = None
    ) -> Any:
        workspace_name, sep, op_id = operation.partition("/")
        if not sep or not workspace_name or not op_id:
            raise InputError(f'Workspace operations are addressed as WORKSPACE/OPERATION, not "{operation}"')
        selected, record = self.find_workspace(workspace_name, workflow)
        if op_id == REMOVE:
            return await self.remove_workspace(workspace_name, selected.name)
        spec = selected.workspace_operations.get(op_id)
        if spec is None:
            available = ", ".join([*selected.workspace_operations, REMOVE])
            raise NotFoundError(
                f'Workflow {selected.name} has no workspace operation "{op_id}" (available: {available})'
            )
        value = validate_input(spec.definition, input or {}, self._resolve_workspace_ref(selected))
        assert self.stores is not None
        with self.stores.writing(f"op {operation}"):
            self.emit(
                {
                    "type": "workspace.operation.started",
                    "workflow": selected.name,
                    "workspace": workspace_name,
                    "operation": op_id,
                }
            )
            result = await self._run_hook(
                selected,
                HookSpec(spec.definition.run, spec.providers, op_id),
                node_path=f"{workspace_name}/{op_id}",
                workflow_ctx=record.get("workflow_ctx"),
                workspace=NamedContext(workspace_name, freeze(record.get("ctx"))),
                input_value=value,
            )
            output = json_result(result, f"Workspace operation {op_id} result")
            self.emit(
                {
                    "type": "workspace.operation.completed",
                    "workflow": selected.name,
                    "workspace": workspace_name,
                    "operation": op_id,
                }
            )
            return output

    async def run_operation(
        self, operation: str, input: dict[str, Any] | None = None, workflow: str | None = None
    ) -> Any:
        self._require_loaded()
        owners = [wf for wf in self.workflows.values() if operation in wf.operations]
        if workflow is not None:
            owners = [wf for wf in owners if wf.name == self.select(workflow).name]
        if not owners:
            raise NotFoundError(f'Unknown operation "{operation}"')
        if len(owners) > 1:
            raise UsageError(f"Multiple workflows define operation {operation}; pass --workflow")
        selected = owners[0]
        spec = selected.operations[operation]
        value = validate_input(spec.definition, input or {}, self._resolve_workspace_ref(selected))
        plan = await self.plan(selected.name)
        assert self.stores is not None
        with self.stores.writing(f"op {operation}"):
            self.emit({"type": "operation.started", "workflow": selected.name, "operation": operation})
            result = await self._run_hook(
                selected,
                HookSpec(spec.definition.run, spec.providers, operation),
                node_path=f"op:{operation}",
                workflow_ctx=plan.final_context,
                workspace=None,
                input_value=value,
            )
            output = json_result(result, f"Operation {operation} result")
            self.emit({"type": "operation.completed", "workflow": selected.name, "operation": operation})
            return output

    def _resolve_workspace_ref(self, workflow: CompiledWorkflow) -> Any:
        def resolve(name: str) -> dict[str, Any]:
            record = self.store.get_workspace(name, workflow.name)
            if record is None:
                raise NotFoundError(f'Unknown workspace "{name}" in workflow {workflow.name}')
            return {"name": record["name"], "ctx": record.get("ctx") or {}}

        return resolve


__all__ = ["WorkspaceMixin"]

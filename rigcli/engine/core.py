"""The engine: load a project, plan and apply its workflows, and expose what it knows."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rigcli.cachekeys import fragment_hash, task_key
from rigcli.config_loader import CONFIG_FILE, LoadedConfig, load_config
from rigcli.engine.evaluate import Evaluation, Restart
from rigcli.engine.hostadapter import adapt_local
from rigcli.engine.interactions import host_presenter
from rigcli.engine.providers import ProviderHub
from rigcli.engine.results import ApplyResult, NodeRun, ProjectInfo, WorkflowPlan, WorkflowSummary
from rigcli.engine.session import ProviderSession
from rigcli.engine.stores import Stores
from rigcli.errors import NotFoundError, RigError, TaskError, UsageError
from rigcli.events import Event, EventBus, EventListener
from rigcli.graph import CompiledWorkflow, FragmentSpec, compile_workflow
from rigcli.provider_api import Cancellation

MAX_ATTEMPTS = 9


class EngineCore:
    def __init__(
        self,
        project_dir: str | Path,
        *,
        config_path: str | Path | None = None,
        state_path: str | Path | None = None,
        provider_factory: Callable[..., Any] | None = None,
        providers: Iterable[Any] | None = None,
        local: Any = None,
        interaction: Any = None,
        host_storage_dir: str | Path | None = None,
        fragment_state_locator: Callable[[FragmentSpec], Any] | None = None,
        state: Any = None,
        state_factory: Callable[..., Any] | None = None,
        lock_wait: bool = True,
    ) -> None:
        self.project_dir = Path(project_dir).absolute()
        self.config_path = Path(config_path).absolute() if config_path else self.project_dir / CONFIG_FILE
        self._state_path_arg = None if state_path is None else str(Path(state_path).absolute())
        self._provider_factory = provider_factory
        self._plugins = list(providers or [])
        self.local = adapt_local(local)
        self.presenter = host_presenter(interaction)
        self._host_storage_dir = Path(host_storage_dir) if host_storage_dir else None
        self._locator = fragment_state_locator
        self._state_arg, self._state_factory = state, state_factory
        self._lock_wait = lock_wait
        self.events = EventBus()
        self.cancellation = Cancellation()
        self.store: Any = None
        self.stores: Stores | None = None
        self.hub: ProviderHub | None = None
        self.loaded: LoadedConfig | None = None
        self.workflows: dict[str, CompiledWorkflow] = {}
        self._keys: dict[str, dict[int, str]] = {}
        self.schema_warnings: list[str] = []

    # -- loading ---------------------------------------------------------------------------
    def on_event(self, listener: EventListener) -> Callable[[], None]:
        return self.events.subscribe(listener)

    def emit(self, event: Event) -> None:
        self.events.emit(event)

    def fingerprint(self, fn: Any) -> str:
        from rigcli.fingerprint import handler_fingerprint

        return handler_fingerprint(fn, project_dir=self.project_dir)

    async def load(self) -> None:
        self.loaded = load_config(self.config_path, self.project_dir)
        compiled = {}
        for root in self.loaded.workflows:
            workflow = compile_workflow(root, self.loaded.providers, lambda f: fragment_hash(f.node, self.fingerprint))
            compiled[workflow.name] = workflow
        self.workflows, self._keys = compiled, {}
        if self.store is None:
            self._open_state()

    def _open_state(self) -> None:
        from rigcli.state import HostStorage, default_host_storage_dir

        if self._state_arg is not None:
            store = self._state_arg
        else:
            options: dict[str, Any] = {
                "project_dir": str(self.project_dir),
                "config_path": str(self.config_path),
                "state_path": self._state_path_arg,
            }
            if self._state_factory is not None:
                store = self._state_factory(**options)
            else:
                from rigcli.state import create_state_store

                store = create_state_store(**options)
        result = store.sync_schema()
        self.schema_warnings = list(result.warnings)
        for warning in self.schema_warnings:
            self.emit({"type": "state.warning", "message": warning})
        for key, value in (("project.dir", str(self.project_dir)), ("config.path", str(self.config_path))):
            if store.get_metadata(key) != value:  # plan and ls must not write on every load
                store.set_metadata(key, value)
        self.store = store
        self.stores = Stores(
            store,
            project_dir=self.project_dir,
            locator=self._locator,
            lock_wait=self._lock_wait,
            on_lock_wait=lambda holder: self.emit({"type": "state.lock.waiting", "holder": dict(holder)}),
            on_lock_takeover=lambda holder: self.emit({"type": "state.lock.takeover", "holder": dict(holder)}),
        )
        host_dir = self._host_storage_dir or default_host_storage_dir()
        self.hub = ProviderHub(
            plugins=self._plugins,
            provider_factory=self._provider_factory,
            local=self.local,
            project_storage=store.provider_storage,
            host_storage=lambda provider_id: HostStorage(provider_id, host_dir),
            project_dir=self.project_dir,
            state_dir=Path(store.path).parent,
            secret_key_path=host_dir / ".fingerprint-key",
            cancellation=self.cancellation,
        )

    def _require_loaded(self) -> None:
        if self.loaded is None or self.stores is None or self.hub is None:
            raise RigError("No workflows loaded. Call engine.load() first.")

    # -- selection ---------------------------------------------------------------------------
    def select(self, workflow: str | None = None) -> CompiledWorkflow:
        self._require_loaded()
        names = list(self.workflows)
        if workflow is not None:
            if workflow not in self.workflows:
                raise NotFoundError(f"Unknown workflow {workflow} (available: {', '.join(names) or '(none)'})")
            return self.workflows[workflow]
        if len(names) == 1:
            return self.workflows[names[0]]
        raise UsageError(f"Multiple workflows are defined; pass --workflow (available: {', '.join(names)})")

    def keys_for(self, workflow: CompiledWorkflow) -> dict[int, str]:
        if workflow.name not in self._keys:
            self._keys[workflow.name] = {task.index: task_key(task, self.fingerprint) for task in workflow.tasks}
        return self._keys[workflow.name]

    async def session(self, workflow: CompiledWorkflow, mode: str) -> ProviderSession:
        assert self.hub is not None and self.stores is not None
        self.stores.register_fragments(workflow.fragments)
        session = ProviderSession(
            hub=self.hub,
            workflow=workflow.name,
            local=self.local,
            emit=self.emit,
            presenter=self.presenter,
            loop=asyncio.get_running_loop(),
            mode=mode,
        )
        await session.prepare(workflow.all_scopes())
        return session

    def evaluation(self, workflow: CompiledWorkflow, session: ProviderSession, *, apply: bool) -> Evaluation:
        assert self.stores is not None
        return Evaluation(
            workflow=workflow,
            keys=self.keys_for(workflow),
            stores=self.stores,
            session=session,
            emit=self.emit,
            apply=apply,
        )

    # -- plan and apply ----------------------------------------------------------------------
    async def plan(self, workflow: str | None = None) -> WorkflowPlan:
        selected = self.select(workflow)
        session = await self.session(selected, "plan")
        evaluation = self.evaluation(selected, session, apply=False)
        final = await evaluation.run()
        plan = WorkflowPlan(selected.name, evaluation.plan_nodes(), final, session.all_checks())
        self.emit(
            {
                "type": "plan.created",
                "workflow": selected.name,
                "cached_node_count": plan.cached_node_count,
                "node_count": plan.node_count,
            }
        )
        return plan

    async def apply(self, workflow: str | None = None, dry_run: bool = False) -> ApplyResult:
        plan = await self.plan(workflow)
        if dry_run:
            return ApplyResult(plan.workflow, plan.final_context, plan, dry_run=True)
        assert self.stores is not None
        with self.stores.writing("apply"):
            return await self._apply_locked(self.workflows[plan.workflow], plan)

    async def _apply_locked(self, selected: CompiledWorkflow, plan: WorkflowPlan) -> ApplyResult:
        assert self.stores is not None
        self.emit({"type": "workflow.apply.started", "workflow": selected.name, "node_count": len(selected.tasks)})
        try:
            session = await self.session(selected, "require")
            for attempt in range(1, MAX_ATTEMPTS + 1):
                evaluation = self.evaluation(selected, session, apply=True)
                try:
                    context = await evaluation.run()
                    break
                except Restart as restart:
                    self._invalidate_everywhere(selected, [restart.target.index])
                    if attempt == MAX_ATTEMPTS:
                        raise TaskError(
                            f"Task {restart.task.path} repeatedly invalidated {restart.target.path}; "
                            f"stopping after {MAX_ATTEMPTS} attempts"
                        ) from None
        except asyncio.CancelledError:
            self.cancellation.cancel()
            raise
        cached = sum(1 for node in evaluation.plan_nodes() if node.status == "cached")
        self.stores.local.record_apply(
            selected.name,
            provider_fingerprint=session.fingerprint(selected.root_providers),
            cached_node_count=cached,
            node_count=len(selected.tasks),
        )
        self.emit(
            {
                "type": "workflow.apply.completed",
                "workflow": selected.name,
                "ran": evaluation.ran,
                "cached_node_count": cached,
                "node_count": len(selected.tasks),
            }
        )
        return ApplyResult(selected.name, context, plan)

    def _invalidate_everywhere(self, workflow: CompiledWorkflow, indexes: list[int]) -> int:
        """Invalidate every valid run of these tasks (older ones too) and, by cascade, runs built on them."""
        assert self.stores is not None
        changed = 0
        for index in indexes:
            task = workflow.tasks[index]
            store = self.stores.for_write(task.store)
            runs = store.list_runs(
                workflow=self.stores.workflow_column(task.store, workflow.name),
                node_path=task.cache_path,
                statuses=["succeeded"],
            )
            changed += store.invalidate_runs([run.id for run in runs if not run.invalidated], cascade=True)
        return changed

    # -- what the engine knows -----------------------------------------------------------------
    def list_workflow_summaries(self) -> list[WorkflowSummary]:
        self._require_loaded()
        return [
            WorkflowSummary(
                name=wf.name,
                node_count=len(wf.tasks),
                creates_workspace=wf.creates_workspace,
                operations=list(wf.operations),
                workspace_operations=list(wf.workspace_operations),
            )
            for wf in self.workflows.values()
        ]

    def get_project_info(self) -> ProjectInfo:
        summaries = self.list_workflow_summaries()
        return ProjectInfo(
            project_dir=str(self.project_dir),
            config_path=str(self.config_path),
            state_path=str(self.store.path),
            workflows=summaries,
            workflow=summaries[0] if len(summaries) == 1 else None,
        )

    def list_node_runs(self, workflow: str | None = None) -> list[NodeRun]:
        self._require_loaded()
        runs: list[NodeRun] = self.store.list_runs(workflow=workflow)
        return runs

    def close(self) -> None:
        if self.stores is not None:
            self.stores.close()
        if self.store is not None:
            self.store.close()


__all__ = ["MAX_ATTEMPTS", "EngineCore"]

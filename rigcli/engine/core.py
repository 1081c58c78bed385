"""The engine core: load a project, select workflows, plan, and apply in one pass under the lock."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from rigcli.cachekeys import fragment_hash, task_key
from rigcli.config_loader import LoadedConfig, load_config
from rigcli.engine.driver import is_cancellation
from rigcli.engine.effects import StoreEffects
from rigcli.engine.evaluate import Evaluation, Restart, RunIndex
from rigcli.engine.hostadapter import SuppliedHost, adapt_local
from rigcli.engine.interactions import host_presenter
from rigcli.engine.providers import ProviderFactory, ProviderHub
from rigcli.engine.results import ApplyResult, ProjectInfo, WorkflowPlan, WorkflowSummary
from rigcli.engine.session import ProviderSession
from rigcli.engine.stores import FragmentLocator, Stores
from rigcli.errors import NotFoundError, RigError, TaskError, UsageError
from rigcli.event_bus import EventBus, EventListener
from rigcli.events import (
    Event,
    PlanCreated,
    StateWarning,
    WorkflowApplyCompleted,
    WorkflowApplyStarted,
)
from rigcli.graph import CompiledWorkflow, compile_workflow
from rigcli.layout import CONFIG_FILE, STATE_DIR, is_state_url
from rigcli.provider_api import Cancellation, ProviderPlugin
from rigcli.records import NodeRun
from rigcli.state.api import StateStatus, StateStore
from rigcli.state.factory import StateFactory, open_state_store

MAX_ATTEMPTS = 9


@dataclass
class LoadedProject:
    """What ``load()`` produced: the config, its compiled workflows, the state and the providers."""

    config: LoadedConfig
    workflows: dict[str, CompiledWorkflow]
    store: StateStore
    stores: Stores
    hub: ProviderHub


class EngineCore:
    """A project's engine. See ``rigcli.engine.create_engine`` for what each option means."""

    def __init__(
        self,
        project_dir: str | Path,
        *,
        config_path: str | Path | None = None,
        state_path: str | Path | None = None,
        providers: Iterable[ProviderPlugin] = (),
        provider_factory: ProviderFactory | None = None,
        local: SuppliedHost | None = None,
        interaction: object = None,
        host_storage_dir: str | Path | None = None,
        fragment_state_locator: FragmentLocator | None = None,
        state: StateStore | None = None,
        state_factory: StateFactory | None = None,
        lock_wait: bool = True,
    ) -> None:
        self.project_dir = Path(project_dir).absolute()
        self.config_path = Path(config_path).absolute() if config_path else self.project_dir / CONFIG_FILE
        # A PostgreSQL URL stays as written; a path is made absolute against the cwd.
        self._state_path = None if state_path is None else _state_location(state_path)
        self._provider_factory = provider_factory
        self._plugins = list(providers)
        self.local = adapt_local(local)
        self.presenter = host_presenter(interaction)
        self._host_storage_dir = Path(host_storage_dir) if host_storage_dir else None
        self._locator = fragment_state_locator
        self._state, self._state_factory = state, state_factory
        self._lock_wait = lock_wait
        self.events = EventBus()
        self.cancellation = Cancellation()
        self._project: LoadedProject | None = None
        self._keys: dict[str, dict[int, str]] = {}

    # -- loading ---------------------------------------------------------------------------------
    def on_event(self, listener: EventListener) -> Callable[[], None]:
        return self.events.subscribe(listener)

    def emit(self, event: Event) -> None:
        self.events.emit(event)

    def fingerprint(self, fn: object) -> str:
        from rigcli.fingerprint import handler_fingerprint

        return handler_fingerprint(fn, project_dir=self.project_dir)

    async def load(self) -> None:
        """Import rig_config.py, compile its workflows, and open the state on first load."""
        config = load_config(self.config_path, self.project_dir)
        workflows = {}
        for root in config.workflows:
            compiled = compile_workflow(root, config.providers, lambda f: fragment_hash(f.node, self.fingerprint))
            workflows[compiled.name] = compiled
        self._keys = {}
        _declare_secrets(workflows.values())
        if self._project is None:
            store, stores, hub = self._open_state()
            self._project = LoadedProject(config, workflows, store, stores, hub)
        else:
            self._project.config, self._project.workflows = config, workflows

    def _open_state(self) -> tuple[StateStore, Stores, ProviderHub]:
        from rigcli.state import HostStorage, default_host_storage_dir
        from rigcli.state.paths import plugin_index_file, rig_home

        rig_home()  # a RIG_HOME that cannot be a directory fails the load before any state is written
        store = self._state or open_state_store(
            self._state_factory,
            project_dir=str(self.project_dir),
            config_path=str(self.config_path),
            state_path=self._state_path,
        )
        for warning in store.sync_schema().warnings:
            self.emit(StateWarning(message=warning))
        for key, value in (("project.dir", str(self.project_dir)), ("config.path", str(self.config_path))):
            if store.get_metadata(key) != value:  # plan and ls must not write on every load
                store.set_metadata(key, value)
        stores = Stores(
            store,
            open_store=lambda path: open_state_store(None, project_dir=str(self.project_dir), state_path=str(path)),
            locator=self._locator,
            lock_wait=self._lock_wait,
            emit=self.emit,
            cancelled=self.cancellation.is_set,
        )
        host_dir = self._host_storage_dir or default_host_storage_dir()
        hub = ProviderHub(
            plugins=self._plugins,
            provider_factory=self._provider_factory,
            local=self.local,
            project_storage=store.provider_storage,
            host_storage=lambda provider_id: HostStorage(provider_id, host_dir),
            project_dir=self.project_dir,
            state_dir=self._machines_dir(store),
            secret_key_path=host_dir / ".fingerprint-key",
            plugin_index=plugin_index_file(),
            cancellation=self.cancellation,
            effects=lambda provider_id, owner: StoreEffects(store, provider_id, owner),
        )
        return store, stores, hub

    def _machines_dir(self, store: StateStore) -> Path:
        """Where providers keep local files (the ``local`` provider's machines): beside a SQLite
        state, else ``<project>/.rig`` — a shared database holds records, never files."""
        if store.backend == "sqlite":
            return Path(store.path).parent
        return self.project_dir / STATE_DIR

    def state_status(self) -> StateStatus:
        """The project state's backend, masked location, versions and lock holder (never waits)."""
        return self.project.store.status()

    @property
    def project(self) -> LoadedProject:
        if self._project is None:
            raise RigError("No workflows loaded. Call engine.load() first.")
        return self._project

    # -- selection (the one owner of these messages) -----------------------------------------------
    def workflow_names(self) -> list[str]:
        return list(self.project.workflows)

    def select_workflow(self, workflow: str | None = None) -> str:
        """The name of the named workflow, or of the only one (see ``select``)."""
        return self.select(workflow).name

    def select(self, workflow: str | None = None) -> CompiledWorkflow:
        """The named workflow, or the only one; anything else says what is available."""
        workflows = self.project.workflows
        names = ", ".join(workflows) or "(none)"
        if not workflows:
            raise NotFoundError("rig_config.py defines no workflows")
        if workflow is not None:
            if workflow not in workflows:
                raise NotFoundError(f"Unknown workflow {workflow} (available: {names})")
            return workflows[workflow]
        if len(workflows) == 1:
            return next(iter(workflows.values()))
        raise UsageError(f"Multiple workflows are defined; pass --workflow (available: {names})")

    def keys_for(self, workflow: CompiledWorkflow) -> dict[int, str]:
        if workflow.name not in self._keys:
            # Tasks often share a handler; within one load, one function has one fingerprint.
            # The value is kept beside its fingerprint so its id cannot be reused by another.
            known: dict[int, tuple[object, str]] = {}

            def fingerprint(fn: object) -> str:
                if id(fn) not in known:
                    known[id(fn)] = (fn, self.fingerprint(fn))
                return known[id(fn)][1]

            self._keys[workflow.name] = {task.index: task_key(task, fingerprint) for task in workflow.tasks}
        return self._keys[workflow.name]

    async def session(self, workflow: CompiledWorkflow, mode: str) -> ProviderSession:
        """Providers for one command: ``plan`` for read-only commands, ``require`` for writers."""
        project = self.project
        project.stores.register_fragments(workflow.fragments)
        session = ProviderSession(
            hub=project.hub,
            workflow=workflow.name,
            local=self.local,
            emit=self.emit,
            presenter=self.presenter,
            mode=mode,
        )
        await session.prepare(workflow.all_scopes())
        return session

    def evaluation(
        self,
        workflow: CompiledWorkflow,
        session: ProviderSession,
        runs: RunIndex,
        *,
        apply: bool,
        prior: Evaluation | None = None,
    ) -> Evaluation:
        return Evaluation(
            workflow=workflow,
            keys=self.keys_for(workflow),
            stores=self.project.stores,
            runs=runs,
            session=session,
            emit=self.emit,
            apply=apply,
            prior=prior.verdicts if prior is not None else None,
        )

    # -- plan and apply ------------------------------------------------------------------------------
    async def plan(self, workflow: str | None = None) -> WorkflowPlan:
        selected = self.select(workflow)
        return await self.plan_with(selected, await self.session(selected, "plan"))

    async def plan_with(self, selected: CompiledWorkflow, session: ProviderSession) -> WorkflowPlan:
        """The plan of ``selected`` as this command's providers see it."""
        plan, _ = await self._plan(selected, session, RunIndex(self.project.stores, selected.name))
        return plan

    async def _plan(
        self, selected: CompiledWorkflow, session: ProviderSession, runs: RunIndex
    ) -> tuple[WorkflowPlan, Evaluation]:
        evaluation = self.evaluation(selected, session, runs, apply=False)
        final = await evaluation.run()
        plan = WorkflowPlan(selected.name, evaluation.plan_nodes(), final, session.all_checks())
        self.emit(
            PlanCreated(workflow=selected.name, cached_node_count=plan.cached_node_count, node_count=plan.node_count)
        )
        return plan, evaluation

    async def apply(self, workflow: str | None = None, dry_run: bool = False) -> ApplyResult:
        selected = self.select(workflow)
        if dry_run:
            plan = await self.plan(selected.name)
            return ApplyResult(plan.workflow, plan.final_context, plan, dry_run=True)
        with self.project.stores.writing("apply"):
            session = await self.session(selected, "require")
            return await self.apply_locked(selected, session)

    async def apply_locked(self, selected: CompiledWorkflow, session: ProviderSession) -> ApplyResult:
        """Plan once under the caller's lock, then run what is pending with the same session."""
        stores = self.project.stores
        runs = RunIndex(stores, selected.name)
        plan, planned = await self._plan(selected, session, runs)
        self.emit(WorkflowApplyStarted(workflow=selected.name, node_count=len(selected.tasks)))
        prior: Evaluation | None = planned
        try:
            for attempt in range(1, MAX_ATTEMPTS + 1):
                evaluation = self.evaluation(selected, session, runs, apply=True, prior=prior)
                try:
                    context = await evaluation.run()
                    break
                except Restart as restart:
                    self.invalidate_tasks(selected, [restart.target.index])
                    runs.forget()
                    prior = None  # the invalidation changed what the plan judged
                    if attempt == MAX_ATTEMPTS:
                        raise TaskError(
                            f"Task {restart.task.path} repeatedly invalidated {restart.target.path}; "
                            f"stopping after {MAX_ATTEMPTS} attempts"
                        ) from None
        except BaseException as exc:
            if is_cancellation(exc):
                self.cancellation.cancel()
            raise
        cached = sum(1 for node in evaluation.plan_nodes() if node.status == "cached")
        stores.local.record_apply(
            selected.name,
            provider_fingerprint=session.fingerprint(selected.root_providers),
            cached_node_count=cached,
            node_count=len(selected.tasks),
        )
        self.emit(
            WorkflowApplyCompleted(
                workflow=selected.name, ran=evaluation.ran, cached_node_count=cached, node_count=len(selected.tasks)
            )
        )
        return ApplyResult(selected.name, context, plan)

    def invalidate_tasks(self, workflow: CompiledWorkflow, indexes: Iterable[int]) -> int:
        """Invalidate every valid run of these tasks (older ones too) and, by cascade, what was built on them."""
        stores = self.project.stores
        by_store: dict[str, list[str]] = {}
        for index in indexes:
            task = workflow.tasks[index]
            by_store.setdefault(task.store, []).append(task.cache_path)
        return sum(
            stores.for_write(key).invalidate_paths(stores.workflow_column(key, workflow.name), paths)
            for key, paths in by_store.items()
        )

    # -- what the engine knows -----------------------------------------------------------------------
    def list_workflow_summaries(self) -> list[WorkflowSummary]:
        return [
            WorkflowSummary(
                name=wf.name,
                node_count=len(wf.tasks),
                creates_workspace=wf.creates_workspace,
                operations=list(wf.operations),
                workspace_operations=list(wf.workspace_operations),
            )
            for wf in self.project.workflows.values()
        ]

    def get_project_info(self) -> ProjectInfo:
        summaries = self.list_workflow_summaries()
        return ProjectInfo(
            project_dir=str(self.project_dir),
            config_path=str(self.config_path),
            state_path=str(self.project.store.path),
            workflows=summaries,
            workflow=summaries[0] if len(summaries) == 1 else None,
        )

    def list_node_runs(self, workflow: str | None = None) -> list[NodeRun]:
        """The project store's run journal, newest first (for embedding hosts and tests)."""
        return self.project.store.list_runs(workflow=workflow)

    def close(self) -> None:
        if self._project is not None:
            self._project.stores.close()
            self._project.store.close()


def _declare_secrets(workflows: Iterable[CompiledWorkflow]) -> None:
    """Register every ``secret(...)`` the project names, so output is masked from the first line on."""
    seen: set[int] = set()
    for workflow in workflows:
        for scope in workflow.all_scopes():
            for definition in scope.values():
                if id(definition) not in seen:
                    seen.add(id(definition))
                    definition.declare_secrets()


def _state_location(state_path: str | Path) -> str:
    text = str(state_path)
    return text if is_state_url(text) else str(Path(state_path).absolute())


__all__ = ["MAX_ATTEMPTS", "EngineCore", "LoadedProject"]

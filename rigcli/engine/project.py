"""The loaded project: its config and compiled workflows, the state stores, the provider hub,
the event bus, and which workflow a command means (the one place that decides).

Every other part of the engine (planner, workspaces, operations, cache, garbage, diagnosis)
is given this one and reads the project through it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType

from rigcli.authoring.values import ProviderDefinition
from rigcli.cachekeys import fragment_hash, task_key, task_parts
from rigcli.config_loader import LoadedConfig, load_config
from rigcli.engine.effects import StoreEffects
from rigcli.engine.hostadapter import SuppliedHost, adapt_local
from rigcli.engine.interactions import host_presenter
from rigcli.engine.providers import ProviderFactory, ProviderHub
from rigcli.engine.results import ProjectInfo, WorkflowSummary
from rigcli.engine.runlog import DEFAULT_CAP, OutputRecorder, cap_from_env
from rigcli.engine.session import ProviderSession
from rigcli.engine.stores import FragmentLocator, Stores
from rigcli.errors import AmbiguousWorkflowError, ConfigError, NotFoundError, RigError
from rigcli.event_bus import EventBus, EventListener
from rigcli.events import Event, StateWarning
from rigcli.graph import CompiledWorkflow, TaskSpec, compile_workflow
from rigcli.layout import CONFIG_FILE, STATE_DIR
from rigcli.provider_api import Cancellation, ProviderPlugin
from rigcli.records import NodeRun
from rigcli.speed.records import lazy_dataclass
from rigcli.state.api import StateStatus, StateStore
from rigcli.state.factory import StateFactory, open_state, open_state_store
from rigcli.state_location import SQLiteState, StateGiven, StateLocation, given_state, resolve_state_location


@lazy_dataclass
class LoadedProject:
    """What ``load()`` produced: the config, its compiled workflows, the state and the providers."""

    config: LoadedConfig
    workflows: dict[str, CompiledWorkflow]
    store: StateStore
    stores: Stores
    hub: ProviderHub


class Project:
    """A project's config, state and providers, loaded once. See ``create_engine`` for the options."""

    def __init__(
        self,
        project_dir: str | Path,
        *,
        config_path: str | Path | None = None,
        state_path: StateLocation | StateGiven | str | Path | None = None,
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
        # Decided when asked (state_location), so a state that cannot be used is reported where
        # the caller wants it, and RIG_STATE_URL is read after load() has loaded the project's .env.
        self._state_given = given_state(state_path)
        self.provider_factory = provider_factory
        self.plugins = list(providers)
        self.local = adapt_local(local)
        self.presenter = host_presenter(interaction)
        self._host_storage_dir = Path(host_storage_dir) if host_storage_dir else None
        self._locator = fragment_state_locator
        self._state, self._state_factory = state, state_factory
        self._lock_wait = lock_wait
        # A command that needs only the state (rig runs, rig logs ...) sets this before load(): a
        # rig_config.py that fails to import then leaves no workflows, and config_error says why; a
        # string says what the command does instead, on the one warning line that names the error
        # (an empty one: no warning, the command's own error says it).
        self.config_optional: bool | str = False
        self.config_error: str | None = None
        self.events = EventBus()
        self.recorder = OutputRecorder(self.events.subscribe, DEFAULT_CAP)  # each run's output, kept
        self.cancellation = Cancellation()
        self._loaded: LoadedProject | None = None
        self._keys: dict[str, dict[int, str]] = {}
        self._parts: dict[int, tuple[object, dict[str, str]]] = {}  # by id(handler), the handler kept alive

    # -- events ------------------------------------------------------------------------------------
    def on_event(self, listener: EventListener) -> Callable[[], None]:
        return self.events.subscribe(listener)

    def emit(self, event: Event) -> None:
        self.events.emit(event)

    # -- loading -----------------------------------------------------------------------------------
    def fingerprint(self, fn: object) -> str:
        from rigcli.fingerprint import handler_fingerprint

        return handler_fingerprint(fn, project_dir=self.project_dir)

    def compile(self) -> tuple[LoadedConfig, dict[str, CompiledWorkflow]]:
        """Import rig_config.py and compile each workflow (nothing is opened or written)."""
        config = load_config(self.config_path, self.project_dir)
        workflows = {}
        for root in config.workflows:
            compiled = compile_workflow(root, config.providers, lambda f: fragment_hash(f.node, self.fingerprint))
            workflows[compiled.name] = compiled
        return config, workflows

    async def load(self) -> None:
        """Import rig_config.py, compile its workflows, and open the state on first load."""
        from rigcli._version import __version__
        from rigcli.speed import file_facts
        from rigcli.speed.compiled_methods import keep_in
        from rigcli.state.paths import rig_home

        cache = rig_home() / "cache"
        keep_in(cache)  # before the config makes the first records
        file_facts.keep_in(str(cache / "file-facts" / f"{__version__}-{sys.implementation.cache_tag}.marshal"))
        try:
            config, workflows = self.compile()
        except ConfigError as exc:
            if self.config_optional is False:
                raise
            self.config_error = str(exc)
            config, workflows = LoadedConfig(self.config_path, self.project_dir, (), {}, ModuleType("rig_config")), {}
            instead = self.config_optional if isinstance(self.config_optional, str) else "showing what the state holds"
            if instead:  # "": the command says it in its own error
                self.emit(StateWarning(message=f"rig_config.py does not load ({exc}); {instead}"))
        self.recorder.cap = cap_from_env()  # after the import: the project's .env may set it
        self._keys, self._parts = {}, {}
        _declare_secrets(workflows.values())
        if self._loaded is None:
            store, stores, hub = self._open_state()
            self._loaded = LoadedProject(config, workflows, store, stores, hub)
        else:
            self._loaded.config, self._loaded.workflows = config, workflows

    def _open_state(self) -> tuple[StateStore, Stores, ProviderHub]:
        from rigcli.state import HostStorage, default_host_storage_dir
        from rigcli.state.paths import plugin_index_file, rig_home

        rig_home()  # a RIG_HOME that cannot be a directory fails the load before any state is written
        store = self._state or open_state_store(
            self._state_factory,
            project_dir=str(self.project_dir),
            config_path=str(self.config_path),
            state_path=self.state_location(),
        )
        for warning in store.sync_schema().warnings:
            self.emit(StateWarning(message=warning))
        if self._state is not None:  # given, maybe made for another path (one made here noted these in sync)
            for key, value in (("project.dir", str(self.project_dir)), ("config.path", str(self.config_path))):
                if store.get_metadata(key) != value:  # plan and ls must not write on every load
                    store.set_metadata(key, value)
        stores = Stores(
            store,
            open_store=lambda path: open_state(SQLiteState(str(path)), project_dir=str(self.project_dir)),
            locator=self._locator,
            lock_wait=self._lock_wait,
            emit=self.emit,
            cancelled=self.cancellation.is_set,
        )
        host_dir = self._host_storage_dir or default_host_storage_dir()
        hub = ProviderHub(
            plugins=self.plugins,
            provider_factory=self.provider_factory,
            local=self.local,
            project_storage=store.provider_storage,
            host_storage=lambda provider_id: HostStorage(provider_id, host_dir),
            project_dir=self.project_dir,
            state_dir=self._machines_dir(store),
            secret_key_path=host_dir / ".fingerprint-key",
            plugin_index=plugin_index_file(),
            cancellation=self.cancellation,
            effects=lambda provider_id, owner: StoreEffects(store, provider_id, owner),
            workflows_of=self._workflows_using,
        )
        return store, stores, hub

    def _workflows_using(self, definition: ProviderDefinition) -> tuple[str, ...]:
        """The names of the workflows whose tasks, hooks or operations have ``definition`` in scope."""
        return tuple(
            name
            for name, workflow in self.workflows.items()
            if any(found is definition for scope in workflow.all_scopes() for found in scope.values())
        )

    def state_location(self) -> StateLocation:
        """Where the project's state lives (the one rule, state_location.py): what was given, else
        ``RIG_STATE_URL`` (load() reads the project's .env first), else ``.rig/state.sqlite``."""
        return resolve_state_location(self.project_dir, given=self._state_given)

    def _machines_dir(self, store: StateStore) -> Path:
        """Where providers keep local files (the ``local`` provider's machines): beside a SQLite
        state, else ``<project>/.rig`` — a shared database holds records, never files."""
        if store.backend == "sqlite":
            return Path(store.path).parent
        return self.project_dir / STATE_DIR

    @property
    def loaded(self) -> LoadedProject:
        if self._loaded is None:
            raise RigError("No workflows loaded. Call engine.load() first.")
        return self._loaded

    @property
    def store(self) -> StateStore:
        """The project's own state store."""
        return self.loaded.store

    @property
    def stores(self) -> Stores:
        """The project store and the global fragments' stores, with the writer lock."""
        return self.loaded.stores

    @property
    def workflows(self) -> dict[str, CompiledWorkflow]:
        return self.loaded.workflows

    def state_status(self) -> StateStatus:
        """The project state's backend, masked location, versions and lock holder (never waits)."""
        return self.store.status()

    # -- selection: the one owner of this rule and its messages ------------------------------------
    def select(self, workflow: str | None = None) -> CompiledWorkflow:
        """The named workflow, or the only one; several and none named is AmbiguousWorkflowError."""
        workflows = self.workflows
        if not workflows:
            raise NotFoundError("rig_config.py defines no workflows")
        if workflow is not None:
            if workflow not in workflows:
                raise NotFoundError(f"Unknown workflow {workflow} (available: {', '.join(workflows)})")
            return workflows[workflow]
        if len(workflows) == 1:
            return next(iter(workflows.values()))
        raise AmbiguousWorkflowError(list(workflows))

    def chosen(self, workflow: str | None) -> list[CompiledWorkflow]:
        """For commands that cover every workflow unless one is named."""
        return [self.select(workflow)] if workflow else list(self.workflows.values())

    # -- what a command needs -----------------------------------------------------------------------
    def keys_for(self, workflow: CompiledWorkflow) -> dict[int, str]:
        """Each task's cache key (by task index), computed once per load."""
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

    def task_parts(self, task: TaskSpec) -> dict[str, str]:
        """The named parts of a task's cache key (cachekeys.task_parts); a handler is described once per load."""
        from rigcli.fingerprint import describe_handler
        from rigcli.fingerprint.parts import handler_parts

        def parts_of(fn: object) -> dict[str, str]:
            if id(fn) not in self._parts:
                self._parts[id(fn)] = (fn, handler_parts(describe_handler(fn, project_dir=self.project_dir)))
            return self._parts[id(fn)][1]

        return task_parts(task, parts_of, self.fingerprint)

    async def session(self, workflow: CompiledWorkflow, mode: str) -> ProviderSession:
        """Providers for one command: ``plan`` for read-only commands, ``require`` for writers."""
        loaded = self.loaded
        loaded.stores.register_fragments(workflow.fragments)
        session = ProviderSession(
            hub=loaded.hub,
            workflow=workflow.name,
            local=self.local,
            emit=self.emit,
            presenter=self.presenter,
            mode=mode,
        )
        await session.prepare(workflow.all_scopes())
        if mode == "require":  # a writer: first end what a killed rig left running in its machines
            from rigcli.engine.reconcile import end_abandoned_sessions

            await end_abandoned_sessions(loaded.store, session)
        return session

    def bare_session(self) -> ProviderSession:
        """Providers with no workflow (rig_config.py does not load): each is made from a bare
        definition when it is first asked for, so journaled effects can still be removed."""
        return ProviderSession(
            hub=self.loaded.hub, workflow="", local=self.local, emit=self.emit, presenter=self.presenter, mode="plan"
        )

    def workflow_names(self) -> list[str]:
        return list(self.workflows)

    def summaries(self) -> list[WorkflowSummary]:
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

    def info(self) -> ProjectInfo:
        summaries = self.summaries()
        return ProjectInfo(
            project_dir=str(self.project_dir),
            config_path=str(self.config_path),
            state_path=str(self.store.path),
            workflows=summaries,
            workflow=summaries[0] if len(summaries) == 1 else None,
        )

    def node_runs(self, workflow: str | None = None) -> list[NodeRun]:
        """The project store's run journal, newest first (for embedding hosts and tests)."""
        return self.store.list_runs(workflow=workflow)

    def close_stores(self) -> None:
        """Stop recording output and close the state stores (the engine's ``close``)."""
        self.recorder.close()
        if self._loaded is not None:
            self._loaded.stores.close()
            self._loaded.store.close()


def _declare_secrets(workflows: Iterable[CompiledWorkflow]) -> None:
    """Register every ``secret(...)`` the project names, so output is masked from the first line on."""
    seen: set[int] = set()
    for workflow in workflows:
        for scope in workflow.all_scopes():
            for definition in scope.values():
                if id(definition) not in seen:
                    seen.add(id(definition))
                    definition.declare_secrets()


__all__ = ["LoadedProject", "Project"]

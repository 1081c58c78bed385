"""The cache's front: each answer a command may take from memory, recalled while its gates hold, else computed.

A command says in its row of the command table which answers it may take from here
(``Command(cache=...)``); its one body asks ``Answers`` and never knows which way it came. On a
miss the answer is computed with the loaded engine (``planning.py``) and kept for the next
command. ``RIG_CACHE=off`` computes every answer (and keeps none); so does ``--json-stream``,
whose events only a load makes. The answers:

- ``plan``: the plan of one workflow as ``rig plan`` prints it (``to_json``), with the workflow's
  groups and edges as ``rig graph`` draws them; its gates are ``gates.py``'s;
- ``listing``: what ``rig ls`` says of every workflow: tasks cached and in all, each final task's
  run (which workspaces are outdated), or why it could not be planned; gates likewise;
- ``config``: what the config alone says of each workflow: its tasks (``rig logs TASK``), its own
  workspace operations and its provider definitions as written (``rig shell``/``rig exec``);
  valid while the project's files read the same.
"""

from __future__ import annotations

import os

from rigcli._version import __version__
from rigcli.cache import memo
from rigcli.cache.gates import Gates
from rigcli.cache.start import Start, locate

TYPE_CHECKING = False  # not typing's: a cached answer's path imports no typing (mypy reads any such name as True)
if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine
    from typing import Any, Protocol, TypeVar

    from rigcli.engine.api import Engine
    from rigcli.jsonutil import JsonObject, JsonValue
    from rigcli.provider_api.direct import DirectStatus

    T = TypeVar("T")

    class Loading(Protocol):
        """What a command's session gives the cache on a miss: the loaded engine, and its way of running
        the engine's coroutines and of asking a terminal user which workflow they mean."""

        @property
        def engine(self) -> Engine: ...
        def run(self, coro: Coroutine[object, object, T]) -> T: ...
        def with_workflow(self, call: Callable[[str | None], T]) -> T: ...


PLAN, LISTING, CONFIG = "plan", "listing", "config"
OFFLINE_LISTING = "listing-offline"  # rig ls --no-probe: planned asking nothing remote
TaskRow = tuple[str, str, str, str]  # (path, cache path, name, store)


def caching_on() -> bool:
    """Whether answers may be recalled and kept at all (``RIG_CACHE=off`` says no)."""
    return os.environ.get("RIG_CACHE", "").lower() not in ("off", "0", "no", "false")


class PlanAnswer:
    """One workflow's plan as ``rig plan`` prints it, and its shape as ``rig graph`` draws it."""

    __slots__ = ("document", "edges", "layout", "sole")

    def __init__(self, document: JsonObject, sole: bool, edges: JsonValue, layout: JsonValue) -> None:
        self.document = document
        self.sole = sole  # the project's only workflow (then no --workflow is needed to name it)
        self.edges = edges
        self.layout = layout

    @property
    def workflow(self) -> str:
        return str(self.document["workflow"])

    @property
    def pending(self) -> bool:
        return self.document.get("cached_node_count") != self.document.get("node_count")

    def drawing(self) -> JsonObject:
        """What ``render/drawing.py:Drawing`` reads."""
        return {
            "workflow": self.document["workflow"],
            "nodes": self.document["nodes"],
            "edges": self.edges,
            "layout": self.layout,
        }


class WorkflowListing:
    """One workflow in ``rig ls``: tasks cached and in all, each final task's run, or why it was not planned."""

    __slots__ = ("cached", "finals", "name", "nodes", "plan_error", "scoped")

    def __init__(
        self,
        name: str,
        cached: int | None,
        nodes: int | None,
        finals: dict[str, str | None] | None,
        plan_error: str | None = None,
        scoped: list[int] | None = None,
    ) -> None:
        self.name = name
        self.cached = cached
        self.nodes = nodes
        self.finals = finals  # final task path -> the run the plan reuses (None: pending)
        self.plan_error = plan_error
        self.scoped = scoped or []  # indexes into ListingAnswer.definitions: the providers in its scopes


class ListingAnswer:
    """Every workflow's listing, and the provider definitions of their scopes (for the probes)."""

    __slots__ = ("definitions", "providers", "workflows")

    def __init__(
        self,
        workflows: list[WorkflowListing],
        definitions: list[list[object]],
        providers: list[DirectStatus] | None,
    ) -> None:
        self.workflows = workflows
        self.definitions = definitions  # gates.py's rows: [provider_id, as written, resolved, entry point, checks]
        self.providers = providers  # each definition's hook, opened while the gates were checked; else None

    def close(self) -> None:
        for provider in self.providers or ():
            provider.close()


class ConfigAnswer:
    """What the config alone says of the project's workflows (``planning.config_answers``' form)."""

    __slots__ = ("workflows",)

    def __init__(self, workflows: dict[str, dict[str, list[Any]]]) -> None:
        self.workflows = workflows

    def tasks(self, workflow: str) -> list[TaskRow]:
        return [(str(row[0]), str(row[1]), str(row[2]), str(row[3])) for row in self.workflows[workflow]["tasks"]]

    def operations(self, workflow: str) -> list[str]:
        return [str(item) for item in self.workflows[workflow]["operations"]]

    def attach_hook(self, workflow: str) -> bool:
        """Whether a shell session runs the workflow's ``workspace(on_attach=...)`` first."""
        return bool(self.workflows[workflow].get("attach_hook", [False])[0])

    def provider_configs(self, workflow: str, provider_id: str) -> list[object] | None:
        """The configs as written of ``provider_id``'s definitions in the workflow; None when one can
        be used only by a load (``configs.py``)."""
        found = [row[1] for row in self.workflows[workflow]["providers"] if row[0] == provider_id]
        return None if any(config is None for config in found) else found


class Answers:
    """A command's answers: recalled while their gates hold (when its row allows), else computed and kept."""

    def __init__(
        self,
        loading: Loading,
        *,
        chdir: str | None,
        config: str | None,
        state: str | None,
        workflow: str | None,
        may_recall: bool,
    ) -> None:
        self.loading = loading
        self.workflow = workflow  # --workflow, as the user said it
        self._where = (chdir, config, state)
        self._may_recall = may_recall and caching_on()
        self._start: Start | None = None
        self._kept: dict[str, object] | None = None

    # -- recalling ---------------------------------------------------------------------------------
    @property
    def start(self) -> Start | None:
        """Where the project and its SQLite state are; None when they cannot be found cheaply."""
        if self._start is None:
            chdir, config, state = self._where
            self._start = locate(chdir=chdir, config=config, state=state)
        return self._start

    def _remembered(self, name: str) -> object:
        if not self._may_recall:
            return None
        start = self.start
        if start is None or start.state_path is None:
            return None
        if self._kept is None:
            self._kept = memo.recall(start.cache_dir, version=__version__, config_path=start.config_path)
        return self._kept.get(name)

    def _recalled_plan(self) -> PlanAnswer | None:
        found = self._remembered(PLAN)
        if not isinstance(found, dict):
            return None
        document, sole = found.get("document"), found.get("sole")
        if not isinstance(document, dict) or not isinstance(document.get("nodes"), list) or not isinstance(sole, bool):
            return None
        if self.workflow != document.get("workflow") and not (self.workflow is None and sole):
            return None
        gates = Gates.read(found.get("gates"))
        providers = None if gates is None or self.start is None else gates.hold(str(self.start.state_path))
        if providers is None:
            return None
        for provider in providers:
            provider.close()
        return PlanAnswer(document, sole, found.get("edges"), found.get("layout"))

    def _recalled_listing(self, offline: bool) -> ListingAnswer | None:
        found = self._remembered(OFFLINE_LISTING if offline else LISTING)
        if not isinstance(found, dict) or not isinstance(found.get("workflows"), list):
            return None
        gates = Gates.read(found.get("gates"))
        if gates is None:
            return None
        rows: list[WorkflowListing] = []
        for row in found["workflows"]:
            if not isinstance(row, list) or len(row) != 5 or not isinstance(row[3], dict):
                return None
            rows.append(WorkflowListing(row[0], row[1], row[2], row[3], None, row[4]))
        if self.workflow is not None:
            rows = [row for row in rows if row.name == self.workflow]
            if not rows:
                return None  # a load says what is wrong with the name
        providers = gates.hold(str(self.start.state_path), offline=offline) if self.start is not None else None
        if providers is None:
            return None
        return ListingAnswer(rows, gates.definitions, None if offline else providers)

    def _recalled_config(self) -> ConfigAnswer | None:
        found = self._remembered(CONFIG)
        if not isinstance(found, dict) or not all(isinstance(entry, dict) for entry in found.values()):
            return None
        return ConfigAnswer(found)

    # -- the answers -------------------------------------------------------------------------------
    def plan(self) -> PlanAnswer:
        """The plan of the workflow the command means (``--workflow``, the only one, or a terminal pick)."""
        recalled = self._recalled_plan()
        if recalled is not None:
            return recalled
        engine = self.loading.engine  # first: it imports what a load needs, in its own way
        from rigcli.cache.keeping import keep
        from rigcli.cache.planning import Planning

        planning = Planning(engine.project, engine.planner)
        plan = self.loading.with_workflow(lambda workflow: self.loading.run(planning.plan(workflow)))
        name = plan.workflow
        try:
            shape = planning.graph(name).shape_json()
        except RecursionError:  # groups nested too deep to lay out: plain rig plan still answers
            shape = None
        document, sole = plan.to_json(), len(engine.project.workflows) == 1
        answer = PlanAnswer(
            document, sole, None if shape is None else shape["edges"], None if shape is None else shape["layout"]
        )
        if self._may_recall:
            gates = planning.gates([name])
            kept = None
            if gates is not None and shape is not None:
                kept = {"gates": gates, "document": document, "sole": sole, **shape}
            keep(engine.project, {PLAN: kept})  # None: an older plan must not answer for this one
        return answer

    def listing(self, *, offline: bool = False) -> ListingAnswer:
        """Every workflow's listing (``--workflow`` narrows it); ``offline``: planned asking nothing remote
        (no provider check asks its daemon, no artifact is validated: ``rig ls --no-probe``)."""
        recalled = self._recalled_listing(offline)
        if recalled is not None:
            return recalled
        engine = self.loading.engine  # first: it imports what a load needs, in its own way
        from rigcli.cache.keeping import keep
        from rigcli.cache.planning import Planning
        from rigcli.errors import RigError

        planning = Planning(engine.project, engine.planner)
        names = list(engine.project.workflows)
        if self.workflow is not None and engine.project.config_error is None:
            engine.project.select(self.workflow)  # an unknown name is refused here
            names = [self.workflow]
        rows: list[WorkflowListing] = []
        broken = engine.project.config_error
        if broken is not None:  # rig_config.py does not import: the workflows the state knows
            names = self._stored_workflows(engine) if self.workflow is None else [self.workflow]
        for name in names:
            if broken is not None:
                rows.append(WorkflowListing(name, None, None, None, f"rig_config.py does not load: {broken}"))
                continue
            try:
                plan = self.loading.run(planning.plan(name, offline=offline))
            except RigError as exc:
                rows.append(WorkflowListing(name, None, None, None, str(exc)))
                continue
            rows.append(WorkflowListing(name, plan.cached_node_count, plan.node_count, planning.finals(name)))
        every = self.workflow is None and all(row.plan_error is None for row in rows)
        gates = planning.gates(names) if every else None
        definitions: list[list[object]] = []
        if isinstance(gates, dict):
            definitions = gates["definitions"]  # type: ignore[assignment]
            for row in rows:
                row.scoped = planning.scoped(row.name, gates)
        if self._may_recall:
            kept = None
            if gates is not None:
                table = [[row.name, row.cached, row.nodes, row.finals, row.scoped] for row in rows]
                kept = {"gates": gates, "workflows": table}
            # A listing of one workflow leaves the project's alone; a failed plan drops it.
            keep(engine.project, {OFFLINE_LISTING if offline else LISTING: kept} if self.workflow is None else {})
        return ListingAnswer(rows, definitions, None)

    @staticmethod
    def _stored_workflows(engine: Engine) -> list[str]:
        """The workflows the project's workspaces were made by, in order of first appearance."""
        names = [record.workflow for record in engine.workspaces.list_workspaces(None)]
        return list(dict.fromkeys(names))

    def config(self) -> ConfigAnswer:
        """What the config alone says of each workflow."""
        recalled = self._recalled_config()
        if recalled is not None:
            return recalled
        project = self.loading.engine.project  # first: it imports what a load needs, in its own way
        from rigcli.cache.keeping import config_answers, keep

        if self._may_recall:
            keep(project, {})
        return ConfigAnswer(config_answers(project)[CONFIG])  # type: ignore[arg-type]


__all__ = ["Answers", "ConfigAnswer", "ListingAnswer", "PlanAnswer", "WorkflowListing", "caching_on"]

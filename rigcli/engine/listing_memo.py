"""What a full ``rig ls`` or ``rig plan`` planned, kept for the next to answer without the config.

``rig ls`` plans every workflow to say how much of it is cached and which workspaces are
outdated. A plan's verdicts are a function of: the project's files (the memo's stamps), each
provider's resolved config, plugin and checks (the provider fingerprint), the run journal, the
clock (a ``cache_ttl`` that runs out) and the artifacts each verdict validated. This keeps, after
the plans, each of those inputs as the next ``rig ls`` can read it again cheaply, with what the
plans said; ``speed/listing_memo.py`` holds the form and the reader. ``rig plan`` keeps the same
for its one workflow, with the plan's JSON document (``cli/commands/lean_plan.py`` prints it).

Nothing is kept (and every ``rig ls`` plans) for a project whose answer depends on more: a plan
that failed, a task in a store other than the project's SQLite file, a secret known to the load
(its output masks it), a provider config holding a resolver function or an inline plugin, two
different definitions of one provider.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from rigcli.authoring.values import ProviderDefinition
from rigcli.engine.evaluate import Evaluation
from rigcli.engine.planner import Planner
from rigcli.engine.project import Project
from rigcli.engine.provenance import plan_finals
from rigcli.engine.results import WorkflowPlan
from rigcli.engine.session import ProviderSession
from rigcli.engine.shape import WorkflowGraph, workflow_graph
from rigcli.engine.stores import LOCAL
from rigcli.jsonutil import JsonValue
from rigcli.records import parse_timestamp
from rigcli.speed.listing_memo import environment_stamp, normalized_checks


class ListingMemo:
    """The plans of one ``rig ls`` (``plan``), then what the next may reuse of them (``remember``)."""

    def __init__(self, project: Project, planner: Planner) -> None:
        self.project = project
        self.planner = planner
        self._stamp: list[object] | None = None
        self._stamped = False
        self._planned: dict[str, tuple[WorkflowPlan, Evaluation, ProviderSession]] = {}
        self._graphs: dict[str, WorkflowGraph] = {}  # laid out once for rig graph and the memo

    async def plan(self, name: str | None) -> WorkflowPlan:
        """``name``'s plan (None: the one ``Project.select`` picks), as ``Engine.plan`` makes it; the run
        journal's stamp is read before the first."""
        if not self._stamped:
            self._stamped = True
            self._stamp = self._runs_stamp()
        selected = self.project.select(name)
        session = await self.project.session(selected, "plan")
        plan, evaluation = await self.planner.plan_judged(selected, session)
        self._planned[selected.name] = (plan, evaluation, session)
        self._graphs.pop(selected.name, None)
        return plan

    def _runs_stamp(self) -> list[object] | None:
        from rigcli.state.state_file import open_current, runs_stamp

        path = getattr(self.project.store, "path", None)
        if self.project.store.backend != "sqlite" or not isinstance(path, str):
            return None
        db = open_current(path)
        if db is None:
            return None
        try:
            return runs_stamp(db)
        finally:
            db.close()

    def remember(self, names: Sequence[str]) -> None:
        """Keep what the next ``rig ls`` needs, when every workflow of the project was planned and can be
        answered again without the config; otherwise keep only what other lean paths need."""
        from rigcli.engine.memo import remember_project

        every = list(names) == list(self.project.workflows)
        remember_project(self.project, listing=self._gates(names) if every else None)

    def remember_plan(self, name: str, hint: str | None) -> None:
        """Keep ``name``'s plan as ``rig plan`` prints it (``hint``: the line under a pending one), for the
        next ``rig plan`` to print without the config (``cli/commands/lean_plan.py``); nothing is
        written when it cannot be answered again that way."""
        import marshal

        from rigcli.engine.memo import remember_project

        gates = self._gates([name])
        document = self._planned[name][0].to_json() if gates is not None else None
        try:
            marshal.dumps(document)  # what the memo is written with: an output of another type is not kept
        except ValueError:
            document = None
        if document is None:
            remember_project(self.project, plan=None)  # an older one must not answer for this plan
            return
        sole = len(self.project.workflows) == 1  # then a plan without --workflow means this one
        shape = self.graph(name).shape_json()  # with the document's nodes, what rig graph draws
        remember_project(self.project, plan={"gates": gates, "document": document, "hint": hint, "sole": sole, **shape})

    def graph(self, name: str) -> WorkflowGraph:
        """After ``plan(name)``: that plan laid on the workflow's shape (``rig graph``)."""
        if name not in self._graphs:
            nodes = self._planned[name][0].nodes
            self._graphs[name] = workflow_graph(name, self.project.workflows[name].steps, nodes)
        return self._graphs[name]

    def _gates(self, names: Sequence[str]) -> JsonValue:
        """What the plans of ``names`` read that a later command can read again without the config
        (the ``ls`` section's form); None when one of them read more."""
        from rigcli import masking

        workflows = self.project.workflows
        if masking.active():
            return None  # the full way masks secrets this load learnt in what it prints; a lean one cannot
        if self._stamp is None or not names or not set(names) <= set(self._planned):
            return None
        definitions = _Definitions()
        plans: dict[str, JsonValue] = {}
        validations: list[JsonValue] = []
        until: float | None = None
        for name in names:
            workflow = workflows[name]
            plan, evaluation, session = self._planned[name]
            if any(task.store != LOCAL for task in workflow.tasks):
                return None
            scoped: list[JsonValue] = []
            for scope in workflow.all_scopes():
                for definition in scope.values():
                    checks = session.checks.get(id(definition), [])
                    index = definitions.add(definition, normalized_checks(checks))
                    if index is None:
                        return None
                    if index not in scoped:
                        scoped.append(index)
            for validated_by, ref, valid in session.validations:
                index = None if validated_by is None else definitions.index(validated_by)
                if index is None:
                    return None
                validations.append([index, dict(ref), valid])
            for task in workflow.tasks:
                verdict = evaluation.verdicts.get(task.index)
                ttl = task.node.cache_ttl
                if verdict is not None and verdict.run is not None and ttl is not None:
                    ends = parse_timestamp(verdict.run.created_at).timestamp() + ttl
                    until = ends if until is None else min(until, ends)
            final: list[JsonValue] = [[path, run_id] for path, run_id in plan_finals(plan, workflow).items()]
            plans[name] = [plan.cached_node_count, plan.node_count, final, scoped]
        return {
            "project_dir": str(self.project.project_dir),
            "state": self._stamp,  # type: ignore[dict-item]  # a row of SQLite values: JSON
            "until": until,
            "environment": environment_stamp(),
            "workflows": list(names),
            "plans": plans,
            "definitions": definitions.rows,
            "validations": validations,
        }


class _Definitions:
    """Every provider definition of the project, one per provider id: its config as written and as
    resolved now (no secret), the installed plugin's entry point, and its checks' fingerprint inputs."""

    def __init__(self) -> None:
        self.rows: list[JsonValue] = []
        self._by_id: dict[int, int] = {}
        self._providers: dict[str, int] = {}

    def index(self, definition: ProviderDefinition) -> int | None:
        return self._by_id.get(id(definition))

    def add(self, definition: ProviderDefinition, checks: list[object]) -> int | None:
        """The definition's row (added once); None when it cannot be checked again without the config."""
        from rigcli.engine.memo import encoded_config
        from rigcli.speed.attach_memo import Unresolvable, resolve
        from rigcli.speed.entry_points import PROVIDERS_GROUP, entry_point_values
        from rigcli.state.paths import plugin_index_path

        known = self._by_id.get(id(definition))
        if known is not None:
            return known
        encoded = encoded_config(definition)
        if encoded is None:
            return None
        secrets: list[str] = []
        try:
            resolved = resolve(encoded, os.environ, secrets)
        except Unresolvable:
            return None
        if secrets:
            return None  # never kept, not even hashed: such a project plans on every rig ls
        row: JsonValue = [
            definition.provider_id,
            encoded,
            resolved,  # type: ignore[list-item]  # resolve() gives back JSON from JSON
            entry_point_values(PROVIDERS_GROUP, plugin_index_path()).get(definition.provider_id),
            checks,  # type: ignore[list-item]  # JSON: ids, statuses and fingerprints
        ]
        previous = self._providers.get(definition.provider_id)
        if previous is not None:
            if self.rows[previous] != row:
                return None  # two definitions of one provider: each is asked in the full way
            self._by_id[id(definition)] = previous
            return previous
        self.rows.append(row)
        index = len(self.rows) - 1
        self._by_id[id(definition)] = index
        self._providers[definition.provider_id] = index
        return index


__all__ = ["ListingMemo"]

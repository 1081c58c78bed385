"""Answers computed with the loaded engine, and the gates a later command checks before reusing them.

A plan's verdicts are a function of the project's files, each provider's resolved config, plugin
and checks, the run journal, the clock and the artifacts each verdict validated (``gates.py``).
``Planning`` plans as ``rig plan`` does (``Planner.plan_judged``), after taking the run journal's
stamp, and then turns what the plans read into gates. No gates (and so nothing kept) for an answer
that depends on more: a plan that failed or whose provider check failed, a task in a store other
than the project's SQLite file, a secret known to the load (its output masks it), a provider config
holding a resolver function or an inline plugin, two different definitions of one provider.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from rigcli import masking
from rigcli.authoring.values import ProviderDefinition
from rigcli.cache.configs import Unresolvable, encoded_config, resolve
from rigcli.cache.gates import environment_stamp, normalized_checks
from rigcli.cache.keeping import definitions_of
from rigcli.engine.evaluate import Evaluation
from rigcli.engine.finals import plan_finals
from rigcli.engine.planner import Planner
from rigcli.engine.project import Project
from rigcli.engine.results import WorkflowPlan
from rigcli.engine.session import ProviderSession
from rigcli.engine.shape import WorkflowGraph, workflow_graph
from rigcli.engine.stores import LOCAL
from rigcli.jsonutil import JsonValue
from rigcli.records import parse_timestamp
from rigcli.speed.entry_points import PROVIDERS_GROUP, entry_point_values
from rigcli.state.paths import plugin_index_path
from rigcli.state.state_file import open_current, runs_stamp


class Planning:
    """The plans of one command (``plan``), then the answers made of them, with their gates."""

    def __init__(self, project: Project, planner: Planner) -> None:
        self.project = project
        self.planner = planner
        self._stamp: list[object] | None = None
        self._stamped = False
        self._planned: dict[str, tuple[WorkflowPlan, Evaluation, ProviderSession]] = {}

    async def plan(self, name: str | None, *, offline: bool = False) -> WorkflowPlan:
        """``name``'s plan (None: the one ``Project.select`` picks), as ``Planner.plan`` makes it (offline:
        asking nothing remote, artifacts not validated); the run journal's stamp is read before the first."""
        if not self._stamped:
            self._stamped = True
            self._stamp = self._runs_stamp()
        selected = self.project.select(name)
        session = await self.project.session(selected, "offline" if offline else "plan")
        plan, evaluation = await self.planner.plan_judged(selected, session)
        self._planned[selected.name] = (plan, evaluation, session)
        return plan

    def _runs_stamp(self) -> list[object] | None:
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

    def graph(self, name: str) -> WorkflowGraph:
        """After ``plan(name)``: that plan laid on the workflow's shape (``rig graph``)."""
        return workflow_graph(name, self.project.workflows[name].steps, self._planned[name][0].nodes)

    def finals(self, name: str) -> dict[str, str | None]:
        """After ``plan(name)``: each final task's path and the run the plan reuses for it."""
        return plan_finals(self._planned[name][0], self.project.workflows[name])

    def gates(self, names: Sequence[str]) -> JsonValue:
        """What the plans of ``names`` read, as ``gates.py`` reads it again; None when one of them read more."""
        workflows = self.project.workflows
        if masking.active():
            return None  # a load masks the secrets it learnt in what it prints; an answer kept cannot
        if self._stamp is None or not names or not set(names) <= set(self._planned):
            return None
        definitions = _Definitions()
        validations: list[JsonValue] = []
        until: float | None = None
        for name in names:
            workflow = workflows[name]
            _, evaluation, session = self._planned[name]
            if any(task.store != LOCAL for task in workflow.tasks):
                return None
            for definition in definitions_of(workflow):
                checks = session.checks.get(id(definition), [])
                if any(check.get("status") == "error" for check in checks):
                    return None  # asked again next time: the failure may be fixed by then
                if definitions.add(definition, normalized_checks(checks)) is None:
                    return None
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
        return {
            "project_dir": str(self.project.project_dir),
            "state": self._stamp,  # type: ignore[dict-item]  # a row of SQLite values: JSON
            "until": until,
            "environment": environment_stamp(),
            "definitions": definitions.rows,
            "validations": validations,
        }

    def scoped(self, name: str, gates: JsonValue) -> list[int]:
        """Indexes into ``gates``' definitions of those in ``name``'s scopes (the probes' providers)."""
        rows = gates.get("definitions") if isinstance(gates, dict) else None
        ids = [row[0] for row in rows] if isinstance(rows, list) else []  # type: ignore[index]
        found = {definition.provider_id for definition in definitions_of(self.project.workflows[name])}
        return [index for index, provider_id in enumerate(ids) if provider_id in found]


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
            return None  # never kept, not even hashed: such a project plans on every command
        row: JsonValue = [
            definition.provider_id,
            encoded,  # type: ignore[list-item]  # JSON: configs.py's form
            resolved,  # type: ignore[list-item]  # resolve() gives back JSON from JSON
            entry_point_values(PROVIDERS_GROUP, plugin_index_path()).get(definition.provider_id),
            checks,  # type: ignore[list-item]  # JSON: ids, statuses and fingerprints
        ]
        previous = self._providers.get(definition.provider_id)
        if previous is not None:
            if self.rows[previous] != row:
                return None  # two definitions of one provider: each is asked in a load
            self._by_id[id(definition)] = previous
            return previous
        self.rows.append(row)
        index = len(self.rows) - 1
        self._by_id[id(definition)] = index
        self._providers[definition.provider_id] = index
        return index


__all__ = ["Planning"]

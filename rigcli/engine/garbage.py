"""``rig gc``: delete the machines, snapshots, containers and images nothing live refers to.

Candidates come from the effects journal (what rig recorded before making it) and from each
provider's ``find_effects`` (its own marks: directory names, ``rig.*`` labels), so a journal row
lost with a state reset still finds its resource, and nothing rig did not make is ever a
candidate. A candidate is kept when any of these refers to it:

- a live cache entry: the newest succeeded, valid run of each node path (project store and the
  global fragments the project uses), through any string in its output equal to one of the
  effect's identifiers (its id and its resource's ``id``/``*_id`` values);
- a workspace record (any status): the effects made for it, and any identifier in its ctx or
  workflow ctx;
- an in-flight run (``running`` in a live process) or, for effects with no owner, a live rig
  process on this host that requested it;
- a ``fork --replace`` in progress: what it makes for a workspace that still exists, while the rig
  process making it lives (once it is dead, that half-made replacement is garbage).

When rig_config.py does not import, gc works from the journal alone: providers are asked through
bare definitions, nothing unjournaled is looked for, and only what was made for a workspace (or
its replacement) and exec sessions are judged; the rest is kept, since a cache entry of a global
fragment the config would name may refer to it. ``GcReport.skipped`` says so.

An exec session (``EXEC_EFFECT``, a command running in a machine) is kept exactly while the rig
process that started it lives (or runs on another host); the sessions of dead ones are ended
first, before the machines they run in are removed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import replace

from rigcli.engine.effects import as_entry
from rigcli.engine.gc_order import kept_parents, removal_order
from rigcli.engine.project import Project
from rigcli.engine.providers import maybe_await
from rigcli.engine.reconcile import abandoned, remove_effect
from rigcli.engine.results import GcItem, GcReport
from rigcli.engine.session import ProviderSession
from rigcli.errors import DeletionRefusedError, NotFoundError, UnreachableError
from rigcli.provider_api import EXEC_EFFECT, SupportsEffects
from rigcli.records import EffectRecord, NodeRun
from rigcli.state.api import StateStore
from rigcli.state.effects import LIVE_EFFECT_STATUSES
from rigcli.state.process import left_by_dead_process, pid_alive, this_host


def _with_found(journaled: EffectRecord, found: EffectRecord) -> EffectRecord:
    """The journaled effect, with what its provider found added to its resource (never overriding it)."""
    resource = {**found.resource, **journaled.resource}
    return journaled if resource == journaled.resource else replace(journaled, resource=resource)


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _live_entries(runs: Iterable[NodeRun]) -> Iterator[NodeRun]:
    """The newest succeeded run of each (workflow, node path), if it is still valid."""
    newest: dict[tuple[str, str], NodeRun] = {}
    for run in runs:  # newest first
        newest.setdefault((run.workflow, run.node_path), run)
    return (run for run in newest.values() if not run.invalidated)


# What gc does when rig_config.py does not import (said on the one warning line that names the error).
JOURNAL_ONLY = (
    "gc judged only the journaled machines of removed workspaces and exec sessions: it did not look for "
    "unjournaled resources, and kept snapshots a cache entry may refer to"
)


class References:
    """What is live right now, read once before anything is judged."""

    def __init__(self) -> None:
        self.strings: set[str] = set()
        self.workspaces: dict[str, str] = {}  # record id -> name
        self.in_flight_runs: set[str] = set()
        # Without the config the global fragments' cache entries are unknown: only effects no cache
        # entry can refer to (a workspace's, a replacement's, exec sessions) are judged.
        self.fragments_unknown = False

    def add_store(self, store: StateStore, workflow: str | None) -> None:
        for run in _live_entries(store.list_runs(workflow=workflow, statuses=["succeeded"])):
            self.strings.update(_strings(run.output))
            self.strings.update(_strings(run.artifacts))
        for run in store.list_runs(workflow=workflow, statuses=["running"]):
            if not left_by_dead_process(run):
                self.in_flight_runs.add(run.id)

    def why_kept(self, effect: EffectRecord) -> str | None:
        if effect.kind == EXEC_EFFECT:  # a running command: alive exactly as long as its rig
            if abandoned(effect):
                return None
            return f"a command of rig process {effect.pid} on {effect.host}, still running"
        if effect.owner_kind == "workspace" and effect.owner_id in self.workspaces:
            return f"made for workspace {self.workspaces[effect.owner_id]}"
        if self.fragments_unknown and effect.owner_kind not in ("workspace", "replacement"):
            return "rig_config.py does not load: a global fragment's cache entry may refer to it"
        if effect.identifiers() & self.strings:
            return "referred to by a cache entry or a workspace"
        if effect.owner_kind == "run" and effect.owner_id in self.in_flight_runs:
            return "made by a run still in progress"
        if effect.owner_kind == "replacement" and (effect.owner_id or "").split(":")[0] in self.workspaces:
            elsewhere = effect.host != this_host()
            if elsewhere or (effect.pid is not None and effect.pid != os.getpid() and pid_alive(effect.pid)):
                return f"being made to replace workspace {self.workspaces[(effect.owner_id or '').split(':')[0]]}"
        unowned = effect.owner_kind is None and effect.pid and effect.pid != os.getpid()
        if unowned and effect.host == this_host() and effect.pid is not None and pid_alive(effect.pid):
            return f"requested by rig process {effect.pid}, still running"
        return None


class Garbage:
    """``rig gc``: what rig made that nothing live refers to."""

    def __init__(self, project: Project) -> None:
        self.project = project

    async def collect_garbage(self, dry_run: bool = False, forget_unreachable: bool = False) -> GcReport:
        """Delete (or with ``dry_run`` only list) what rig made and nothing live refers to.

        ``forget_unreachable``: a journaled removal whose provider cannot be asked at all
        (``UnreachableError``: a daemon that is gone, or not the one that made it) is marked
        ``forgotten`` with the reason instead of failing this and every later gc; a provider that
        cannot list what it made is reported but no failure either."""
        if dry_run:
            return await self._collect(dry_run=True, forget_unreachable=forget_unreachable)
        with self.project.stores.writing("gc"):
            return await self._collect(dry_run=False, forget_unreachable=forget_unreachable)

    async def _collect(self, *, dry_run: bool, forget_unreachable: bool) -> GcReport:
        store = self.project.store
        session = await self._gc_session()
        references = self._references()
        report = GcReport(dry_run=dry_run, forgetting=forget_unreachable)
        if self.project.config_error is not None:
            report.skipped = f"rig_config.py does not load ({self.project.config_error}); {JOURNAL_ONLY}"
        # Journaled effects are removed through their provider; found ones through the controller
        # that found them (two docker providers may talk to two daemons).
        journal = store.list_effects(statuses=LIVE_EFFECT_STATUSES)
        candidates: dict[tuple[str, str], tuple[EffectRecord, SupportsEffects | None]] = {
            (effect.provider_id, effect.id): (effect, None) for effect in journal
        }
        for controller, found in await self._found(session, report):
            key = (found.provider_id, found.id)
            if key in candidates:  # what the provider sees now may say more (what it was made from)
                journaled, _ = candidates[key]
                candidates[key] = (_with_found(journaled, found), None)
            else:
                candidates[key] = (found, controller)
        doomed: list[tuple[EffectRecord, SupportsEffects | None]] = []
        kept: list[EffectRecord] = []
        for effect, finder in candidates.values():
            why = references.why_kept(effect)
            if why is None:
                doomed.append((effect, finder))
            else:
                report.kept.append(GcItem.of(effect, finder is None, why))
                kept.append(effect)
        for index, child in sorted(kept_parents(kept, [effect for effect, _ in doomed]).items(), reverse=True):
            effect, finder = doomed.pop(index)
            report.kept.append(GcItem.of(effect, finder is None, f"kept {child.kind} {child.id} was made from it"))
        for effect, finder in removal_order(doomed):
            await self._remove(store, session, report, effect, finder, dry_run=dry_run)
        if not dry_run:
            report.dropped = store.forget_deleted_effects()
        return report

    async def _remove(
        self,
        store: StateStore,
        session: ProviderSession,
        report: GcReport,
        effect: EffectRecord,
        finder: SupportsEffects | None,
        *,
        dry_run: bool,
    ) -> None:
        journaled = finder is None
        if dry_run:
            report.removed.append(GcItem.of(effect, journaled, None))
            return
        try:
            if finder is None:
                await remove_effect(session, as_entry(effect), effect.provider_id)
            else:
                await maybe_await(finder.remove_effect(as_entry(effect)))
        except DeletionRefusedError as exc:  # nothing was removed, and nothing will be until that changes
            report.refused.append(GcItem.of(effect, journaled, str(exc)))
            return
        except Exception as exc:  # an uncertain answer is never taken as gone
            message = str(exc) or type(exc).__name__
            if journaled and report.forgetting and isinstance(exc, UnreachableError):
                store.forget_effect(effect.id, message)
                report.forgotten.append(GcItem.of(effect, journaled, message))
                return
            if journaled:
                store.note_effect_error(effect.id, message)
            report.failed.append(GcItem.of(effect, journaled, message))
            return
        if journaled:
            store.delete_effect(effect.id)
        report.removed.append(GcItem.of(effect, journaled, None))

    async def _gc_session(self) -> ProviderSession:
        """Controllers for every provider any workflow uses (plan mode: checks have no side effects)."""
        workflows = list(self.project.workflows.values())
        if not workflows and self.project.config_error is not None:
            return self.project.bare_session()  # journaled effects are removed through bare definitions
        if not workflows:
            raise NotFoundError("rig_config.py defines no workflows")
        session = await self.project.session(workflows[0], "plan")
        for workflow in workflows[1:]:
            self.project.stores.register_fragments(workflow.fragments)
            await session.prepare(workflow.all_scopes())
        return session

    def _references(self) -> References:
        references = References()
        references.fragments_unknown = self.project.config_error is not None
        stores = self.project.stores
        references.add_store(stores.local, None)
        for workflow in self.project.workflows.values():
            stores.register_fragments(workflow.fragments)
            for key in workflow.fragments:
                references.add_store(stores.get(key), stores.workflow_column(key, workflow.name))
        for record in stores.local.list_workspaces():
            references.workspaces[record.id] = record.name
            for value in (record.ctx, record.workflow_ctx):
                references.strings.update(_strings(value))
        return references

    async def _found(self, session: ProviderSession, report: GcReport) -> list[tuple[SupportsEffects, EffectRecord]]:
        """What each provider can see that rig made; a provider that cannot look is reported, not guessed."""
        found: list[tuple[SupportsEffects, EffectRecord]] = []
        for controller in session.controllers():
            if not isinstance(controller, SupportsEffects):
                continue
            try:
                entries = await maybe_await(controller.find_effects())
            except Exception as exc:
                report.unreachable.append(f"{controller.provider_id}: {exc}")
                continue
            for entry in entries:
                resource = dict(entry["resource"])
                effect = EffectRecord(
                    entry["id"],
                    controller.provider_id,
                    entry["kind"],
                    "found",
                    resource,
                    None,
                    None,
                    None,
                    "",
                    "",
                    None,
                    None,
                )
                found.append((controller, effect))
        return found


__all__ = ["JOURNAL_ONLY", "Garbage", "References"]

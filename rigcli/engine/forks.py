"""Forks beyond one workspace from the snapshot: several at once, from a live workspace, in place of one.

- ``fork_many`` (``rig fork NAME --count N``): one apply, N ``creating`` records, then the N create
  hooks concurrently (each in its own worker thread), each journaled on its own record.
- ``fork_from`` (``rig fork NEW --from WS``): WS's machines are snapshotted as they are
  (``SupportsLiveSnapshot``; the snapshot journaled as NEW's before it is made), the refs they were
  made from are replaced by the new snapshots in WS's workflow context, and the create hook makes
  NEW from that context.
- ``replace`` (``rig fork NAME --replace``): a new machine from the current snapshot, swapped in
  one transaction, then the old one removed. See ``replace`` for why a kill at any point leaves
  one usable workspace and nothing ``rig gc`` cannot find; ``replace_loss`` says first what the
  live workspace would lose.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from rigcli.authoring.project import check_workspace_name
from rigcli.engine.effects import StoreEffects, as_entry
from rigcli.engine.planner import Planner
from rigcli.engine.project import Project
from rigcli.engine.providers import maybe_await
from rigcli.engine.reconcile import controller_of, remove_effects
from rigcli.engine.replace_loss import ReplaceLoss, what_replace_loses
from rigcli.engine.session import ProviderSession
from rigcli.engine.workspaces import CREATED, Workspaces, error_message, expiry, refuse_a_live_create
from rigcli.errors import InterruptedRunError, RigError, TaskError, UsageError, describe_exception
from rigcli.events import StateWarning, WorkspaceCreateStarted, WorkspaceReady
from rigcli.graph import CompiledWorkflow
from rigcli.jsonutil import JsonValue
from rigcli.provider_api import SupportsLiveSnapshot, is_artifact_ref
from rigcli.records import EffectRecord, WorkspaceRecord, utc_now
from rigcli.speed.coroutines import need_event_loop
from rigcli.speed.lazy_modules import lazy_module
from rigcli.state.effects import LIVE_EFFECT_STATUSES
from rigcli.state.process import this_host
from rigcli.state.workspaces import new_workspace

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_module("asyncio")


MAX_COUNT = 100  # rig fork --count: more at once is a mistake more often than a wish


def _matches(candidate: object, source: dict[str, JsonValue]) -> bool:
    """Whether ``candidate`` is the artifact ref ``source`` names (every key of ``source`` equal)."""
    return is_artifact_ref(candidate) and all(candidate.get(key) == value for key, value in source.items())


def substitute(value: JsonValue, source: dict[str, JsonValue], made: JsonValue) -> tuple[JsonValue, int]:
    """``value`` with every artifact ref matching ``source`` replaced by ``made``, and how many were."""
    if _matches(value, source):
        return made, 1
    if isinstance(value, dict):
        count, out = 0, {}
        for key, item in value.items():
            out[key], found = substitute(item, source, made)
            count += found
        return out, count
    if isinstance(value, list):
        count, items = 0, []
        for item in value:
            replaced, found = substitute(item, source, made)
            items.append(replaced)
            count += found
        return items, count
    return value, 0


class Forks:
    """``rig fork`` with ``--count``, ``--from`` and ``--replace``."""

    def __init__(self, project: Project, planner: Planner, workspaces: Workspaces) -> None:
        self.project = project
        self.planner = planner
        self.workspaces = workspaces

    # -- --count ------------------------------------------------------------------------------------
    async def fork_many(
        self, name: str, count: int, workflow: str | None = None, *, ttl: float | None = None
    ) -> list[WorkspaceRecord]:
        """Workspaces ``name-1`` … ``name-count``: one apply, then their create hooks at once."""
        if not 1 <= count <= MAX_COUNT:
            raise UsageError(f"--count must be between 1 and {MAX_COUNT}, not {count}")
        names = [check_workspace_name(f"{check_workspace_name(name)}-{index}") for index in range(1, count + 1)]
        selected = self.workspaces.creating_workflow(workflow)
        store = self.project.store
        with self.project.stores.writing("fork"):
            self.workspaces.refuse_existing(selected, names)
            session = await self.project.session(selected, "require")
            applied = await self.planner.apply_held(selected, session, command="fork")
            records = [store.save_workspace(self.workspaces.new_record(selected, item, applied, ttl)) for item in names]
        await need_event_loop()

        outcomes = await asyncio.gather(
            *(self.workspaces.create(selected, session, record) for record in records), return_exceptions=True
        )
        interrupted = next(
            (item for item in outcomes if isinstance(item, BaseException) and not isinstance(item, Exception)), None
        )
        if interrupted is not None:
            raise interrupted
        failed = [
            (record.name, item) for record, item in zip(records, outcomes, strict=True) if isinstance(item, Exception)
        ]
        if failed:
            listed = "; ".join(f"{item}: {error_message(error)}" for item, error in failed[:3])
            more = f"; and {len(failed) - 3} more" if len(failed) > 3 else ""
            raise TaskError(
                f"{len(failed)} of {count} workspaces failed ({listed}{more}); the others are ready, "
                "and rig rm cleans up the failed ones"
            )
        return [cast(WorkspaceRecord, item) for item in outcomes]

    # -- --from -------------------------------------------------------------------------------------
    async def fork_from(
        self, name: str, source: str, workflow: str | None = None, *, ttl: float | None = None
    ) -> WorkspaceRecord:
        """Workspace ``name`` made from workspace ``source``'s machines as they are now."""
        name = check_workspace_name(name)
        selected, _ = self.workspaces.find_workspace(source, workflow)
        selected = self.workspaces.creating_workflow(selected.name)
        store = self.project.store
        with self.project.stores.writing("fork"):
            _, origin = self.workspaces.find_workspace(source, selected.name)  # as it is now, under the lock
            if origin.status not in ("ready", "reap-failed"):
                raise RigError(f"Workspace {source} is {origin.status}; only a ready workspace can be forked")
            self.workspaces.refuse_existing(selected, [name])
            session = await self.project.session(selected, "require")
            machines = await self._snapshottable(session, origin)
            expires_at, idle_stop, reap_at = expiry(selected, ttl)
            provenance = dict(origin.provenance) if isinstance(origin.provenance, dict) else {}
            provenance["from"] = {"workspace": origin.name, "id": origin.id}
            record = store.save_workspace(
                new_workspace(
                    name,
                    selected.name,
                    status="creating",
                    workflow_ctx=origin.workflow_ctx,
                    ctx={},
                    pid=os.getpid(),
                    host=this_host(),
                    provenance=provenance,
                    expires_at=expires_at,
                    idle_stop=idle_stop,
                    reap_at=reap_at,
                )
            )
        try:
            workflow_ctx = origin.workflow_ctx
            for effect, made_from in machines:
                controller = await controller_of(session, effect.provider_id)
                assert isinstance(controller, SupportsLiveSnapshot)
                journal = StoreEffects(store, effect.provider_id, ("workspace", record.id))
                shot = await maybe_await(controller.snapshot_resource(as_entry(effect), journal))
                workflow_ctx, _ = substitute(workflow_ctx, made_from, dict(shot))
            with self.project.stores.writing("fork"):
                stored = store.get_workspace(name, selected.name)
                if stored is None:
                    raise TaskError(f"Workspace {name} was removed while it was being created")
                record = store.save_workspace(replace(stored, workflow_ctx=workflow_ctx, updated_at=utc_now()))
        except BaseException as exc:
            with self.project.stores.writing("fork"):
                failed = store.get_workspace(name, selected.name)
                if failed is not None:
                    store.save_workspace(
                        replace(failed, status="failed", error=error_message(exc), updated_at=utc_now())
                    )
            if isinstance(exc, Exception) and not isinstance(exc, RigError):
                raise TaskError(f"Workspace {name} could not snapshot {source}: {describe_exception(exc)}") from exc
            raise
        return await self.workspaces.create(selected, session, record)

    async def _snapshottable(
        self, session: ProviderSession, origin: WorkspaceRecord
    ) -> list[tuple[EffectRecord, dict[str, JsonValue]]]:
        """``origin``'s machines that were made from a snapshot in its workflow context, with that ref."""
        found: list[tuple[EffectRecord, dict[str, JsonValue]]] = []
        owned = self.project.store.list_effects(
            owner_kind="workspace", owner_id=origin.id, statuses=LIVE_EFFECT_STATUSES
        )
        for effect in owned:
            controller = await controller_of(session, effect.provider_id)
            if not isinstance(controller, SupportsLiveSnapshot):
                continue
            made_from = await maybe_await(controller.snapshot_source(as_entry(effect)))
            if isinstance(made_from, dict) and substitute(origin.workflow_ctx, made_from, None)[1]:
                found.append((effect, made_from))
        if not found:
            raise RigError(
                f"Workspace {origin.name} has no machine made from a snapshot in its workflow context that its "
                "provider can snapshot live, so rig cannot fork it (rig fork --from needs a provider with "
                "snapshot_resource, such as local or docker, and a create hook that makes machines from snapshots)"
            )
        return found

    # -- --replace ----------------------------------------------------------------------------------
    async def replace_loss(self, name: str, workflow: str | None = None) -> ReplaceLoss | None:
        """What ``replace`` would throw away (``engine/replace_loss.py``), asked before it runs; None
        when there is no workspace ``name`` to replace."""
        return await what_replace_loses(self.project, self.workspaces, check_workspace_name(name), workflow)

    async def replace(self, name: str, workflow: str | None = None, *, ttl: float | None = None) -> WorkspaceRecord:
        """Remake workspace ``name`` from the current snapshot; the old machine goes only once the
        new one is ready. With no such workspace, this is a plain fork.

        The journal, step by step: (1) the apply's runs; (2) each new machine or snapshot is
        journaled before it is made, owned by ``replacement`` ``<record id>:<token>`` — not the
        workspace's yet, so the old one is still the workspace (and ``gc`` keeps these only while
        this process lives); (3) one transaction swaps them: the old effects become ``retired``,
        the new ones the workspace's, and the row gets the new ctx, provenance and expiry; (4) the
        remove hook runs with the old ctx, and each retired effect is removed and marked deleted.
        Killed before (3), the old workspace is intact and the half-made new one is garbage for
        ``gc``; after it, the new one is the workspace and the retired ones are garbage for ``gc``
        (and ``rm``).
        """
        name = check_workspace_name(name)
        selected = self.workspaces.creating_workflow(workflow)
        store = self.project.store
        with self.project.stores.writing("fork"):
            old = store.get_workspace(name, selected.name)
            session = await self.project.session(selected, "require")
            if old is not None:
                refuse_a_live_create(old)
            applied = await self.planner.apply_held(selected, session, command="fork", workspace=name)
            if old is None:
                record = store.save_workspace(self.workspaces.new_record(selected, name, applied, ttl))
        if old is None:
            return await self.workspaces.create(selected, session, record)
        owner = f"{old.id}:{os.urandom(6).hex()}"
        self.project.emit(WorkspaceCreateStarted(workflow=selected.name, workspace=name))
        try:
            ctx = await self.workspaces.run_create_hook(
                selected, session, name, applied.context, ("replacement", owner)
            )
        except BaseException as exc:
            try:
                await self._discard(session, owner)
            except Exception as problem:  # the failure that matters is the create's; gc takes the rest
                self.project.emit(StateWarning(message=f"Could not remove what the replacement made: {problem}"))
            if isinstance(exc, Exception) and not isinstance(exc, InterruptedRunError):
                # An interrupt stays one (exit 128 + the signal): the old workspace is kept all the same.
                raise TaskError(
                    f"Workspace {name} was not replaced: {error_message(exc)}; the old one is kept"
                ) from exc
            raise
        fresh = self.workspaces.new_record(selected, name, applied, ttl)
        with self.project.stores.writing("fork"):
            swapped = store.adopt_replacement(
                replace(
                    old,
                    workflow_ctx=applied.context,
                    ctx=ctx,
                    status="ready",
                    error=None,
                    updated_at=utc_now(),
                    pid=None,
                    host=None,
                    provenance=fresh.provenance,
                    expires_at=fresh.expires_at,
                    idle_stop=fresh.idle_stop,
                    reap_at=fresh.reap_at,
                ),
                owner,
            )
            if swapped is None:
                raise TaskError(
                    f"Workspace {name} was removed while it was being replaced; rig gc collects what was made"
                )
            await self._retire(selected, session, old)
        self.project.emit(WorkspaceReady(workflow=selected.name, workspace=name))
        return swapped

    async def _retire(self, selected: CompiledWorkflow, session: ProviderSession, old: WorkspaceRecord) -> None:
        """Under the lock, after the swap: the old machine's remove hook (if its create completed),
        then what was made for it. A failure leaves the new workspace as it is, with a warning."""
        problems: list[str] = []
        if old.status in CREATED and selected.remove_hook is not None:
            try:
                await self.workspaces.run_remove_hook(selected, session, old.name, old)
            except Exception as exc:
                problems.append(f"its remove hook failed: {error_message(exc)}")
        retired = self.project.store.list_effects(owner_kind="retired", owner_id=old.id, statuses=LIVE_EFFECT_STATUSES)
        outcome = await remove_effects(self.project.store, session, list(reversed(retired)))
        if outcome.failed:
            problems.append(outcome.summary())
        if problems:
            self.project.emit(
                StateWarning(
                    message=f"Workspace {old.name} was replaced, but of the old machine {'; '.join(problems)}; "
                    "rig gc removes what is left"
                )
            )

    async def _discard(self, session: ProviderSession, owner: str) -> None:
        """What a failed replacement made: removed now, or left journaled for ``rig gc``."""
        with self.project.stores.writing("fork"):
            made = self.project.store.list_effects(
                owner_kind="replacement", owner_id=owner, statuses=LIVE_EFFECT_STATUSES
            )
            await remove_effects(self.project.store, session, list(reversed(made)))


__all__ = ["MAX_COUNT", "Forks", "substitute"]

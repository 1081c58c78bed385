"""Remove journaled effects through their providers: what ``rm`` and ``gc`` share.

A resource already gone counts as removed. An answer that cannot be had (a daemon is down, no
provider to ask) is never taken as "gone": the effect stays journaled with the reason, and the
caller keeps whatever refers to it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import field

from rigcli.authoring.values import ProviderDefinition
from rigcli.engine.effects import as_entry
from rigcli.engine.providers import maybe_await
from rigcli.engine.session import ProviderSession
from rigcli.errors import RigError, UnreachableError, describe_exception
from rigcli.provider_api import EXEC_EFFECT, EffectEntry, ProviderController, SupportsEffects
from rigcli.records import EffectRecord, WorkspaceRecord
from rigcli.speed.records import lazy_dataclass
from rigcli.state.api import StateStore
from rigcli.state.effects import LIVE_EFFECT_STATUSES
from rigcli.state.process import pid_alive, this_host


@lazy_dataclass
class Outcome:
    """What one removal pass did: removed effects, and the ones kept with why."""

    removed: list[EffectRecord] = field(default_factory=list)
    failed: list[tuple[EffectRecord, str]] = field(default_factory=list)

    def summary(self) -> str:
        """``2 resources could not be removed (docker container c-1: daemon unreachable; ...)``."""
        first = "; ".join(f"{e.provider_id} {e.kind} {e.id}: {why}" for e, why in self.failed[:3])
        more = f"; and {len(self.failed) - 3} more" if len(self.failed) > 3 else ""
        noun = "resource" if len(self.failed) == 1 else "resources"
        return f"{len(self.failed)} {noun} could not be removed ({first}{more})"


def _message(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, RigError) else describe_exception(exc)


async def controller_of(session: ProviderSession, provider_id: str) -> ProviderController | None:
    """The controller this command has for ``provider_id``, else one made from a bare definition."""
    found = session.controller_for(provider_id, {})
    if found is not None:
        return found
    try:
        return await session.hub.controller(ProviderDefinition(provider_id))
    except RigError:
        return None


async def remove_effect(session: ProviderSession, entry: EffectEntry, provider_id: str) -> bool:
    """Ask the provider to remove one effect; raises RigError when it cannot tell."""
    controller = await controller_of(session, provider_id)
    if controller is None:
        raise UnreachableError(f"provider {provider_id} is not available to remove it")
    if not isinstance(controller, SupportsEffects):
        raise RigError(f"provider {provider_id} cannot remove what it journaled (no remove_effect)")
    return bool(await maybe_await(controller.remove_effect(entry)))


async def remove_effects(store: StateStore, session: ProviderSession, effects: Sequence[EffectRecord]) -> Outcome:
    """Remove each effect and mark it deleted; keep the ones whose fate is uncertain, with why."""
    outcome = Outcome()
    for effect in effects:
        try:
            await remove_effect(session, as_entry(effect), effect.provider_id)
        except Exception as exc:  # anything but a clear answer keeps the effect journaled
            reason = _message(exc)
            store.note_effect_error(effect.id, reason)
            outcome.failed.append((effect, reason))
            continue
        store.delete_effect(effect.id)
        outcome.removed.append(effect)
    return outcome


def abandoned(effect: EffectRecord) -> bool:
    """An exec session whose rig process is gone from this host: nobody is left to stop it.
    One started on another host cannot be judged from here, and counts as alive."""

    if effect.pid is None:
        return True  # no process recorded: nobody is going to end it
    if effect.pid == os.getpid() or effect.host not in (None, this_host()):
        return False
    return not pid_alive(effect.pid)


async def end_abandoned_sessions(store: StateStore, session: ProviderSession) -> Outcome:
    """End the exec sessions of rig processes that are gone, for the providers this command loaded
    (the others wait for theirs, or for ``rig gc``). A provider that cannot be asked now (a daemon
    that is down) leaves them journaled with the reason; the command goes on."""
    loaded = {controller.provider_id for controller in session.controllers()}
    effects = [
        effect
        for effect in store.list_effects(kind=EXEC_EFFECT, statuses=LIVE_EFFECT_STATUSES)
        if effect.provider_id in loaded and abandoned(effect)
    ]
    return await remove_effects(store, session, effects) if effects else Outcome()


def workspace_effects(store: StateStore, record: WorkspaceRecord) -> list[EffectRecord]:
    """Everything the effects journal says was made for this workspace, newest first: owned by its
    record id, and what ``fork --replace`` retired from it or was making for it (engine/forks.py).

    Newest first, because what was made later may depend on what was made before (a container on
    the image a ``fork --from`` committed for it), and the daemon refuses to remove that first.
    """
    owned = [
        *store.list_effects(owner_kind="workspace", owner_id=record.id, statuses=LIVE_EFFECT_STATUSES),
        *store.list_effects(owner_kind="retired", owner_id=record.id, statuses=LIVE_EFFECT_STATUSES),
        *(
            effect
            for effect in store.list_effects(owner_kind="replacement", statuses=LIVE_EFFECT_STATUSES)
            if (effect.owner_id or "").startswith(f"{record.id}:")
        ),
    ]
    return sorted(owned, key=lambda effect: (effect.created_at, effect.id), reverse=True)


async def remove_workspace_effects(store: StateStore, session: ProviderSession, record: WorkspaceRecord) -> Outcome:
    """Remove everything the effects journal says was made for this workspace (``workspace_effects``)."""
    return await remove_effects(store, session, workspace_effects(store, record))


__all__ = [
    "Outcome",
    "abandoned",
    "controller_of",
    "end_abandoned_sessions",
    "remove_effect",
    "remove_effects",
    "remove_workspace_effects",
    "workspace_effects",
]

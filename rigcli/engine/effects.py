"""The effects journal as providers see it (``setup.effects``, ``context.effects``), over the project store.

Every effect goes to the project's store, whichever store the run that made it lives in: the
machines and images of a global fragment's run are this project's (its ``.rig/``, its labels).
"""

from __future__ import annotations

from collections.abc import Mapping

from rigcli.jsonutil import JsonValue
from rigcli.provider_api import EffectEntry, new_effect_id
from rigcli.records import EffectRecord
from rigcli.state.api import StateStore

Owner = tuple[str, str]  # ("run", run id) | ("workspace", workspace record id)


class StoreEffects:
    """An ``EffectJournal`` writing ``provider_id``'s effects to ``store``, owned by ``owner``."""

    def __init__(self, store: StateStore, provider_id: str, owner: Owner | None = None) -> None:
        self._store = store
        self.provider_id = provider_id
        self.owner = owner

    def requested(self, kind: str, resource: Mapping[str, JsonValue], *, effect_id: str | None = None) -> str:
        chosen = effect_id or new_effect_id(kind)
        owner_kind, owner_id = self.owner if self.owner is not None else (None, None)
        self._store.request_effect(
            chosen, provider_id=self.provider_id, kind=kind, resource=resource, owner_kind=owner_kind, owner_id=owner_id
        )
        return chosen

    def confirmed(self, effect_id: str, resource: Mapping[str, JsonValue] | None = None) -> None:
        self._store.confirm_effect(effect_id, resource)

    def deleted(self, effect_id: str) -> None:
        self._store.delete_effect(effect_id)


def as_entry(effect: EffectRecord) -> EffectEntry:
    """What ``remove_effect`` is given for a journaled effect."""
    return {"id": effect.id, "kind": effect.kind, "resource": dict(effect.resource)}


__all__ = ["Owner", "StoreEffects", "as_entry"]

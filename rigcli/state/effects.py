"""The effects journal: machines, containers, images and snapshots, recorded before they are made.

Portable SQL over ``_read``/``_write`` (``?`` placeholders, no rowid), so every backend gets it.
A row goes ``requested`` (before the provider call) → ``confirmed`` (it exists) → ``deleted``
(it is gone); ``rig gc`` forgets deleted rows. ``forgotten`` (with the reason in ``error``) is
what ``rig gc --forget-unreachable`` makes of a row no provider can be asked about: no longer
looked for, kept as a record that it may still exist.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping

from rigcli.errors import StateError, TaskError
from rigcli.jsonutil import JsonValue, find_non_json, to_plain_json
from rigcli.records import EffectRecord, utc_now
from rigcli.state.database import StateDatabase, dumps, stored_text
from rigcli.state.dialect import where_clause
from rigcli.state.process import this_host
from rigcli.state.rows import Columns, json_object
from rigcli.statuses import EFFECT_STATUSES, LIVE_EFFECT_STATUSES, EffectStatus, PowerStatus

EFFECTS = Columns(EffectRecord, "effects", as_json=("resource",), decode={"resource": json_object})


def _resource_json(effect_id: str, resource: Mapping[str, object]) -> dict[str, JsonValue]:
    bad = find_non_json(dict(resource))
    if bad is not None:
        raise TaskError(f"Resource of effect {effect_id} must be JSON-serializable (at {bad})")
    plain = to_plain_json(dict(resource))
    assert isinstance(plain, dict)
    return plain


class EffectsJournal(StateDatabase):
    def request_effect(
        self,
        effect_id: str,
        *,
        provider_id: str,
        kind: str,
        resource: Mapping[str, object],
        owner_kind: str | None = None,
        owner_id: str | None = None,
    ) -> EffectRecord:
        """Record that ``provider_id`` is about to make ``resource``; call before the provider call."""
        now = utc_now()
        effect = EffectRecord(
            id=effect_id,
            provider_id=provider_id,
            kind=kind,
            status="requested",
            resource=_resource_json(effect_id, resource),
            owner_kind=owner_kind,
            owner_id=owner_id,
            error=None,
            created_at=now,
            updated_at=now,
            pid=os.getpid(),
            host=this_host(),
        )
        with self._write() as db:
            if db.execute("SELECT 1 FROM effects WHERE id = ?", (effect_id,)).fetchone() is not None:
                raise StateError(f"Effect {effect_id} is already journaled; effect ids must be new")
            db.execute(EFFECTS.insert(), EFFECTS.params(effect.to_json()))
        return effect

    def confirm_effect(self, effect_id: str, resource: Mapping[str, object] | None = None) -> None:
        """The resource exists; ``resource`` (merged into what was recorded) says how to find it now."""
        extra = _resource_json(effect_id, resource or {})
        with self._write() as db:
            found = EFFECTS.one(db.execute(f"SELECT {EFFECTS.select} FROM effects WHERE id = ?", (effect_id,)))
            if found is None:
                raise StateError(f"Unknown effect {effect_id}: record it as requested before the provider call")
            if found.status == "deleted":
                return  # removed meanwhile (a retry, or gc): never resurrect it
            merged = {**found.resource, **extra}
            db.execute(
                "UPDATE effects SET status = 'confirmed', resource_json = ?, error = NULL, updated_at = ? WHERE id = ?",
                (dumps(merged), utc_now(), effect_id),
            )

    def delete_effect(self, effect_id: str) -> bool:
        """Mark the resource gone; False when it was not journaled or already marked."""
        with self._write() as db:
            cursor = db.execute(
                "UPDATE effects SET status = 'deleted', error = NULL, updated_at = ? "
                "WHERE id = ? AND status != 'deleted'",
                (utc_now(), effect_id),
            )
            return cursor.rowcount > 0

    def forget_effect(self, effect_id: str, reason: str) -> bool:
        """Stop looking for it (its provider cannot be asked): ``forgotten``, with why; False when it
        was not journaled or no longer live."""
        with self._write() as db:
            cursor = db.execute(
                "UPDATE effects SET status = 'forgotten', error = ?, updated_at = ? "
                "WHERE id = ? AND status IN ('requested', 'confirmed')",
                (stored_text(reason), utc_now(), effect_id),
            )
            return cursor.rowcount > 0

    def note_effect_error(self, effect_id: str, error: str) -> None:
        """Why the last attempt to remove it was inconclusive (shown by ``rig gc`` and ``rm``)."""
        with self._write() as db:
            db.execute("UPDATE effects SET error = ?, updated_at = ? WHERE id = ?", (error, utc_now(), effect_id))

    def note_effect_power(self, effect_id: str, power: PowerStatus) -> bool:
        """What ``rig stop``/``rig start`` does to a machine, journaled as ``resource.power``: the
        ``stopping``/``starting`` before the provider call, the outcome after. False when the effect
        is not live (not journaled, or deleted)."""
        with self._write() as db:
            found = EFFECTS.one(db.execute(f"SELECT {EFFECTS.select} FROM effects WHERE id = ?", (effect_id,)))
            if found is None or found.status == "deleted":
                return False
            merged = {**found.resource, "power": power}
            db.execute(
                "UPDATE effects SET resource_json = ?, updated_at = ? WHERE id = ?",
                (dumps(merged), utc_now(), effect_id),
            )
            return True

    def get_effect(self, effect_id: str) -> EffectRecord | None:
        with self._read() as db:
            return EFFECTS.one(db.execute(f"SELECT {EFFECTS.select} FROM effects WHERE id = ?", (effect_id,)))

    def list_effects(
        self,
        *,
        statuses: Collection[EffectStatus] | None = None,
        owner_kind: str | None = None,
        owner_id: str | None = None,
        provider_id: str | None = None,
        kind: str | None = None,
    ) -> list[EffectRecord]:
        """Effects matching every given filter, oldest first."""
        filters = where_clause(
            [("owner_kind", owner_kind), ("owner_id", owner_id), ("provider_id", provider_id), ("kind", kind)],
            statuses=statuses,
        )
        if filters is None:
            return []
        where, params = filters
        with self._read() as db:
            return EFFECTS.all(
                db.execute(f"SELECT {EFFECTS.select} FROM effects {where} ORDER BY created_at, id", params)
            )

    def forget_deleted_effects(self) -> int:
        """Drop the rows of resources that are gone (history ``rig gc`` no longer needs)."""
        with self._write() as db:
            return int(db.execute("DELETE FROM effects WHERE status = 'deleted'").rowcount)


__all__ = ["EFFECTS", "EFFECT_STATUSES", "LIVE_EFFECT_STATUSES", "EffectsJournal"]

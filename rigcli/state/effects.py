"""The effects journal: machines, containers, images and snapshots, recorded before they are made.

Portable SQL over ``_read``/``_write`` (``?`` placeholders, no rowid), so every backend gets it.
A row goes ``requested`` (before the provider call) → ``confirmed`` (it exists) → ``deleted``
(it is gone); ``rig gc`` forgets deleted rows.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from rigcli.errors import StateError, TaskError
from rigcli.jsonutil import JsonValue, find_non_json, to_plain_json
from rigcli.records import EffectRecord, utc_now
from rigcli.state.database import StateDatabase, dumps
from rigcli.state.dialect import placeholders, where_clause
from rigcli.state.process import this_host

EFFECT_STATUSES = ("requested", "confirmed", "deleted")
LIVE_EFFECT_STATUSES = ("requested", "confirmed")  # may exist out there

EFFECT_COLUMNS = (
    "id, provider_id, kind, status, resource_json, owner_kind, owner_id, error, created_at, updated_at, pid, host"
)


def to_effect(row: Sequence[Any]) -> EffectRecord:
    """An effect from a row of ``SELECT EFFECT_COLUMNS``."""
    resource = json.loads(row[4])
    return EffectRecord(
        id=row[0],
        provider_id=row[1],
        kind=row[2],
        status=row[3],
        resource=resource if isinstance(resource, dict) else {},
        owner_kind=row[5],
        owner_id=row[6],
        error=row[7],
        created_at=row[8],
        updated_at=row[9],
        pid=row[10],
        host=row[11],
    )


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
            db.execute(
                f"INSERT INTO effects ({EFFECT_COLUMNS}) VALUES ({placeholders(12)})",
                (
                    effect.id,
                    effect.provider_id,
                    effect.kind,
                    effect.status,
                    dumps(effect.resource),
                    effect.owner_kind,
                    effect.owner_id,
                    None,
                    now,
                    now,
                    effect.pid,
                    effect.host,
                ),
            )
        return effect

    def confirm_effect(self, effect_id: str, resource: Mapping[str, object] | None = None) -> None:
        """The resource exists; ``resource`` (merged into what was recorded) says how to find it now."""
        extra = _resource_json(effect_id, resource or {})
        with self._write() as db:
            row = db.execute("SELECT status, resource_json FROM effects WHERE id = ?", (effect_id,)).fetchone()
            if row is None:
                raise StateError(f"Unknown effect {effect_id}: record it as requested before the provider call")
            if row[0] == "deleted":
                return  # removed meanwhile (a retry, or gc): never resurrect it
            merged = {**json.loads(row[1]), **extra}
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

    def note_effect_error(self, effect_id: str, error: str) -> None:
        """Why the last attempt to remove it was inconclusive (shown by ``rig gc`` and ``rm``)."""
        with self._write() as db:
            db.execute("UPDATE effects SET error = ?, updated_at = ? WHERE id = ?", (error, utc_now(), effect_id))

    def get_effect(self, effect_id: str) -> EffectRecord | None:
        with self._read() as db:
            row = db.execute(f"SELECT {EFFECT_COLUMNS} FROM effects WHERE id = ?", (effect_id,)).fetchone()
        return None if row is None else to_effect(row)

    def list_effects(
        self,
        *,
        statuses: Collection[str] | None = None,
        owner_kind: str | None = None,
        owner_id: str | None = None,
        provider_id: str | None = None,
    ) -> list[EffectRecord]:
        """Effects matching every given filter, oldest first."""
        filters = where_clause(
            [("owner_kind", owner_kind), ("owner_id", owner_id), ("provider_id", provider_id)], statuses=statuses
        )
        if filters is None:
            return []
        where, params = filters
        with self._read() as db:
            query = f"SELECT {EFFECT_COLUMNS} FROM effects {where} ORDER BY created_at, id"
            rows = db.execute(query, params).fetchall()
        return [to_effect(row) for row in rows]

    def forget_deleted_effects(self) -> int:
        """Drop the rows of resources that are gone (history ``rig gc`` no longer needs)."""
        with self._write() as db:
            return int(db.execute("DELETE FROM effects WHERE status = 'deleted'").rowcount)


__all__ = ["EFFECT_COLUMNS", "EFFECT_STATUSES", "LIVE_EFFECT_STATUSES", "EffectsJournal", "to_effect"]

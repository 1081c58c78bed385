"""Workspace records: the lifecycle of ``fork`` and ``rm`` (creating → ready/failed → removing).

What a workspace's create made is not copied into its row: the effects journal holds it, owned
by the record's id, and a record read from here carries it as ``resources`` (its live effects).
The old ``resources_json`` column is left as it was and no longer read or written.
"""

from __future__ import annotations

import os
from dataclasses import replace

from rigcli.errors import TaskError
from rigcli.jsonutil import JsonValue, find_non_json, to_plain_json
from rigcli.records import EffectRecord, WorkspaceRecord, utc_now
from rigcli.state.database import StateDatabase, stored_text
from rigcli.state.dialect import Connection, where_clause
from rigcli.state.effects import EFFECTS
from rigcli.state.expiry import due_condition
from rigcli.state.process import this_owner
from rigcli.state.rows import Columns
from rigcli.statuses import LIVE_EFFECT_STATUSES, WORKSPACE_STATUSES, WorkspaceStatus

WORKSPACES = Columns(
    WorkspaceRecord,
    "workspaces",
    as_json=("workflow_ctx", "ctx", "provenance"),
    encode={"error": stored_text},  # an error message may quote a secret
    derived={"resources": list},  # read from the effects journal (_resources)
    unused={"resources_json": "[]"},  # NOT NULL in older schemas' rows: a new row gets an empty list
)


def new_workspace(
    name: str,
    workflow: str,
    *,
    status: WorkspaceStatus = "ready",
    workflow_ctx: JsonValue = None,
    ctx: JsonValue = None,
    pid: int | None = None,
    host: str | None = None,
    provenance: JsonValue = None,
    expires_at: str | None = None,
    idle_stop: int | None = None,
    reap_at: str | None = None,
) -> WorkspaceRecord:
    """A record for a workspace not stored yet: a new id, made now by this user@host."""
    now = utc_now()
    return WorkspaceRecord(
        id=os.urandom(16).hex(),
        name=name,
        workflow=workflow,
        workflow_ctx=workflow_ctx,
        ctx=ctx,
        status=status,
        resources=[],
        error=None,
        created_at=now,
        updated_at=now,
        owner=this_owner(),
        pid=pid,
        host=host,
        provenance=provenance,
        expires_at=expires_at,
        idle_stop=idle_stop,
        reap_at=reap_at,
    )


def _as_resource(effect: EffectRecord) -> JsonValue:
    """One of a workspace's ``resources``: an effect made for it that may still exist."""
    return {
        "effect_id": effect.id,
        "provider_id": effect.provider_id,
        "kind": effect.kind,
        "status": effect.status,
        "resource": dict(effect.resource),
    }


def _resources(db: Connection, workspace_id: str | None = None) -> dict[str, list[JsonValue]]:
    """Live effects owned by workspaces (by record id, in journal order): of one, or of all."""
    filtered = where_clause([("owner_kind", "workspace"), ("owner_id", workspace_id)], statuses=LIVE_EFFECT_STATUSES)
    assert filtered is not None  # the statuses are not empty
    where, params = filtered
    owned: dict[str, list[JsonValue]] = {}
    query = f"SELECT {EFFECTS.select} FROM effects {where} ORDER BY created_at, id"
    for effect in EFFECTS.all(db.execute(query, tuple(params))):
        owned.setdefault(str(effect.owner_id), []).append(_as_resource(effect))
    return owned


def all_workspaces(db: Connection) -> list[WorkspaceRecord]:
    """Every workspace (by name, then workflow) with its live effects (``rig ls`` answered from the cache reads
    its file with this too)."""
    found = WORKSPACES.all(db.execute(f"SELECT {WORKSPACES.select} FROM workspaces ORDER BY name, workflow"))
    owned = _resources(db) if found else {}
    return [replace(record, resources=owned.get(record.id, [])) for record in found]


def _select(db: Connection, name: str, workflow: str) -> WorkspaceRecord | None:
    query = f"SELECT {WORKSPACES.select} FROM workspaces WHERE workflow = ? AND name = ?"
    found = WORKSPACES.one(db.execute(query, (workflow, name)))
    return None if found is None else replace(found, resources=_resources(db, found.id).get(found.id, []))


def _write_row(db: Connection, record: WorkspaceRecord, *, exists: bool) -> None:
    values = WORKSPACES.params(record.to_json())
    if exists:
        # (workflow, name) is the key: the row keeps them, and every other column is the record's.
        where = "WHERE workflow = :workflow AND name = :name"
        db.execute(f"UPDATE workspaces SET {WORKSPACES.assignments()} {where}", values)
    else:
        db.execute(WORKSPACES.insert(), values)


class WorkspaceTable(StateDatabase):
    def save_workspace(self, record: WorkspaceRecord) -> WorkspaceRecord:
        """Insert or update the workspace named by ``record``'s (workflow, name); return what is stored.

        Build a new record with ``new_workspace`` and a changed one with ``dataclasses.replace``.
        Its ``resources`` are not written: they are read back from the effects journal.
        """
        if record.status not in WORKSPACE_STATUSES:
            msg = f"Workspace status must be one of {', '.join(WORKSPACE_STATUSES)}, not {record.status!r}"
            raise ValueError(msg)
        bad = find_non_json({"workflow_ctx": record.workflow_ctx, "ctx": record.ctx})
        if bad is not None:
            msg = f'Workspace "{record.name}" must be JSON-serializable (at {bad})'
            raise TaskError(msg)
        plain = replace(record, workflow_ctx=to_plain_json(record.workflow_ctx), ctx=to_plain_json(record.ctx))
        with self._write() as db:
            exists = db.execute(
                "SELECT 1 FROM workspaces WHERE workflow = ? AND name = ?", (record.workflow, record.name)
            ).fetchone()
            _write_row(db, plain, exists=exists is not None)
            saved = replace(plain, resources=_resources(db, plain.id).get(plain.id, []))
        return saved

    def get_workspace(self, name: str, workflow: str) -> WorkspaceRecord | None:
        """The workspace ``name`` of ``workflow``, or None (the engine owns lookups across workflows)."""
        with self._read() as db:
            return _select(db, name, workflow)

    def list_workspaces(self, workflow: str | None = None) -> list[WorkspaceRecord]:
        with self._read() as db:
            if workflow is None:
                return all_workspaces(db)
            query = f"SELECT {WORKSPACES.select} FROM workspaces WHERE workflow = ? ORDER BY name"
            found = WORKSPACES.all(db.execute(query, (workflow,)))
            owned = _resources(db) if found else {}
            return [replace(record, resources=owned.get(record.id, [])) for record in found]

    def due_workspaces(self, now: str, *, failed_too: bool = False) -> list[WorkspaceRecord]:
        """Workspaces the reaper should look at by ``now`` (one query on the ``reap_at`` index; every
        command asks). A create still running is never due; ``failed_too`` adds every ``reap-failed``
        one, whenever its retry is due (``rig reap`` retries them at once)."""
        query = (
            f"SELECT {WORKSPACES.select} FROM workspaces "
            f"WHERE {due_condition(failed_too=failed_too)} ORDER BY reap_at, name"
        )
        with self._read() as db:
            found = WORKSPACES.all(db.execute(query, (now,)))
            owned = _resources(db) if found else {}
            return [replace(record, resources=owned.get(record.id, [])) for record in found]

    def adopt_replacement(self, record: WorkspaceRecord, replacement: str) -> WorkspaceRecord | None:
        """Swap a workspace to its replacement in one transaction (``rig fork NAME --replace``).

        ``record`` is the stored one (same id) with the new machine's ctx, provenance and expiry;
        what was made for it until now becomes ``retired`` (its owner kind: removed next, and by
        ``rm`` and ``gc`` if that is cut off), and what ``replacement`` made becomes the
        workspace's. None when the workspace is gone (removed meanwhile): nothing is changed.
        """
        plain = replace(record, workflow_ctx=to_plain_json(record.workflow_ctx), ctx=to_plain_json(record.ctx))
        now = utc_now()
        live = ", ".join(f"'{status}'" for status in LIVE_EFFECT_STATUSES)
        with self._write() as db:
            if db.execute("SELECT 1 FROM workspaces WHERE id = ?", (record.id,)).fetchone() is None:
                return None
            db.execute(
                "UPDATE effects SET owner_kind = 'retired', updated_at = ? "
                f"WHERE owner_kind = 'workspace' AND owner_id = ? AND status IN ({live})",
                (now, record.id),
            )
            db.execute(
                "UPDATE effects SET owner_kind = 'workspace', owner_id = ?, updated_at = ? "
                "WHERE owner_kind = 'replacement' AND owner_id = ?",
                (record.id, now, replacement),
            )
            _write_row(db, plain, exists=True)
            return replace(plain, resources=_resources(db, plain.id).get(plain.id, []))

    def delete_workspace(self, name: str, workflow: str) -> bool:
        with self._write() as db:
            cursor = db.execute("DELETE FROM workspaces WHERE workflow = ? AND name = ?", (workflow, name))
            return cursor.rowcount > 0


__all__ = ["WORKSPACES", "WORKSPACE_STATUSES", "WorkspaceTable", "all_workspaces", "new_workspace"]

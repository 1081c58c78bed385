"""Workspace records: the lifecycle of ``fork`` and ``rm`` (creating → ready/failed → removing).

What a workspace's create made is not copied into its row: the effects journal holds it, owned
by the record's id, and a record read from here carries it as ``resources`` (its live effects).
The old ``resources_json`` column is left as it was and no longer read or written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import cast

from rigcli.errors import TaskError
from rigcli.jsonutil import JsonValue, find_non_json, to_plain_json
from rigcli.records import EffectRecord, WorkspaceRecord, utc_now
from rigcli.state.database import StateDatabase, dumps, stored_text
from rigcli.state.dialect import Connection, Row, where_clause
from rigcli.state.effects import EFFECT_COLUMNS, LIVE_EFFECT_STATUSES, to_effect
from rigcli.state.process import this_owner

WORKSPACE_STATUSES = ("creating", "ready", "failed", "removing")

_COLUMN_NAMES = (
    "id",
    "name",
    "workflow",
    "workflow_ctx_json",
    "ctx_json",
    "status",
    "error",
    "created_at",
    "updated_at",
    "owner",
    "pid",
    "host",
)
_COLUMNS = ", ".join(_COLUMN_NAMES)
_RECORD_KEYS = tuple(column.removesuffix("_json") for column in _COLUMN_NAMES)
_FIELDS = frozenset((*_RECORD_KEYS, "resources"))  # resources: read from the journal, never written


def _to_record(row: Row, resources: list[JsonValue]) -> WorkspaceRecord:
    return {
        "id": row[0],
        "name": row[1],
        "workflow": row[2],
        "workflow_ctx": json.loads(row[3]),
        "ctx": json.loads(row[4]),
        "status": row[5],
        "resources": resources,
        "error": row[6],
        "created_at": row[7],
        "updated_at": row[8],
        "owner": row[9],
        "pid": row[10],
        "host": row[11],
    }


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
    for row in db.execute(f"SELECT {EFFECT_COLUMNS} FROM effects {where} ORDER BY created_at, id", tuple(params)):
        effect = to_effect(row)
        owned.setdefault(str(effect.owner_id), []).append(_as_resource(effect))
    return owned


def _select(db: Connection, name: str, workflow: str) -> WorkspaceRecord | None:
    row = db.execute(f"SELECT {_COLUMNS} FROM workspaces WHERE workflow = ? AND name = ?", (workflow, name)).fetchone()
    return None if row is None else _to_record(row, _resources(db, row[0]).get(row[0], []))


def _write_row(db: Connection, record: WorkspaceRecord, *, exists: bool) -> None:
    values = (
        record["id"],
        record["name"],
        record["workflow"],
        dumps(record["workflow_ctx"]),
        dumps(record["ctx"]),
        record["status"],
        stored_text(record["error"]),
        record["created_at"],
        record["updated_at"],
        record.get("owner"),
        record.get("pid"),
        record.get("host"),
    )
    if exists:
        assignments = ", ".join(f"{column} = ?" for column in _COLUMN_NAMES)
        db.execute(
            f"UPDATE workspaces SET {assignments} WHERE workflow = ? AND name = ?",
            (*values, record["workflow"], record["name"]),
        )
    else:  # resources_json: not the book of what the workspace made (the effects journal is)
        columns, marks = f"{_COLUMNS}, resources_json", ", ".join("?" * (len(values) + 1))
        db.execute(f"INSERT INTO workspaces ({columns}) VALUES ({marks})", (*values, "[]"))


class WorkspaceTable(StateDatabase):
    def save_workspace(self, record: Mapping[str, object]) -> WorkspaceRecord:
        """Insert or update the workspace named by ``record``'s (workflow, name); return what is stored.

        Fields left out keep their stored value (or a default: a new id, status ``ready``, now,
        and ``owner`` — ``user@host`` of this process — for a new record); ``updated_at`` defaults
        to now. ``resources`` is ignored: it is read from the effects journal.
        """
        unknown = sorted(set(record) - _FIELDS)
        if unknown:
            msg = f"Unknown workspace record fields: {', '.join(unknown)}"
            raise ValueError(msg)
        name, workflow = record.get("name"), record.get("workflow")
        if not isinstance(name, str) or not isinstance(workflow, str):
            msg = "A workspace record needs a string name and workflow"
            raise ValueError(msg)
        status = record.get("status", "ready")
        if status not in WORKSPACE_STATUSES:
            msg = f"Workspace status must be one of {', '.join(WORKSPACE_STATUSES)}, not {status!r}"
            raise ValueError(msg)
        bad = find_non_json({key: record.get(key) for key in ("workflow_ctx", "ctx")})
        if bad is not None:
            msg = f'Workspace "{name}" must be JSON-serializable (at {bad})'
            raise TaskError(msg)
        now = utc_now()
        with self._write() as db:
            stored = _select(db, name, workflow)
            merged: dict[str, object] = (
                dict(stored)
                if stored is not None
                else {
                    "id": os.urandom(16).hex(),
                    "workflow_ctx": None,
                    "ctx": None,
                    "error": None,
                    "created_at": now,
                    "owner": this_owner(),
                    "pid": None,
                    "host": None,
                }
            )
            plain = to_plain_json({key: value for key, value in record.items() if key != "resources"})
            assert isinstance(plain, dict)
            merged.update(plain)
            merged.setdefault("status", status)
            if "updated_at" not in record:
                merged["updated_at"] = now
            saved = cast(WorkspaceRecord, {key: merged[key] for key in _RECORD_KEYS})
            _write_row(db, saved, exists=stored is not None)
            saved["resources"] = _resources(db, saved["id"]).get(saved["id"], [])
        return saved

    def get_workspace(self, name: str, workflow: str) -> WorkspaceRecord | None:
        """The workspace ``name`` of ``workflow``, or None (the engine owns lookups across workflows)."""
        with self._read() as db:
            return _select(db, name, workflow)

    def list_workspaces(self, workflow: str | None = None) -> list[WorkspaceRecord]:
        with self._read() as db:
            if workflow is None:
                rows = db.execute(f"SELECT {_COLUMNS} FROM workspaces ORDER BY name, workflow")
            else:
                rows = db.execute(f"SELECT {_COLUMNS} FROM workspaces WHERE workflow = ? ORDER BY name", (workflow,))
            found = list(rows)
            owned = _resources(db) if found else {}
            return [_to_record(row, owned.get(row[0], [])) for row in found]

    def delete_workspace(self, name: str, workflow: str) -> bool:
        with self._write() as db:
            cursor = db.execute("DELETE FROM workspaces WHERE workflow = ? AND name = ?", (workflow, name))
            return cursor.rowcount > 0


__all__ = ["WORKSPACE_STATUSES", "WorkspaceTable"]

"""Workspace records: the effects journal of ``fork`` and ``rm`` (creating → ready/failed → removing)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import cast

from rigcli.errors import StateError, TaskError
from rigcli.jsonutil import JsonValue, find_non_json, to_plain_json
from rigcli.records import WorkspaceRecord, utc_now
from rigcli.state.database import StateDatabase, dumps, stored_text
from rigcli.state.dialect import Connection, Row
from rigcli.state.process import this_owner

WORKSPACE_STATUSES = ("creating", "ready", "failed", "removing")

_COLUMN_NAMES = (
    "id",
    "name",
    "workflow",
    "workflow_ctx_json",
    "ctx_json",
    "status",
    "resources_json",
    "error",
    "created_at",
    "updated_at",
    "owner",
    "pid",
    "host",
)
_COLUMNS = ", ".join(_COLUMN_NAMES)
_RECORD_KEYS = tuple(column.removesuffix("_json") for column in _COLUMN_NAMES)
_FIELDS = frozenset(_RECORD_KEYS)


def _to_record(row: Row) -> WorkspaceRecord:
    return {
        "id": row[0],
        "name": row[1],
        "workflow": row[2],
        "workflow_ctx": json.loads(row[3]),
        "ctx": json.loads(row[4]),
        "status": row[5],
        "resources": json.loads(row[6]),
        "error": row[7],
        "created_at": row[8],
        "updated_at": row[9],
        "owner": row[10],
        "pid": row[11],
        "host": row[12],
    }


def _select(db: Connection, name: str, workflow: str) -> WorkspaceRecord | None:
    row = db.execute(f"SELECT {_COLUMNS} FROM workspaces WHERE workflow = ? AND name = ?", (workflow, name)).fetchone()
    return None if row is None else _to_record(row)


def _write_row(db: Connection, record: WorkspaceRecord, *, exists: bool) -> None:
    values = (
        record["id"],
        record["name"],
        record["workflow"],
        dumps(record["workflow_ctx"]),
        dumps(record["ctx"]),
        record["status"],
        dumps(record["resources"]),
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
    else:
        db.execute(f"INSERT INTO workspaces ({_COLUMNS}) VALUES ({', '.join('?' * len(values))})", values)


class WorkspaceTable(StateDatabase):
    def save_workspace(self, record: Mapping[str, object]) -> WorkspaceRecord:
        """Insert or update the workspace named by ``record``'s (workflow, name); return what is stored.

        Fields left out keep their stored value (or a default: a new id, status ``ready``, no
        resources, now, and ``owner`` — ``user@host`` of this process — for a new record);
        ``updated_at`` defaults to now.
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
        bad = find_non_json({key: record.get(key) for key in ("workflow_ctx", "ctx", "resources")})
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
                    "resources": [],
                    "error": None,
                    "created_at": now,
                    "owner": this_owner(),
                    "pid": None,
                    "host": None,
                }
            )
            plain = to_plain_json(dict(record))
            assert isinstance(plain, dict)
            merged.update(plain)
            merged.setdefault("status", status)
            if "updated_at" not in record:
                merged["updated_at"] = now
            saved = cast(WorkspaceRecord, {key: merged[key] for key in _RECORD_KEYS})
            _write_row(db, saved, exists=stored is not None)
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
            return [_to_record(row) for row in rows]

    def delete_workspace(self, name: str, workflow: str) -> bool:
        with self._write() as db:
            cursor = db.execute("DELETE FROM workspaces WHERE workflow = ? AND name = ?", (workflow, name))
            return cursor.rowcount > 0

    def attach_workspace_resource(self, name: str, workflow: str, resource: JsonValue) -> WorkspaceRecord:
        """Append a machine (or other leftover) to the workspace as soon as it exists, so ``rm`` finds it."""
        bad = find_non_json(resource)
        if bad is not None:
            msg = f'Resource of workspace "{name}" must be JSON-serializable (at {bad})'
            raise TaskError(msg)
        with self._write() as db:
            stored = _select(db, name, workflow)
            if stored is None:
                msg = f'Workspace "{name}" of workflow {workflow} has no record to attach a resource to'
                raise StateError(msg)
            updated: WorkspaceRecord = {
                **stored,
                "resources": [*stored["resources"], to_plain_json(resource)],
                "updated_at": utc_now(),
            }
            _write_row(db, updated, exists=True)
        return updated


__all__ = ["WORKSPACE_STATUSES", "WorkspaceTable"]

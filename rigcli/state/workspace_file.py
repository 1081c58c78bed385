"""A workspace's record and live effects, read straight from a SQLite state file: rig shell/exec's lean path.

The store (``state/workspaces.py``) checks, migrates and records itself when it opens, and its
imports alone cost more than the program a ``rig exec`` runs. Finding which machine to run in
needs three small queries: whether a workspace is due to expire (then every command reaps, and
the full way must run), the workspace's row, and the effects it owns. A file that is not as
this rig leaves it (a damage marker, another schema version) gives None, and the full way says
what is wrong.
"""

from __future__ import annotations

import json
import os
import sqlite3

from rigcli.state.damage import marked
from rigcli.state.expiry import due_condition
from rigcli.state.schema_version import SCHEMA_VERSION_KEY, STATE_SCHEMA_VERSION

# The journal's statuses of an effect that may exist out there (statuses.LIVE_EFFECT_STATUSES,
# spelled here so this path need not import typing).
_LIVE = ("requested", "confirmed")


class FoundWorkspace:
    """A workspace's row as this path needs it."""

    __slots__ = ("id", "status", "workflow")

    def __init__(self, record_id: str, workflow: str, status: str) -> None:
        self.id = record_id
        self.workflow = workflow
        self.status = status


class WorkspaceFile:
    """A SQLite state file opened read-only for one workspace; ``None`` from ``open`` when it cannot be."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    @classmethod
    def open(cls, path: str) -> WorkspaceFile | None:
        if not os.path.isfile(path) or marked(path) is not None:
            return None
        try:
            db = sqlite3.connect(path, timeout=15.0, isolation_level=None)
        except sqlite3.Error:
            return None
        try:
            found = db.execute('SELECT value_json FROM runtime_metadata WHERE "key" = ?', (SCHEMA_VERSION_KEY,))
            version = found.fetchone()
        except sqlite3.Error:
            version = None
        if version is None or version[0] != str(STATE_SCHEMA_VERSION):
            db.close()
            return None
        return cls(db)

    def close(self) -> None:
        self._db.close()

    def expiry_due(self) -> bool:
        """Whether a workspace is due to expire (the store's one indexed query): then the full way
        runs, since every command that opens the state reaps."""
        from datetime import datetime, timezone

        now = datetime.now(timezone.utc).isoformat(timespec="microseconds")  # as records.utc_now stores it
        query = f"SELECT 1 FROM workspaces WHERE {due_condition()} LIMIT 1"
        try:
            return self._db.execute(query, (now,)).fetchone() is not None
        except sqlite3.Error:
            return True  # unsure: the full way finds out

    def named(self, name: str) -> list[FoundWorkspace]:
        """Every workspace called ``name`` (one per workflow at most)."""
        try:
            rows = self._db.execute("SELECT id, workflow, status FROM workspaces WHERE name = ?", (name,)).fetchall()
        except sqlite3.Error:
            return []
        return [FoundWorkspace(str(row[0]), str(row[1]), str(row[2])) for row in rows]

    def live_effects(self, workspace_id: str) -> list[dict[str, object]] | None:
        """The workspace's effects that may exist, in journal order, as providers see them
        (``{"provider_id", "id", "kind", "resource"}``); None when the journal cannot be read."""
        query = (
            "SELECT id, provider_id, kind, resource_json FROM effects WHERE owner_kind = 'workspace' "
            "AND owner_id = ? AND status IN (?, ?) ORDER BY created_at, id"
        )
        try:
            rows = self._db.execute(query, (workspace_id, *_LIVE)).fetchall()
            found = []
            for effect_id, provider_id, kind, resource in rows:
                details = json.loads(resource)
                found.append({"provider_id": provider_id, "id": effect_id, "kind": kind, "resource": details})
        except (sqlite3.Error, ValueError):
            return None
        return found


__all__ = ["FoundWorkspace", "WorkspaceFile"]

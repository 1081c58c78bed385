"""Workspaces and their live effects, read straight from a SQLite state file (``rig ls``, ``rig shell``, ``rig exec``).

The store (``state/workspaces.py``) checks, migrates and records itself when it opens, and its
imports alone cost more than the program a ``rig exec`` runs. Finding which machine to run in
needs three small queries: whether a workspace is due to expire (then every command reaps, and
the engine must answer), the workspace's row, and the effects it owns. A file that is not as
this rig leaves it (a damage marker, another schema version) gives None, and the engine says
what is wrong.
"""

from __future__ import annotations

from rigcli.speed.json_lite import loads
from rigcli.state.state_file import Error, expiry_due, open_current

# Not typing.TYPE_CHECKING: rig exec answered from the cache imports no typing (rigcli/__init__.py); mypy
# treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from _sqlite3 import Connection

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

    def __init__(self, db: Connection) -> None:
        self._db = db

    @classmethod
    def open(cls, path: str) -> WorkspaceFile | None:
        db = open_current(path)
        return None if db is None else cls(db)

    def close(self) -> None:
        self._db.close()

    def expiry_due(self) -> bool:
        """Whether a workspace is due to expire: then the engine answers, since every command that
        opens the state reaps."""
        return expiry_due(self._db)

    def named(self, name: str) -> list[FoundWorkspace]:
        """Every workspace called ``name`` (one per workflow at most)."""
        try:
            rows = self._db.execute("SELECT id, workflow, status FROM workspaces WHERE name = ?", (name,)).fetchall()
        except Error:
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
                details = loads(resource)
                found.append({"provider_id": provider_id, "id": effect_id, "kind": kind, "resource": details})
        except (Error, ValueError):
            return None
        return found

    def provenance(self, workspace_id: str) -> object:
        """What the workspace was made from (``engine/provenance.py``: its final runs, its declared ports);
        None when it cannot be read."""
        try:
            row = self._db.execute("SELECT provenance_json FROM workspaces WHERE id = ?", (workspace_id,)).fetchone()
            return None if row is None or row[0] is None else loads(str(row[0]))
        except (Error, ValueError):
            return None


# WorkspaceRecord's fields in order (its to_json), each read from its column; ``resources`` comes from
# the effects journal (``state/workspaces.py:all_workspaces`` reads the same through the records).
_RECORD_COLUMNS = (
    ("id", "id"),
    ("name", "name"),
    ("workflow", "workflow"),
    ("workflow_ctx", "workflow_ctx_json"),
    ("ctx", "ctx_json"),
    ("status", "status"),
    ("resources", None),
    ("error", "error"),
    ("created_at", "created_at"),
    ("updated_at", "updated_at"),
    ("owner", "owner"),
    ("pid", "pid"),
    ("host", "host"),
    ("provenance", "provenance_json"),
    ("expires_at", "expires_at"),
    ("idle_stop", "idle_stop"),
    ("reap_at", "reap_at"),
)


def listed_workspaces(db: Connection) -> list[dict[str, object]]:
    """Every workspace (by name, then workflow) as its record's JSON (``WorkspaceRecord.to_json()``,
    ``resources`` its live effects in journal order), read without the records' classes (``rig
    ls`` answered from the cache). Raises the file's ``Error`` or ``ValueError`` for what is not as rig writes it."""
    stored = [(field, column) for field, column in _RECORD_COLUMNS if column is not None]
    select = ", ".join(f'"{column}"' for _, column in stored)
    rows = db.execute(f"SELECT {select} FROM workspaces ORDER BY name, workflow").fetchall()
    owned: dict[str, list[object]] = {}
    if rows:
        query = (
            "SELECT id, provider_id, kind, status, resource_json, owner_id FROM effects "
            "WHERE owner_kind = 'workspace' AND status IN (?, ?) ORDER BY created_at, id"
        )
        for effect_id, provider_id, kind, status, resource, owner in db.execute(query, _LIVE):
            details = loads(resource) if resource is not None else None
            owned.setdefault(str(owner), []).append(
                {
                    "effect_id": effect_id,
                    "provider_id": provider_id,
                    "kind": kind,
                    "status": status,
                    "resource": details if isinstance(details, dict) else {},
                }
            )
    found: list[dict[str, object]] = []
    for row in rows:
        values = dict(zip((field for field, _ in stored), row, strict=True))
        record: dict[str, object] = {}
        for field, column in _RECORD_COLUMNS:
            if column is None:
                record[field] = owned.get(str(values["id"]), [])
            elif column.endswith("_json"):
                text = values[field]
                record[field] = None if text is None else loads(str(text))
            else:
                record[field] = values[field]
        found.append(record)
    return found


__all__ = ["FoundWorkspace", "WorkspaceFile", "listed_workspaces"]

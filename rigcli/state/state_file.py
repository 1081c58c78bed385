"""A SQLite state file opened for reading without the store: what commands answered from the cache share.

The store (``state/store.py``) checks, migrates and records itself when it opens; a command answered
from the cache (``rigcli/cache/``) reads a few rows and must not pay for that. It reads only a file
as this rig leaves it (no damage marker, the schema this rig writes) and returns None for anything
else, so the caller goes through the store, which says what is wrong. The file is read through
``_sqlite3``, the extension module the ``sqlite3`` package re-exports (the same ``connect``,
``Connection`` and ``Error``): the package adds only default adapters and converters these queries
do not use, and importing ``datetime`` for them cost ~7M instructions.
"""

from __future__ import annotations

import _sqlite3 as sqlite3
import os
import time

from rigcli.state.damage_marker import marked
from rigcli.state.expiry import due_condition
from rigcli.state.schema_version import SCHEMA_VERSION_KEY, STATE_SCHEMA_VERSION

Error = sqlite3.Error


def open_current(path: str) -> sqlite3.Connection | None:
    """``path`` opened for reading when it is a state file of this rig's schema; None otherwise."""
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
    return db


def expiry_due(db: sqlite3.Connection) -> bool:
    """Whether a workspace is due to expire (``state/workspaces.py:due_workspaces``, the same one
    indexed query): then the engine answers, since every command that opens the state reaps."""
    query = f"SELECT 1 FROM workspaces WHERE {due_condition()} LIMIT 1"
    try:
        return db.execute(query, (utc_now(),)).fetchone() is not None
    except sqlite3.Error:
        return True  # unsure: the engine finds out


# What the plan's verdicts read of the run journal, summed up in one scan: a run recorded, finished,
# invalidated or deleted (``rig cache clear``) changes at least one of these. A run is recorded
# with a new rowid (max + 1; only deleting the newest row first lets an id come back, and then the
# row count or the succeeded count differs), and finished ``succeeded`` with ``finished_at`` of now.
# The last column counts runs left ``running``: their verdict changes when their process dies,
# which no column shows, so a journal holding one never matches (``journal_as_read``).
_RUNS_STAMP = (
    "SELECT count(*), max(rowid), total(invalidated), total(status = 'succeeded'), max(finished_at), "
    "total(status = 'running') FROM workflow_node_runs"
)


def runs_stamp(db: sqlite3.Connection) -> list[object] | None:
    """The run journal's stamp (``_RUNS_STAMP``); None when it cannot be read."""
    try:
        row = db.execute(_RUNS_STAMP).fetchone()
    except sqlite3.Error:
        return None
    return None if row is None else list(row)


def journal_as_read(db: sqlite3.Connection, stamp: object) -> bool:
    """Whether the run journal reads as it did when ``stamp`` was taken (``runs_stamp``), with no
    workspace due to expire and no run left ``running``: what an answer remembered from a plan needs
    of the state (``rigcli/cache/gates.py``)."""
    found = runs_stamp(db)
    return found is not None and found[-1] == 0 and found == stamp and not expiry_due(db)


def utc_now() -> str:
    """``records.utc_now()`` (``2026-05-10T00:00:00.000000+00:00``) without importing datetime."""
    seconds, nanoseconds = divmod(time.time_ns(), 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{nanoseconds // 1000:06d}+00:00"


__all__ = ["Error", "expiry_due", "open_current", "runs_stamp", "utc_now"]

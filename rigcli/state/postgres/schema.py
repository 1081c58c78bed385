"""Bring a PostgreSQL schema to rig's current migrations, or refuse it; a shared schema is never moved aside.

The same named migrations as SQLite (migrations.py) run here, each in its own transaction under
a transaction-level advisory lock, so teammates whose first commands race migrate it once.
What differs is the answer to a schema rig cannot use: on a laptop an unusable file is renamed
and replaced, but a team's database holds everybody's state, so rig refuses and says how to move
state it can read elsewhere (``rig state copy``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from rigcli.errors import StateError
from rigcli.state.migrations import MIGRATION_NAMES, MIGRATIONS_KEY
from rigcli.state.postgres.connection import PgConnection, PostgresDialect, import_psycopg, one_line
from rigcli.state.postgres.url import PostgresURL
from rigcli.state.schema_sync import SchemaSyncResult, _apply_pending, _inspect
from rigcli.state.schema_version import SCHEMA_VERSION_KEY, STATE_SCHEMA_VERSION


def _where(url: PostgresURL, schema: str) -> str:
    return f"{url.masked} (schema {schema})"


def stored_metadata(db: PgConnection, keys: Sequence[str]) -> dict[str, str]:
    """The stored JSON texts of those of ``keys`` that are set, in one statement."""
    placeholders = ", ".join("?" * len(keys))
    rows = db.execute(f'SELECT "key", value_json FROM runtime_metadata WHERE "key" IN ({placeholders})', tuple(keys))
    return {str(row[0]): str(row[1]) for row in rows.fetchall()}


def metadata_if_current(db: PgConnection, keys: Sequence[str], url: PostgresURL) -> dict[str, str] | None:
    """``keys``' stored JSON texts, read with the schema's version and history in one statement, when
    the schema is at this rig's migrations; None for anything else (no table yet, another version,
    no access), which the full check, ``sync_postgres_schema``, then classifies.

    The common case of every command on a team's schema: one round trip instead of listing the
    schema's tables (a catalog view, the slowest statement of a fresh session) and reading twice.
    """
    psycopg = import_psycopg(url.masked)
    try:
        found = stored_metadata(db, (SCHEMA_VERSION_KEY, MIGRATIONS_KEY, *keys))
        version = json.loads(found.get(SCHEMA_VERSION_KEY, "null"))
        history = json.loads(found.get(MIGRATIONS_KEY, "null"))
    except (psycopg.Error, ValueError):
        return None  # an autocommit statement that failed leaves the session as it was
    if version != STATE_SCHEMA_VERSION or not isinstance(history, list) or tuple(history) != MIGRATION_NAMES:
        return None
    return {key: found[key] for key in keys if key in found}


def sync_postgres_schema(db: PgConnection, dialect: PostgresDialect, url: PostgresURL) -> SchemaSyncResult:
    """Create or migrate ``dialect.schema``; a newer, foreign or unmigratable schema is refused untouched."""
    psycopg = import_psycopg(url.masked)
    where = _where(url, dialect.schema)
    found = _inspect(db, dialect, transient=psycopg.Error)
    if found.kind == "newer":
        by = f" by rig {found.written_by}" if found.written_by else " by a newer rig"
        msg = (
            f"State database {where} was written{by} (schema version {found.version}); this rig supports "
            f"schema version {STATE_SCHEMA_VERSION} at most. Upgrade rig; the schema was left untouched."
        )
        raise StateError(msg)
    if found.kind == "foreign":
        msg = (
            f"State database {where} is not a rig schema this rig can use ({found.reason}); it was left "
            "untouched (a shared database is never moved aside). Point ?schema= at a new schema, and "
            "move state there with `rig state copy --to URL` from where it can be read."
        )
        raise StateError(msg)
    if found.applied == MIGRATION_NAMES:  # the common case: no migration transaction at all
        return SchemaSyncResult(applied=[], schema_version=STATE_SCHEMA_VERSION)
    try:
        applied = _apply_pending(db, dialect)
    except psycopg.Error as error:
        msg = (
            f"Cannot migrate state database {where} from schema version {found.version or 0}: "
            f"{one_line(error, url)}; it was left as it was (run with a role that may create tables "
            "there, or copy your state to a new schema with `rig state copy`)"
        )
        raise StateError(msg) from None
    return SchemaSyncResult(applied=applied, schema_version=STATE_SCHEMA_VERSION)


__all__ = ["metadata_if_current", "stored_metadata", "sync_postgres_schema"]

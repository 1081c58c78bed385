"""Bring a PostgreSQL schema to rig's current migrations, or refuse it; a shared schema is never moved aside.

The same named migrations as SQLite (migrations.py) run here, each in its own transaction under
a transaction-level advisory lock, so teammates whose first commands race migrate it once.
What differs is the answer to a schema rig cannot use: on a laptop an unusable file is renamed
and replaced, but a team's database holds everybody's state, so rig refuses and says how to move
state it can read elsewhere (``rig state copy``).
"""

from __future__ import annotations

from rigcli.errors import StateError
from rigcli.state.migrations import MIGRATION_NAMES, STATE_SCHEMA_VERSION, SchemaSyncResult, _apply_pending, _inspect
from rigcli.state.postgres.connection import PgConnection, PostgresDialect, import_psycopg, one_line
from rigcli.state.postgres.url import PostgresURL


def _where(url: PostgresURL, schema: str) -> str:
    return f"{url.masked} (schema {schema})"


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


__all__ = ["sync_postgres_schema"]

"""PostgresStateStore: a project's state in one PostgreSQL schema, global fragments in another.

Every query is the SQLite store's (queries.py, runs.py, workspaces.py, provider_storage.py); this
class only supplies connections. Reads use one autocommit connection and never wait for the
writer lock (MVCC). A writer takes its lock (postgres/lock.py) on that same connection, and
while it is held every read and write of this store goes through it: if the connection is lost,
so is the lock, and the next write fails instead of writing unlocked.

A global fragment's runs live in the fragments schema, told apart by their ``workflow`` column
(``fragment:<hash>``), each fragment with a writer lock of its own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Iterator
from contextlib import contextmanager

from rigcli._version import __version__
from rigcli.errors import StateError
from rigcli.records import LockHolder
from rigcli.state.api import StateStatus
from rigcli.state.database import dumps
from rigcli.state.dialect import Connection
from rigcli.state.lock import Cancelled, HolderCallback, in_process
from rigcli.state.migrations import RIG_VERSION_KEY
from rigcli.state.postgres.connection import PgConnection, PostgresDialect, connect, state_error
from rigcli.state.postgres.lock import PROJECT_SCOPE, advisory_lock, current_holder
from rigcli.state.postgres.schema import metadata_if_current, stored_metadata, sync_postgres_schema
from rigcli.state.postgres.url import PostgresURL, parse_url
from rigcli.state.queries import StoreQueries
from rigcli.state.schema_sync import SchemaSyncResult
from rigcli.state.schema_version import SCHEMA_VERSION_KEY, STATE_SCHEMA_VERSION

_UPSERT = (
    'INSERT INTO runtime_metadata ("key", value_json) VALUES (?, ?) '
    'ON CONFLICT("key") DO UPDATE SET value_json = excluded.value_json'
)


class PostgresStateStore(StoreQueries):
    """The state of one scope (the project, or one global fragment) in one PostgreSQL schema."""

    backend = "postgresql"

    def __init__(
        self,
        url: PostgresURL,
        *,
        schema: str,
        scope: str = PROJECT_SCOPE,
        project_dir: str,
        config_path: str | None,
        read_only: bool = False,
    ) -> None:
        super().__init__(url.masked, project_dir=project_dir, config_path=config_path, read_only=read_only)
        self.url = url
        self.schema = schema
        self.scope = scope
        self.pg_dialect = PostgresDialect(schema)
        self.dialect = self.pg_dialect
        self.where = f"{url.masked} (schema {schema})"
        self._pg: PgConnection | None = None
        self._pinned: PgConnection | None = None  # the lock's connection while this process writes

    # -- connections (the StateDatabase hooks) ---------------------------------------------------------
    def sync_schema(self) -> SchemaSyncResult:
        """Create or migrate the schema; one that cannot be used is refused, never moved aside."""
        with self._mutex:
            self._close_pg()
            db = connect(self.url, self.schema)
            wanted = self._location()
            try:
                have = metadata_if_current(db, tuple(wanted), self.url)
                if have is None:
                    result = sync_postgres_schema(db, self.pg_dialect, self.url)
                    have = stored_metadata(db, tuple(wanted))
                else:
                    result = SchemaSyncResult(applied=[], schema_version=STATE_SCHEMA_VERSION)
                self._note_location(db, wanted, have)
            except Exception as error:
                db.close()
                mapped = self._driver_error(error)
                if mapped is None:
                    raise
                raise mapped from None
            self._pg, self.last_sync = db, result
            return result

    def _location(self) -> dict[str, str]:
        """The metadata a sync notes, as stored JSON texts. Last writer's, not a check: clones at
        different paths share this schema (DESIGN §10)."""
        wanted: dict[str, str] = {"project.dir": self.project_dir, RIG_VERSION_KEY: _version()}
        if self.config_path is not None:
            wanted["config.path"] = self.config_path
        return {key: dumps(value) for key, value in wanted.items()}

    @staticmethod
    def _note_location(db: PgConnection, wanted: dict[str, str], have: dict[str, str]) -> None:
        stale = [(key, value) for key, value in wanted.items() if have.get(key) != value]
        if stale:  # cached plans open the store often: write only what changed
            db.execute("BEGIN")
            db.executemany(_UPSERT, stale)
            db.execute("COMMIT")

    def _open_read_only(self) -> None:
        db = connect(self.url, self.schema)
        try:
            row = db.execute('SELECT value_json FROM runtime_metadata WHERE "key" = ?', (SCHEMA_VERSION_KEY,))
            found = row.fetchone()
        except Exception as error:
            db.close()
            raise StateError(f"Cannot read the rig state database {self.where}: {error}") from None
        if found is None or json.loads(found[0]) != STATE_SCHEMA_VERSION:
            db.close()
            raise StateError(
                f"The rig state database {self.where} needs a schema update; run a rig command that writes"
            )
        self._pg = db

    def _connection(self) -> Connection:
        if self._pinned is not None:
            return self._pinned
        if self._pg is None:
            if self.read_only:
                self._open_read_only()
            else:
                self.sync_schema()
        assert self._pg is not None
        return self._pg

    def _rollback(self, db: Connection) -> None:
        if isinstance(db, PgConnection) and not db.broken and db.in_transaction:
            # The connection died mid-transaction: the server rolled it back.
            with contextlib.suppress(Exception):
                db.execute("ROLLBACK")

    def _driver_error(self, error: Exception) -> StateError | None:
        return state_error(error, self.url, doing=f"schema {self.schema}")

    def _close_pg(self) -> None:
        if self._pg is not None:
            self._pg.close()
            self._pg = None

    def close(self) -> None:
        with self._mutex:
            self._close_pg()

    # -- the writer lock -----------------------------------------------------------------------------
    @contextmanager
    def lock(
        self,
        command: str,
        *,
        wait: bool = True,
        on_wait: HolderCallback | None = None,
        on_takeover: HolderCallback | None = None,
        cancelled: Cancelled | None = None,
    ) -> Iterator[LockHolder]:
        """Hold this schema's (or fragment's) session advisory lock for the ``with`` body."""
        key = f"postgresql:{self.url.conninfo}#{self.schema}#{self.scope}"
        with (
            in_process(self.where, wait=wait, on_wait=on_wait, key=key, cancelled=cancelled) as (entry, waited),
            advisory_lock(
                lambda: self._borrow(command),
                done=self._hand_back,
                where=self.where,
                schema=self.schema,
                scope=self.scope,
                command=command,
                wait=wait,
                on_wait=on_wait,
                on_takeover=on_takeover,
                cancelled=cancelled,
                waited=waited,
            ) as (connection, mine),
        ):
            entry.holder = mine
            with self._mutex:
                self._pinned = connection
            try:
                yield mine
            finally:
                with self._mutex:
                    self._pinned = None

    def _borrow(self, command: str) -> PgConnection:
        """The lock's connection: the one this process already reads through, or a new one.

        Writes go through the lock's connection anyway (it is pinned while held), so one
        connection serves both: a writer costs the server one session, and no second connect."""
        with self._mutex:
            db, self._pg = self._pg, None
        if db is not None and not db.broken and not db.in_transaction:
            return db
        if db is not None:
            db.close()
        return connect(self.url, self.schema, application_name=f"rig {command}"[:63])

    def _hand_back(self, db: PgConnection) -> None:
        """After the lock: the connection serves reads again, unless it broke or another took its place."""
        with self._mutex:
            if self._pg is None and not db.broken:
                self._pg = db
                return
        db.close()

    # -- what doctor and ls show ---------------------------------------------------------------------------
    def status(self) -> StateStatus:
        """Server version, schema version and lock holder, on a short connection of its own."""
        db = connect(self.url, self.schema)
        try:
            exists = "runtime_metadata" in self.dialect.list_tables(db)
            version: int | None = None
            holder: LockHolder | None = None
            if exists:
                row = db.execute('SELECT value_json FROM runtime_metadata WHERE "key" = ?', (SCHEMA_VERSION_KEY,))
                found = row.fetchone()
                value = None if found is None else json.loads(found[0])
                version = value if isinstance(value, int) else None
                holder = current_holder(db, self.schema, self.scope)
            return StateStatus(self.backend, self.url.masked, exists, version, db.server_version, holder)
        except Exception as error:
            mapped = self._driver_error(error)
            if mapped is None:
                raise
            raise mapped from None
        finally:
            db.close()

    def fragment_store(self, fragment_hash: str) -> PostgresStateStore:
        """A global fragment's store: the same database, the fragments schema, a lock of its own."""
        return PostgresStateStore(
            self.url,
            schema=self.url.fragments_schema,
            scope=fragment_hash,
            project_dir=self.project_dir,
            config_path=None,
            read_only=self.read_only,
        )

    def __repr__(self) -> str:
        return f"PostgresStateStore({self.where!r}, scope={self.scope!r})"


def _version() -> str:
    return __version__


def create_postgres_store(
    url: str,
    *,
    project_dir: str,
    config_path: str | None = None,
    read_only: bool = False,
    connect_timeout: int | None = None,
) -> PostgresStateStore:
    """The project store named by a ``postgresql://`` URL; nothing is connected yet.

    ``connect_timeout`` (seconds) replaces rig's default bound when the URL sets none.
    """
    parsed = parse_url(url)
    if connect_timeout is not None:
        parsed = dataclasses.replace(parsed, connect_timeout=str(connect_timeout))
    return PostgresStateStore(
        parsed, schema=parsed.schema, project_dir=project_dir, config_path=config_path, read_only=read_only
    )


__all__ = ["PostgresStateStore", "create_postgres_store"]

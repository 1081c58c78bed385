"""The SQLite connection behind a state store: opened on first use, short write transactions."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from rigcli._version import __version__
from rigcli.errors import StateError
from rigcli.jsonutil import JsonValue
from rigcli.masking import mask_text, mask_value
from rigcli.state.migrations import (
    RIG_VERSION_KEY,
    SCHEMA_VERSION_KEY,
    STATE_SCHEMA_VERSION,
    SchemaSyncResult,
    sync_schema_file,
)

# Writers are serialised by the state lock, so waiting here only covers readers' schema
# bookkeeping and other rig processes' short commits.
BUSY_TIMEOUT_SECONDS = 15.0

_Self = TypeVar("_Self", bound="StateDatabase")
# A row as sqlite3 returns it: each column's type comes from the schema, which Python cannot see.
Row = tuple[Any, ...]


def dumps(value: JsonValue) -> str:
    """A JSON column's text; every stored JSON value passes here, so secrets are masked here."""
    return json.dumps(mask_value(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def stored_text(value: str | None) -> str | None:
    """A free-text column's value (an error message) with secrets masked."""
    return None if value is None else mask_text(value)


def _connect(path: str) -> sqlite3.Connection:
    # isolation_level=None: the stdlib must not open transactions behind our back; every write
    # goes through StateDatabase._write's BEGIN IMMEDIATE (taking the write lock up front avoids
    # SQLITE_BUSY on read-to-write upgrades). check_same_thread=False: parallel branches write
    # from worker threads, serialised by StateDatabase._mutex.
    return sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False)


class StateDatabase:
    """One connection per store, shared by threads under a lock; reads never take the state lock."""

    def __init__(
        self,
        path: str,
        *,
        project_dir: str,
        config_path: str | None,
        read_only: bool = False,
        move_aside: bool = True,
    ) -> None:
        self.path = path
        self.read_only = read_only
        self.project_dir = project_dir
        self.config_path = config_path
        self.move_aside = move_aside  # False for a file the user named: refuse a foreign one, never rename it
        self.last_sync: SchemaSyncResult | None = None
        self._mutex = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._deferred = False  # an empty in-memory stand-in until the first write creates the file

    def sync_schema(self) -> SchemaSyncResult:
        """Create or migrate the database (moving an unusable one aside); safe to call again.

        When neither the file nor its directory exists yet, nothing is created: reads see an
        empty database, and the first write creates the directories and the file.
        """
        with self._mutex:
            if self._db is not None:
                self._db.close()
                self._db = None
            self._deferred = not os.path.exists(self.path) and not os.path.isdir(os.path.dirname(self.path))
            try:
                if self._deferred:
                    db, result = sync_schema_file(":memory:", _connect)
                else:
                    db, result = sync_schema_file(self.path, _connect, move_aside=self.move_aside)
            except sqlite3.OperationalError as error:
                msg = f"Cannot open rig state database {self.path}: {error}"
                raise StateError(msg) from error
            self._db = db
            self.last_sync = result
            wanted: dict[str, JsonValue] = {"project.dir": self.project_dir, RIG_VERSION_KEY: __version__}
            if self.config_path is not None:
                wanted["config.path"] = self.config_path
            stale = [
                (key, dumps(value))
                for key, value in wanted.items()
                if db.execute('SELECT value_json FROM runtime_metadata WHERE "key" = ?', (key,)).fetchone()
                != (dumps(value),)
            ]
            upsert = (
                'INSERT INTO runtime_metadata ("key", value_json) VALUES (?, ?) '
                'ON CONFLICT("key") DO UPDATE SET value_json = excluded.value_json'
            )
            if stale and self._deferred:
                db.executemany(upsert, stale)  # the stand-in only: writing here must not create the file
            elif stale:  # cached plans open the store often: write only what changed
                with self._write() as tx:
                    tx.executemany(upsert, stale)
            return result

    def _materialize(self) -> None:
        """Replace the in-memory stand-in with the real file (another rig may have made it meanwhile)."""
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.sync_schema()

    def close(self) -> None:
        with self._mutex:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            if self.read_only:
                self._open_read_only()
            else:
                self.sync_schema()
        assert self._db is not None
        return self._db

    def _open_read_only(self) -> None:
        """Open without creating, migrating or moving anything (for completion and other peeks)."""
        try:
            db = sqlite3.connect(
                f"file:{self.path}?mode=ro",
                uri=True,
                timeout=BUSY_TIMEOUT_SECONDS,
                isolation_level=None,
                check_same_thread=False,
            )
            query = 'SELECT value_json FROM runtime_metadata WHERE "key" = ?'
            row = db.execute(query, (SCHEMA_VERSION_KEY,)).fetchone()
        except sqlite3.Error as error:
            raise StateError(f"Cannot read the rig state database {self.path}: {error}") from error
        if row is None or json.loads(row[0]) != STATE_SCHEMA_VERSION:
            db.close()
            raise StateError(f"The rig state database {self.path} needs a schema update; run a rig command that writes")
        self._db = db

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._mutex:
            if self._deferred and os.path.exists(self.path):
                self._materialize()
            try:
                yield self._connection()
            except sqlite3.OperationalError as error:
                raise self._state_error(error) from error

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One short write transaction; never hold it across a handler or a provider call."""
        if self.read_only:
            raise StateError(f"State database {self.path} was opened read-only")
        with self._mutex:
            if self._deferred:
                self._materialize()
            db = self._connection()
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    yield db
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as error:
                raise self._state_error(error) from error

    def _state_error(self, error: sqlite3.Error) -> StateError:
        return StateError(f"State database {self.path}: {error}")

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["BUSY_TIMEOUT_SECONDS", "Row", "StateDatabase", "dumps"]

"""The connection behind a state store: opened on first use, short write transactions.

``_read()`` and ``_write()`` are the contract every state module writes SQL against: they yield
a ``dialect.Connection`` (``execute``/``executemany`` with ``?`` placeholders, cursors with
``fetchone``/``fetchall``/``rowcount``). This class implements it over SQLite;
``postgres/store.py`` overrides the connection hooks (``_connection``, ``_open_read_only``,
``_rollback``, ``_driver_error``, ``sync_schema``, ``close``) and nothing else, so runs,
workspaces, provider storage and effects share one set of queries on both backends.
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # the extension module itself: see state_file.py
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

from rigcli._version import __version__
from rigcli.errors import DamagedStateError, StateError
from rigcli.jsonutil import JsonValue
from rigcli.masking import mask_text, mask_value
from rigcli.state.damage import check_file, damaged, is_damage, marked, problems, summary, unmark
from rigcli.state.dialect import SQLITE, Connection, Dialect, Row
from rigcli.state.migrations import RIG_VERSION_KEY
from rigcli.state.reserve import before_write, room_for_a_run
from rigcli.state.schema_sync import SchemaSyncResult, sync_schema_file
from rigcli.state.schema_version import SCHEMA_VERSION_KEY, STATE_SCHEMA_VERSION

# Writers are serialised by the state lock, so waiting here only covers readers' schema
# bookkeeping and other rig processes' short commits.
BUSY_TIMEOUT_SECONDS = 15.0

# Tests only: RIG_TEST_PAUSE_AFTER_WRITES=N makes this process stop for good right after its N-th
# committed write transaction (an entry of the run or effects journal, a workspace record),
# having written RIG_TEST_PAUSE_FILE, so a test can SIGKILL it between exactly those two entries
# (tests/crash/test_replace_steps.py). Read once at import; unset, it costs nothing.
_PAUSE_AFTER = int(os.environ.get("RIG_TEST_PAUSE_AFTER_WRITES") or 0)
_writes = 0


def _after_commit() -> None:
    global _writes
    _writes += 1
    if _writes == _PAUSE_AFTER:
        with open(os.environ["RIG_TEST_PAUSE_FILE"], "w", encoding="utf-8") as marker:
            marker.write(f"{_writes}\n")
        while True:
            time.sleep(3600)


_Self = TypeVar("_Self", bound="StateDatabase")


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

    dialect: Dialect = SQLITE
    backend = "sqlite"  # "sqlite" | "postgresql", as `rig ls --json` and `rig doctor` show it

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
        self._damage: str | None = None  # SQLite found the file damaged: nothing more is written to it
        self._checked = False  # the file passed quick_check in this process, before its first write

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
            if not self._deferred:
                self._refuse_if_marked()
            try:
                if self._deferred:
                    db, result = sync_schema_file(":memory:", _connect)
                else:
                    db, result = sync_schema_file(self.path, _connect, move_aside=self.move_aside)
            except DamagedStateError as error:
                self._damage = error.reason
                raise
            except sqlite3.DatabaseError as error:
                if is_damage(error):
                    raise self._damaged(str(error)) from error
                if not isinstance(error, sqlite3.OperationalError):
                    raise
                raise self._unopenable(error) from error
            try:
                return self._finish_sync(db, result)
            except sqlite3.DatabaseError as error:
                if not is_damage(error):
                    raise
                raise self._damaged(str(error)) from error

    def _unopenable(self, error: sqlite3.OperationalError) -> StateError:
        """The one-line error for a database SQLite would not open (not damaged: locked, read-only...)."""
        msg = f"Cannot open rig state database {self.path}: {error}"
        if not os.access(os.path.dirname(self.path) or ".", os.W_OK):
            # A WAL database needs its -shm file beside it, so even a read opens for writing.
            msg += f" ({os.path.dirname(self.path)} is read-only: rig needs to write there, even to plan)"
        return StateError(msg)

    def _refuse_if_marked(self) -> None:
        """A rig found this file damaged before: check it again, and refuse it while it still is."""
        reason = self._damage or marked(self.path)
        if reason is None:
            return
        found = check_file(self.path, values=True)  # a damaged value is what some rigs found
        if found:
            raise self._damaged(summary(found))
        unmark(self.path)  # it was replaced or repaired since
        self._damage = None

    def _damaged(self, reason: str) -> DamagedStateError:
        """From now on this store writes nothing (and later rigs check the file first)."""
        self._damage = reason
        return damaged(self.path, reason)

    def _check_before_first_write(self, db: Connection) -> None:
        """Damage no query has met yet must be found before rig writes anything into the file."""
        if self._checked or self._deferred or self.dialect is not SQLITE:
            return
        assert isinstance(db, sqlite3.Connection)
        found = problems(db)
        if found:
            raise self._damaged(summary(found))
        self._checked = True

    def _finish_sync(self, db: sqlite3.Connection, result: SchemaSyncResult) -> SchemaSyncResult:
        with self._mutex:
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

    def _connection(self) -> Connection:
        if self._db is None:
            if self.read_only:
                self._open_read_only()
            else:
                self.sync_schema()
        assert self._db is not None
        return self._db

    def _open_read_only(self) -> None:
        """Open without creating, migrating or moving anything (for completion and other peeks)."""
        self._refuse_if_marked()
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
            if is_damage(error):
                raise self._damaged(str(error)) from error
            raise StateError(f"Cannot read the rig state database {self.path}: {error}") from error
        if row is None or json.loads(row[0]) != STATE_SCHEMA_VERSION:
            db.close()
            raise StateError(f"The rig state database {self.path} needs a schema update; run a rig command that writes")
        self._db = db

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self._mutex:
            if self._deferred and os.path.exists(self.path):
                self._materialize()
            try:
                yield self._connection()
            except Exception as error:
                mapped = self._driver_error(error)
                if mapped is None:
                    raise
                raise mapped from error

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """One short write transaction; never hold it across a handler or a provider call."""
        if self.read_only:
            raise StateError(f"State database {self.path} was opened read-only")
        if self._damage is not None:
            raise DamagedStateError(self.path, self._damage)
        with self._mutex:
            if self._deferred:
                self._materialize()
            if self.dialect is SQLITE:
                before_write(self.path)  # room for the journal's last writes on a full disk (reserve.py)
            try:
                db = self._connection()
                self._check_before_first_write(db)
                self.dialect.begin_write(db)
                try:
                    yield db
                    db.execute("COMMIT")
                except BaseException:
                    self._rollback(db)
                    raise
            except Exception as error:
                mapped = self._driver_error(error)
                if mapped is None:
                    raise
                raise mapped from error
        if _PAUSE_AFTER:
            _after_commit()

    def _require_room(self) -> None:
        """Before a run starts: refuse unless the journal could still finish it on a full disk."""
        if self.dialect is SQLITE and not self.read_only and not room_for_a_run(self.path):
            msg = f"Not enough free disk space to record a run in {self.path}; free some space and run again"
            raise StateError(msg)

    def _rollback(self, db: Connection) -> None:
        assert isinstance(db, sqlite3.Connection)
        if db.in_transaction:
            db.execute("ROLLBACK")

    def _driver_error(self, error: Exception) -> StateError | None:
        """The one-line StateError for a driver error, or None for anything else (re-raised as is)."""
        if isinstance(error, DamagedStateError):
            return None
        if is_damage(error):
            return self._damaged(str(error))
        if isinstance(error, (json.JSONDecodeError, UnicodeDecodeError)):
            # rig stores only JSON it wrote itself: a value that does not parse is a damaged cell
            # (an overwritten overflow page) that SQLite's page checks may not see.
            return self._damaged(f"a stored value does not parse: {error}")
        if isinstance(error, sqlite3.OperationalError):
            return StateError(f"State database {self.path}: {error}")
        return None

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["BUSY_TIMEOUT_SECONDS", "Row", "StateDatabase", "dumps"]

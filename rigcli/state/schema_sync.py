"""Bringing a state database to this rig's schema: what it is (ours, older, newer, foreign, empty), applying
the pending named migrations (``migrations.py``), and what a SQLite file that cannot be migrated becomes.

Classifying a database and applying what is pending run unchanged on SQLite and PostgreSQL through
the dialect seam (dialect.py). What happens to a database that cannot be migrated is the backend's
call: a SQLite file in rig's own place is moved aside (here), a shared PostgreSQL schema never is
(postgres/schema.py).
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # the extension module itself: see state_file.py
import json
import os
import time
from collections.abc import Callable
from dataclasses import field

from rigcli.errors import StateError
from rigcli.speed.records import lazy_dataclass
from rigcli.state.damage import damaged, is_damage, problems, summary
from rigcli.state.dialect import SQLITE, Connection, Dialect
from rigcli.state.migrations import MIGRATION_NAMES, MIGRATIONS, MIGRATIONS_KEY, RIG_VERSION_KEY
from rigcli.state.schema_version import SCHEMA_VERSION_KEY, STATE_SCHEMA_VERSION


@lazy_dataclass(frozen=True)
class SchemaSyncResult:
    """What bringing a state database to our schema did."""

    applied: list[str]  # names of the migrations this call applied, in order
    schema_version: int
    has_data_loss: bool = False  # True when an unusable database was moved aside
    warnings: list[str] = field(default_factory=list)
    backup_path: str | None = None


@lazy_dataclass(frozen=True)
class _Found:
    """What an existing database turned out to be (ours, newer, foreign or empty)."""

    kind: str  # "known" (ours, at or below our version) | "newer" | "foreign"
    applied: tuple[str, ...] = ()
    version: int | None = None
    written_by: str | None = None
    reason: str = ""
    fresh: bool = False  # no tables at all


def _is_transient(error: sqlite3.Error) -> bool:
    """Errors about access, not content: the file may be fine, so it must never be moved aside."""
    text = str(error).lower()
    return isinstance(error, sqlite3.OperationalError) and any(
        word in text for word in ("locked", "busy", "unable to open", "readonly", "disk i/o", "full")
    )


def _metadata(db: Connection, key: str) -> object:
    row = db.execute('SELECT value_json FROM runtime_metadata WHERE "key" = ?', (key,)).fetchone()
    return None if row is None else json.loads(row[0])


def _inspect(db: Connection, dialect: Dialect = SQLITE, transient: type[Exception] | None = None) -> _Found:
    """Classify a database without writing to it (a newer one must stay byte-identical).

    ``transient``: the driver's error type for access problems, which are raised, never
    taken as a sign that the database is not ours (SQLite's are told apart by message).
    """
    try:
        tables = dialect.list_tables(db)
        if not tables:
            return _Found("known", fresh=True)
        if "runtime_metadata" not in tables:
            return _Found("foreign", reason=f"unrecognised schema (tables: {', '.join(tables)})")
        # One statement, so one snapshot: another rig may be migrating meanwhile, and a version
        # read before its commit with a history read after it would look foreign.
        keys = (SCHEMA_VERSION_KEY, MIGRATIONS_KEY, RIG_VERSION_KEY)
        found = dict(db.execute('SELECT "key", value_json FROM runtime_metadata WHERE "key" IN (?, ?, ?)', keys))
        version, applied, written_by = (json.loads(found[key]) if key in found else None for key in keys)
    except (sqlite3.Error, ValueError) as error:
        if isinstance(error, sqlite3.Error) and (_is_transient(error) or is_damage(error)):
            raise  # a damaged rig database is refused, never moved aside for an empty one (damage.py)
        return _Found("foreign", reason=f"unreadable database ({error})")
    except Exception as error:
        if transient is not None and isinstance(error, transient):
            raise
        return _Found("foreign", reason=f"unreadable database ({error})")
    written = written_by if isinstance(written_by, str) else None
    # Checked first and on its own: a future rig may record its history differently, and its
    # data must never be moved aside by an older rig.
    if isinstance(version, int) and not isinstance(version, bool) and version > STATE_SCHEMA_VERSION:
        return _Found("newer", version=version, written_by=written)
    names = tuple(applied) if isinstance(applied, list) else None
    if names is None or names != MIGRATION_NAMES[: len(names)] or version != len(names):
        return _Found("foreign", reason=f"unrecognised schema history (schema version {version!r})")
    return _Found("known", applied=names, version=version, written_by=written)


def _applied(db: Connection, dialect: Dialect = SQLITE) -> tuple[str, ...]:
    if "runtime_metadata" not in dialect.list_tables(db):
        return ()
    value = _metadata(db, MIGRATIONS_KEY)
    return tuple(value) if isinstance(value, list) else ()


def _apply_pending(db: Connection, dialect: Dialect = SQLITE) -> list[str]:
    """Every pending migration in one transaction: a rig migrating at the same time waits, then
    finds nothing left to do; a failure or a crash leaves the schema as it was before."""
    applied_now: list[str] = []
    if _applied(db, dialect) == MIGRATION_NAMES:
        return applied_now  # nothing pending: no write transaction, so opening the state never waits for a writer
    dialect.begin_migration(db)
    try:
        done = list(_applied(db, dialect))  # re-read inside the write transaction: another rig may have migrated
        for fn in MIGRATIONS:
            if fn.__name__ in done:
                continue
            fn(db)
            done.append(fn.__name__)
            for key, value in ((MIGRATIONS_KEY, done), (SCHEMA_VERSION_KEY, len(done))):
                db.execute(
                    'INSERT INTO runtime_metadata ("key", value_json) VALUES (?, ?) '
                    'ON CONFLICT("key") DO UPDATE SET value_json = excluded.value_json',
                    (key, json.dumps(value)),
                )
            applied_now.append(fn.__name__)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return applied_now


def _move_aside(path: str) -> str:
    """Rename the database and its sidecar files to ``<path>.backup-<UTC time>``; return the new path."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    backup, attempt = f"{path}.backup-{stamp}", 1
    while os.path.exists(backup):
        backup, attempt = f"{path}.backup-{stamp}-{attempt}", attempt + 1
    for suffix in ("-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.replace(path + suffix, backup + suffix)
    os.replace(path, backup)
    return backup


def _would_write(db: sqlite3.Connection) -> bool:
    """Opening will write: a migration is pending, or the file is not in WAL mode yet."""
    if [fn.__name__ for fn in MIGRATIONS] != list(_applied(db)):
        return True
    return str(db.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal"


WAL_SWITCH_SECONDS = 15.0


def _use_wal(db: sqlite3.Connection) -> None:
    # Only once the file is known to be ours: switching modes rewrites the database header.
    # The switch needs the file to itself and SQLite reports "locked" at once, without waiting
    # out the busy timeout, when two rig processes open a new project together; so retry.
    deadline = time.monotonic() + WAL_SWITCH_SECONDS
    while True:
        try:
            if str(db.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                db.execute("PRAGMA journal_mode = WAL")
            break
        except sqlite3.OperationalError as error:
            if not _is_transient(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
    db.execute("PRAGMA synchronous = NORMAL")  # in WAL mode still durable across process crashes


SQLITE_HEADER = b"SQLite format 3\x00"


def _refuse_non_sqlite(path: str) -> None:
    """A file that is not SQLite at all is somebody's data (a config, notes): never open it as ours."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return
    except IsADirectoryError:
        raise StateError(f"State path {path} is a directory, not a rig state database") from None
    except OSError:
        return  # unreadable: SQLite reports it, and nothing is moved for an access error
    if head and head != SQLITE_HEADER:  # an empty file holds nothing to lose: it becomes the database
        msg = (
            f"{path} is not a SQLite database, so not a rig state database; it was left untouched. "
            "Pass --state with another path, or move the file away."
        )
        raise StateError(msg)


def sync_schema_file(
    path: str, connect: Callable[[str], sqlite3.Connection], *, move_aside: bool = True
) -> tuple[sqlite3.Connection, SchemaSyncResult]:
    """Open ``path`` and bring it to the current schema.

    A SQLite database of an unknown or unmigratable schema is moved aside only when
    ``move_aside`` (rig's own locations); a file the user named is refused and left untouched.
    """
    _refuse_non_sqlite(path)
    db = connect(path)
    found = _inspect(db)
    if found.kind == "foreign" and not move_aside:
        db.close()
        msg = (
            f"{path} is not a rig state database ({found.reason}); it was left untouched. "
            "Pass --state with another path."
        )
        raise StateError(msg)
    if found.kind == "newer":
        db.close()
        by = f" by rig {found.written_by}" if found.written_by else " by a newer rig"
        msg = (
            f"State database {path} was written{by} (schema version {found.version}); this rig "
            f"supports schema version {STATE_SCHEMA_VERSION} at most. Upgrade rig, or pass --state "
            "to use another file; the database was left untouched."
        )
        raise StateError(msg)
    reason = found.reason if found.kind == "foreign" else ""
    if not reason and not found.fresh and _would_write(db):
        damage = problems(db)  # a migration or the switch to WAL writes: never into a damaged file
        if damage:
            db.close()
            raise damaged(path, summary(damage))
    if not reason:
        _use_wal(db)
        try:
            return db, SchemaSyncResult(applied=_apply_pending(db), schema_version=STATE_SCHEMA_VERSION)
        except sqlite3.Error as error:
            if is_damage(error):
                db.close()
                raise
            if found.fresh or _is_transient(error):
                db.close()
                msg = f"Cannot migrate rig state database {path}: {error}"
                raise StateError(msg) from error
            reason = f"migration from schema version {found.version} failed ({error})"
            if not move_aside:
                db.close()
                msg = f"Cannot migrate rig state database {path}: {reason}; it was not moved aside"
                raise StateError(msg) from error
    db.close()
    try:
        backup = _move_aside(path)
    except OSError as error:
        msg = f"Cannot move unusable rig state database {path} aside ({reason}): {error}"
        raise StateError(msg) from error
    db = connect(path)
    _use_wal(db)
    warning = f"Reset rig state database {path}: {reason}; the old database was moved to {backup}"
    return db, SchemaSyncResult(
        applied=_apply_pending(db),
        schema_version=STATE_SCHEMA_VERSION,
        has_data_loss=True,
        warnings=[warning],
        backup_path=backup,
    )


__all__ = ["SchemaSyncResult", "sync_schema_file"]

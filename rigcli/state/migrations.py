"""Named, append-only schema migrations and the rules for databases we cannot migrate.

Never edit or reorder a shipped migration: a database records the names it has applied
(``state.migrations``) and their count (``state.schemaVersion``), and every migration runs on
fresh databases too. Each one is explicit DDL in its own transaction; this module never
imports tables.py, whose classes describe only the latest schema.

The migrations are portable DDL (TEXT, INTEGER, BOOLEAN, named indexes, ``ALTER TABLE ADD
COLUMN``) and run unchanged on SQLite and PostgreSQL through the dialect seam (dialect.py);
classifying a database and applying what is pending is shared too. What happens to a database
that cannot be migrated is the backend's call: a SQLite file in rig's own place is moved aside
(below), a shared PostgreSQL schema never is (postgres/schema.py).
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
from rigcli.state.schema_version import SCHEMA_VERSION_KEY, STATE_SCHEMA_VERSION

Migration = Callable[[Connection], None]

MIGRATIONS: list[Migration] = []
MIGRATIONS_KEY = "state.migrations"
RIG_VERSION_KEY = "rig.version"


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_initial(db: Connection) -> None:
    db.execute(
        """CREATE TABLE runtime_metadata (
            "key" TEXT NOT NULL PRIMARY KEY,
            value_json TEXT NOT NULL
        )"""
    )
    db.execute(
        """CREATE TABLE workflow_node_runs (
            id TEXT NOT NULL PRIMARY KEY,
            workflow TEXT NOT NULL,
            node_path TEXT NOT NULL,
            node_name TEXT NOT NULL,
            node_kind TEXT NOT NULL,
            node_key TEXT NOT NULL,
            provider_fingerprint TEXT NOT NULL,
            upstream_run_ids_json TEXT NOT NULL,
            output_json TEXT,
            artifacts_json TEXT NOT NULL,
            status TEXT NOT NULL,
            invalidated BOOLEAN NOT NULL,
            created_at TEXT NOT NULL,
            finished_at TEXT,
            error TEXT,
            pid INTEGER,
            host TEXT
        )"""
    )
    db.execute(
        "CREATE INDEX ix_workflow_node_runs_workflow_path ON workflow_node_runs (workflow, node_path, created_at)"
    )
    db.execute("CREATE INDEX ix_workflow_node_runs_status ON workflow_node_runs (status)")
    db.execute(
        """CREATE TABLE workspaces (
            id TEXT NOT NULL PRIMARY KEY,
            name TEXT NOT NULL,
            workflow TEXT NOT NULL,
            workflow_ctx_json TEXT NOT NULL,
            ctx_json TEXT NOT NULL,
            status TEXT NOT NULL,
            resources_json TEXT NOT NULL,
            error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            CONSTRAINT uq_workspaces_workflow_name UNIQUE (workflow, name)
        )"""
    )
    db.execute(
        """CREATE TABLE workflow_applies (
            workflow TEXT NOT NULL PRIMARY KEY,
            provider_fingerprint TEXT NOT NULL,
            cached_node_count INTEGER NOT NULL,
            node_count INTEGER NOT NULL,
            applied_at TEXT NOT NULL
        )"""
    )
    db.execute(
        """CREATE TABLE provider_state (
            provider_id TEXT NOT NULL,
            "key" TEXT NOT NULL,
            value_json TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (provider_id, "key")
        )"""
    )


@migration
def m002_effects_journal(db: Connection) -> None:
    """Effects on the outside world (machines, containers, images, snapshots), journaled before they happen."""
    db.execute(
        """CREATE TABLE effects (
            id TEXT NOT NULL PRIMARY KEY,
            provider_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            resource_json TEXT NOT NULL,
            owner_kind TEXT,
            owner_id TEXT,
            error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            pid INTEGER,
            host TEXT
        )"""
    )
    db.execute("CREATE INDEX ix_effects_status ON effects (status)")
    db.execute("CREATE INDEX ix_effects_owner ON effects (owner_kind, owner_id)")


@migration
def m003_workspace_owner(db: Connection) -> None:
    """Who made each workspace (``user@host``): a team shares one state."""
    db.execute("ALTER TABLE workspaces ADD COLUMN owner TEXT")


@migration
def m004_workspace_creator(db: Connection) -> None:
    """The rig process creating a workspace (``pid`` on ``host``): a create no longer holds the
    state lock, so ``rm`` must tell a create still running from one that was cut off."""
    db.execute("ALTER TABLE workspaces ADD COLUMN pid INTEGER")
    db.execute("ALTER TABLE workspaces ADD COLUMN host TEXT")


@migration
def m005_run_history(db: Connection) -> None:
    """Every apply recorded (``rig runs``), its node runs grouped under it, their ``step.metadata``,
    and each node run's output kept, bounded (``rig logs``)."""
    db.execute("ALTER TABLE workflow_node_runs ADD COLUMN apply_id TEXT")
    db.execute("ALTER TABLE workflow_node_runs ADD COLUMN metadata_json TEXT")
    db.execute("CREATE INDEX ix_workflow_node_runs_apply ON workflow_node_runs (apply_id)")
    db.execute(
        """CREATE TABLE apply_runs (
            id TEXT NOT NULL PRIMARY KEY,
            workflow TEXT NOT NULL,
            command TEXT NOT NULL,
            status TEXT NOT NULL,
            owner TEXT,
            pid INTEGER,
            host TEXT,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            node_count INTEGER NOT NULL,
            cached_node_count INTEGER,
            ran INTEGER,
            nodes_json TEXT NOT NULL,
            error TEXT
        )"""
    )
    db.execute("CREATE INDEX ix_apply_runs_workflow ON apply_runs (workflow, started_at)")
    db.execute(
        """CREATE TABLE node_run_output (
            run_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            streams_json TEXT NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        )"""
    )


@migration
def m006_workspace_provenance_and_expiry(db: Connection) -> None:
    """What a workspace was made from (the final runs it was forked from: ``rig diff``, outdated in
    ``rig ls``), when it expires, after how long idle it is stopped, and when the reaper looks next
    (indexed: every command asks whether anything is due)."""
    db.execute("ALTER TABLE workspaces ADD COLUMN provenance_json TEXT")
    db.execute("ALTER TABLE workspaces ADD COLUMN expires_at TEXT")
    db.execute("ALTER TABLE workspaces ADD COLUMN idle_stop INTEGER")
    db.execute("ALTER TABLE workspaces ADD COLUMN reap_at TEXT")
    db.execute("CREATE INDEX ix_workspaces_reap_at ON workspaces (reap_at)")


@migration
def m007_fingerprint_parts(db: Connection) -> None:
    """The parts of each cache key and provider fingerprint a run was recorded with, hashed one by
    one, so a later plan can say which part changed (``handler install (tools.py)``). Keyed by
    the fingerprint itself: runs with the same key share one row."""
    db.execute(
        """CREATE TABLE fingerprint_parts (
            fingerprint TEXT NOT NULL PRIMARY KEY,
            parts_json TEXT NOT NULL,
            created_at TEXT NOT NULL
        )"""
    )


# Every table that holds the state's data, in the order a copy fills them; a migration that adds a
# table adds it here, so that `state copy` and `state recover` carry it (a test compares it with the schema).
DATA_TABLES: tuple[str, ...] = (
    "runtime_metadata",
    "workflow_node_runs",
    "workspaces",
    "workflow_applies",
    "provider_state",
    "effects",
    "apply_runs",
    "node_run_output",
    "fingerprint_parts",
)
MIGRATION_NAMES: tuple[str, ...] = tuple(fn.__name__ for fn in MIGRATIONS)
if len(MIGRATIONS) != STATE_SCHEMA_VERSION:  # a migration added without raising schema_version.py's number
    raise RuntimeError(f"{len(MIGRATIONS)} migrations, but schema_version.py says {STATE_SCHEMA_VERSION}")


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


__all__ = [
    "DATA_TABLES",
    "MIGRATIONS",
    "MIGRATION_NAMES",
    "SCHEMA_VERSION_KEY",
    "STATE_SCHEMA_VERSION",
    "Migration",
    "SchemaSyncResult",
    "m001_initial",
    "migration",
    "sync_schema_file",
]

"""Named, append-only schema migrations and the rules for databases we cannot migrate.

Never edit or reorder a shipped migration: a database records the names it has applied
(``state.migrations``) and their count (``state.schemaVersion``), and every migration runs on
fresh databases too. Each one is explicit DDL in its own transaction; this module never
imports tables.py, whose classes describe only the latest schema.

The migrations are portable DDL (TEXT, INTEGER, BOOLEAN, named indexes, ``ALTER TABLE ADD
COLUMN``) and run unchanged on SQLite and PostgreSQL through the dialect seam (dialect.py);
``schema_sync.py`` classifies a database and applies what is pending.
"""

from __future__ import annotations

from collections.abc import Callable

from rigcli.state.dialect import Connection
from rigcli.state.schema_version import STATE_SCHEMA_VERSION

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


@migration
def m008_workspace_history(db: Connection) -> None:
    """Workspace history beside the applies: a fork's create hook, a removal, an operation, a stop
    or a start is an ``apply_runs`` row with no tasks, its ``command`` (``create``, ``rm``, ``op
    NAME``, ``stop``, ``start``) and ``workspace``; its output is kept in ``node_run_output`` under
    the row's id, as a node run's is."""
    db.execute("ALTER TABLE apply_runs ADD COLUMN workspace TEXT")
    db.execute("CREATE INDEX ix_apply_runs_workspace ON apply_runs (workspace, started_at)")


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


__all__ = [
    "DATA_TABLES",
    "MIGRATIONS",
    "MIGRATIONS_KEY",
    "MIGRATION_NAMES",
    "RIG_VERSION_KEY",
    "STATE_SCHEMA_VERSION",
    "Migration",
    "m001_initial",
    "migration",
]

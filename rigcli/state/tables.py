"""The current state schema as SQLModel tables: its one description, read by tests only.

The store talks SQL through the dialect seam (the stdlib's sqlite3, or psycopg); importing
SQLModel costs about 0.3 s, the whole budget of a cached ``rig plan``. So sqlmodel is a test
dependency and nothing in rig imports this module: ``tests/state`` checks that migrating an
empty database (on SQLite and on PostgreSQL) gives exactly these tables and columns, and that
each record's fields (the ``Columns`` of runs.py, workspaces.py, effects.py, queries.py,
provider_storage.py) are its table's columns. Migrations (migrations.py) stay hand-written,
append-only DDL; change a table here in the same commit as the migration that changes it.
JSON columns end in ``_json``; timestamps are ISO-8601 UTC text (``records.utc_now``).
"""

from __future__ import annotations

from sqlalchemy import Boolean, Index, Integer, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


class RuntimeMetadata(SQLModel, table=True):
    __tablename__ = "runtime_metadata"

    key: str = Field(primary_key=True, sa_type=Text)
    value_json: str = Field(sa_type=Text)


class WorkflowNodeRun(SQLModel, table=True):
    """The run journal: one row per node run, written ``running`` before its handler starts."""

    __tablename__ = "workflow_node_runs"
    __table_args__ = (
        Index("ix_workflow_node_runs_workflow_path", "workflow", "node_path", "created_at"),
        Index("ix_workflow_node_runs_status", "status"),
        Index("ix_workflow_node_runs_apply", "apply_id"),
    )

    id: str = Field(primary_key=True, sa_type=Text)
    workflow: str = Field(sa_type=Text)  # the workflow name, or "fragment:<hash>" in a fragment store
    node_path: str = Field(sa_type=Text)
    node_name: str = Field(sa_type=Text)
    node_kind: str = Field(sa_type=Text)
    node_key: str = Field(sa_type=Text)
    provider_fingerprint: str = Field(sa_type=Text)
    upstream_run_ids_json: str = Field(sa_type=Text)
    output_json: str | None = Field(default=None, sa_type=Text)
    artifacts_json: str = Field(sa_type=Text)
    status: str = Field(sa_type=Text)  # statuses.RunStatus
    invalidated: bool = Field(default=False, sa_type=Boolean)
    created_at: str = Field(sa_type=Text)
    finished_at: str | None = Field(default=None, sa_type=Text)
    error: str | None = Field(default=None, sa_type=Text)
    pid: int | None = Field(default=None, sa_type=Integer)
    host: str | None = Field(default=None, sa_type=Text)
    apply_id: str | None = Field(default=None, sa_type=Text)  # the apply that ran it (apply_runs.id)
    metadata_json: str | None = Field(default=None, sa_type=Text)  # step.metadata(...), merged; NULL: none


class ApplyRunRow(SQLModel, table=True):
    """The apply history: one row per apply (or the apply inside a fork), written ``running`` first;
    and the workspaces' entries (create hook, rm, op, stop, start), rows with no tasks."""

    __tablename__ = "apply_runs"
    __table_args__ = (
        Index("ix_apply_runs_workflow", "workflow", "started_at"),
        Index("ix_apply_runs_workspace", "workspace", "started_at"),
    )

    id: str = Field(primary_key=True, sa_type=Text)
    workflow: str = Field(sa_type=Text)
    command: str = Field(sa_type=Text)  # apply | fork; a workspace's: create | rm | op NAME | stop | start
    status: str = Field(sa_type=Text)  # statuses.RunStatus
    owner: str | None = Field(default=None, sa_type=Text)  # user@host
    pid: int | None = Field(default=None, sa_type=Integer)
    host: str | None = Field(default=None, sa_type=Text)
    started_at: str = Field(sa_type=Text)
    finished_at: str | None = Field(default=None, sa_type=Text)
    node_count: int = Field(sa_type=Integer)
    cached_node_count: int | None = Field(default=None, sa_type=Integer)
    ran: int | None = Field(default=None, sa_type=Integer)
    nodes_json: str = Field(sa_type=Text)  # every task in plan order, once finished
    error: str | None = Field(default=None, sa_type=Text)
    workspace: str | None = Field(default=None, sa_type=Text)  # the workspace it was for (fork, create, rm, op, ...)


class NodeRunOutput(SQLModel, table=True):
    """A node run's stored output, in chunks written as it runs (bounded: state/run_output.py)."""

    __tablename__ = "node_run_output"

    run_id: str = Field(primary_key=True, sa_type=Text)
    seq: int = Field(primary_key=True, sa_type=Integer)
    streams_json: str = Field(sa_type=Text)  # [[stream, length], ...] over data
    data: str = Field(sa_type=Text)


class Workspace(SQLModel, table=True):
    """A named workspace; rows are written ``creating`` before the create hook runs."""

    __tablename__ = "workspaces"
    __table_args__ = (
        UniqueConstraint("workflow", "name", name="uq_workspaces_workflow_name"),
        Index("ix_workspaces_reap_at", "reap_at"),
    )

    id: str = Field(primary_key=True, sa_type=Text)
    name: str = Field(sa_type=Text)
    workflow: str = Field(sa_type=Text)
    workflow_ctx_json: str = Field(sa_type=Text)
    ctx_json: str = Field(sa_type=Text)
    status: str = Field(sa_type=Text)  # statuses.WorkspaceStatus
    resources_json: str = Field(sa_type=Text)  # unused ("[]"): what a workspace made is in effects, by owner
    error: str | None = Field(default=None, sa_type=Text)
    created_at: str = Field(sa_type=Text)
    updated_at: str = Field(sa_type=Text)
    owner: str | None = Field(default=None, sa_type=Text)  # user@host that created it
    pid: int | None = Field(default=None, sa_type=Integer)  # the rig process creating it, while it does
    host: str | None = Field(default=None, sa_type=Text)
    provenance_json: str | None = Field(default=None, sa_type=Text)  # the final runs it was made from
    expires_at: str | None = Field(default=None, sa_type=Text)  # removed by the reaper from then on
    idle_stop: int | None = Field(default=None, sa_type=Integer)  # seconds unused before the reaper stops it
    reap_at: str | None = Field(default=None, sa_type=Text)  # when the reaper looks at it next


class WorkflowApply(SQLModel, table=True):
    __tablename__ = "workflow_applies"

    workflow: str = Field(primary_key=True, sa_type=Text)
    provider_fingerprint: str = Field(sa_type=Text)
    cached_node_count: int = Field(sa_type=Integer)
    node_count: int = Field(sa_type=Integer)
    applied_at: str = Field(sa_type=Text)


class ProviderState(SQLModel, table=True):
    """Project-scoped provider storage (``setup.storage``); host storage lives in JSON files."""

    __tablename__ = "provider_state"

    provider_id: str = Field(primary_key=True, sa_type=Text)
    key: str = Field(primary_key=True, sa_type=Text)
    value_json: str = Field(sa_type=Text)
    created_at: str = Field(sa_type=Text)
    updated_at: str = Field(sa_type=Text)


class Effect(SQLModel, table=True):
    """The effects journal: a machine, container, image or snapshot, recorded ``requested`` before
    the provider is asked for it, ``confirmed`` once it exists, ``deleted`` once it is gone."""

    __tablename__ = "effects"
    __table_args__ = (
        Index("ix_effects_status", "status"),
        Index("ix_effects_owner", "owner_kind", "owner_id"),
    )

    id: str = Field(primary_key=True, sa_type=Text)  # chosen before the call; the resource carries it
    provider_id: str = Field(sa_type=Text)
    kind: str = Field(sa_type=Text)  # machine | snapshot | container | image | ...
    status: str = Field(sa_type=Text)  # statuses.EffectStatus
    resource_json: str = Field(sa_type=Text)  # what finds the resource (provider-specific)
    owner_kind: str | None = Field(default=None, sa_type=Text)  # run | workspace
    owner_id: str | None = Field(default=None, sa_type=Text)
    error: str | None = Field(default=None, sa_type=Text)  # why the last removal was inconclusive
    created_at: str = Field(sa_type=Text)
    updated_at: str = Field(sa_type=Text)
    pid: int | None = Field(default=None, sa_type=Integer)  # the rig process that requested it
    host: str | None = Field(default=None, sa_type=Text)


class FingerprintParts(SQLModel, table=True):
    """The named parts of a cache key or provider fingerprint, each hashed alone (``fingerprint/parts.py``):
    what ``task-changed`` and ``provider-changed`` name. Written with the first run of that key."""

    __tablename__ = "fingerprint_parts"

    fingerprint: str = Field(primary_key=True, sa_type=Text)  # a run's node_key or provider_fingerprint
    parts_json: str = Field(sa_type=Text)  # {"kind:name": short hash}; names only, never values
    created_at: str = Field(sa_type=Text)


__all__ = [
    "ApplyRunRow",
    "Effect",
    "FingerprintParts",
    "NodeRunOutput",
    "ProviderState",
    "RuntimeMetadata",
    "WorkflowApply",
    "WorkflowNodeRun",
    "Workspace",
]

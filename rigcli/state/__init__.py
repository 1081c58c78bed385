"""rig's state: the store contract, its SQLite implementation, its lock, and per-user files.

Importing this package loads only the standard library's sqlite3; the SQLModel description of
the schema (tables.py) is imported by tests only (sqlmodel is a test dependency).
"""

from __future__ import annotations

from rigcli.state.api import StateStore
from rigcli.state.host_storage import HostStorage, host_storage_file_name
from rigcli.state.migrations import STATE_SCHEMA_VERSION, SchemaSyncResult
from rigcli.state.paths import default_host_storage_dir, fragments_dir, logs_dir, rig_home
from rigcli.state.provider_storage import ProjectProviderStorage
from rigcli.state.runs import RUN_STATUSES
from rigcli.state.store import SQLiteStateStore, create_state_store
from rigcli.state.workspaces import WORKSPACE_STATUSES

__all__ = [
    "RUN_STATUSES",
    "STATE_SCHEMA_VERSION",
    "WORKSPACE_STATUSES",
    "HostStorage",
    "ProjectProviderStorage",
    "SQLiteStateStore",
    "SchemaSyncResult",
    "StateStore",
    "create_state_store",
    "default_host_storage_dir",
    "fragments_dir",
    "host_storage_file_name",
    "logs_dir",
    "rig_home",
]

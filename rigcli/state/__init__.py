"""rig's state: the store contract, its SQLite implementation, its lock, and per-user files.

Importing this package loads nothing: each name below is imported on first use (PEP 562), so
importing one module of it (``state/output_file.py`` for ``rig logs``, ``state/paths.py``) does
not import the store, its queries and the records behind them. The SQLModel description of the
schema (tables.py) is imported by tests only (sqlmodel is a test dependency).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rigcli.state.api import StateStore
    from rigcli.state.host_storage import HostStorage, host_storage_file_name
    from rigcli.state.migrations import STATE_SCHEMA_VERSION, SchemaSyncResult
    from rigcli.state.paths import default_host_storage_dir, fragments_dir, logs_dir, rig_home
    from rigcli.state.provider_storage import ProjectProviderStorage
    from rigcli.state.runs import RUN_STATUSES
    from rigcli.state.store import SQLiteStateStore, create_state_store
    from rigcli.state.workspaces import WORKSPACE_STATUSES

_HOMES = {
    "StateStore": "api",
    "HostStorage": "host_storage",
    "host_storage_file_name": "host_storage",
    "STATE_SCHEMA_VERSION": "migrations",
    "SchemaSyncResult": "migrations",
    "default_host_storage_dir": "paths",
    "fragments_dir": "paths",
    "logs_dir": "paths",
    "rig_home": "paths",
    "ProjectProviderStorage": "provider_storage",
    "RUN_STATUSES": "runs",
    "SQLiteStateStore": "store",
    "create_state_store": "store",
    "WORKSPACE_STATUSES": "workspaces",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


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

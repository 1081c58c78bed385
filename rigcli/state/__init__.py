"""rig's state: the store contract, its SQLite implementation, its lock, and per-user files.

Importing this package loads nothing: each name below is imported on first use (``speed/imports.py``), so
importing one module of it (``state/output_file.py`` for ``rig logs``, ``state/paths.py``) does
not import the store, its queries and the records behind them. The SQLModel description of the
schema (tables.py) is imported by tests only (sqlmodel is a test dependency).
"""

from __future__ import annotations

# Not typing.TYPE_CHECKING: see rigcli/__init__.py (mypy treats any name TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from rigcli.state.api import StateStore
    from rigcli.state.host_storage import HostStorage, host_storage_file_name
    from rigcli.state.paths import default_host_storage_dir, fragments_dir, logs_dir, rig_home
    from rigcli.state.provider_storage import ProjectProviderStorage
    from rigcli.state.runs import RUN_STATUSES
    from rigcli.state.schema_sync import SchemaSyncResult
    from rigcli.state.schema_version import STATE_SCHEMA_VERSION
    from rigcli.state.store import SQLiteStateStore, create_state_store
    from rigcli.state.workspaces import WORKSPACE_STATUSES

_LAZY = {
    "StateStore": "rigcli.state.api",
    "HostStorage": "rigcli.state.host_storage",
    "host_storage_file_name": "rigcli.state.host_storage",
    "STATE_SCHEMA_VERSION": "rigcli.state.migrations",
    "SchemaSyncResult": "rigcli.state.migrations",
    "default_host_storage_dir": "rigcli.state.paths",
    "fragments_dir": "rigcli.state.paths",
    "logs_dir": "rigcli.state.paths",
    "rig_home": "rigcli.state.paths",
    "ProjectProviderStorage": "rigcli.state.provider_storage",
    "RUN_STATUSES": "rigcli.state.runs",
    "SQLiteStateStore": "rigcli.state.store",
    "create_state_store": "rigcli.state.store",
    "WORKSPACE_STATUSES": "rigcli.state.workspaces",
}


def __getattr__(name: str) -> object:
    from rigcli.speed.imports import lazy_attribute

    return lazy_attribute(__name__, name, _LAZY, globals())


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

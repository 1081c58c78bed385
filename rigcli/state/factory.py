"""Open the state store at a resolved location: a PostgreSQL database or a SQLite file (or the host's factory).

Where the state lives is decided by ``rigcli.state_location.resolve_state_location`` alone; this
module only opens what it answered. The PostgreSQL backend (and psycopg) is imported only when
a ``postgresql://``/``postgres://`` location is in use.
"""

from __future__ import annotations

import os
from typing import Protocol

from rigcli.state.api import StateStore
from rigcli.state.store import create_state_store
from rigcli.state_location import PostgresState, StateLocation, resolve_state_location


class StateFactory(Protocol):
    """An embedding host's way to provide state: called with where rig would put it (a path or a URL)."""

    def __call__(self, *, project_dir: str, config_path: str | None, state_path: str | None) -> StateStore: ...


def open_state(
    location: StateLocation,
    *,
    project_dir: str,
    config_path: str | None = None,
    read_only: bool = False,
    connect_timeout: int | None = None,
) -> StateStore:
    """The store at ``location``; nothing is opened until first use.

    ``read_only`` never creates, migrates or writes; ``connect_timeout`` (seconds) bounds a
    PostgreSQL connect below rig's default, for peeks that must not keep a person waiting.
    """
    if isinstance(location, PostgresState):
        from rigcli.state.postgres.store import create_postgres_store

        return create_postgres_store(
            location.url,
            project_dir=project_dir,
            config_path=config_path,
            read_only=read_only,
            connect_timeout=connect_timeout,
        )

    return create_state_store(
        project_dir=project_dir, config_path=config_path, state_path=location.path, read_only=read_only
    )


def open_state_store(
    factory: StateFactory | None,
    *,
    project_dir: str,
    config_path: str | None = None,
    state_path: StateLocation | str | os.PathLike[str] | None = None,
    read_only: bool = False,
) -> StateStore:
    """The store for this project: ``state_path`` as given (a location, URL or path), else where
    ``resolve_state_location`` puts it (``$RIG_STATE_URL`` or ``<project>/.rig/state.sqlite``)."""
    location = resolve_state_location(project_dir, given=state_path)
    if factory is not None:
        return factory(project_dir=project_dir, config_path=config_path, state_path=location.target)
    return open_state(location, project_dir=project_dir, config_path=config_path, read_only=read_only)


__all__ = ["StateFactory", "open_state", "open_state_store"]

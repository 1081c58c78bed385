"""Open the state store a command asked for: the embedding host's factory, a PostgreSQL URL, or a SQLite file.

Where the state lives, first match wins: ``--state`` (a path or a URL), then ``RIG_STATE_URL``
(the project's ``.env`` counts: it is loaded before the config, and so before the state is
opened), then ``<project>/.rig/state.sqlite``. The PostgreSQL backend (and psycopg) is imported
only when a ``postgresql://``/``postgres://`` URL is in use.
"""

from __future__ import annotations

import os
from typing import Protocol

from rigcli.layout import STATE_URL_ENV, is_state_url
from rigcli.state.api import StateStore


class StateFactory(Protocol):
    """An embedding host's way to provide state: called with where rig would put it."""

    def __call__(self, *, project_dir: str, config_path: str | None, state_path: str | None) -> StateStore: ...


def resolve_state_location(project_dir: str, state_path: str | None) -> str | None:
    """``state_path`` if given, else ``$RIG_STATE_URL`` (a relative path there is the project's), else None."""
    if state_path is not None:
        return state_path
    configured = os.environ.get(STATE_URL_ENV, "").strip()
    if not configured:
        return None
    if is_state_url(configured):
        return configured
    return os.path.join(project_dir, os.path.expanduser(configured))


def open_state_store(
    factory: StateFactory | None,
    *,
    project_dir: str,
    config_path: str | None = None,
    state_path: str | None = None,
    read_only: bool = False,
) -> StateStore:
    """The store for this project; ``state_path`` None means ``$RIG_STATE_URL`` or ``<project>/.rig/state.sqlite``."""
    if factory is not None:
        return factory(project_dir=project_dir, config_path=config_path, state_path=state_path)
    location = resolve_state_location(project_dir, state_path)
    if location is not None and is_state_url(location):
        from rigcli.state.postgres.store import create_postgres_store

        return create_postgres_store(location, project_dir=project_dir, config_path=config_path, read_only=read_only)
    from rigcli.state.store import create_state_store

    return create_state_store(
        project_dir=project_dir, config_path=config_path, state_path=location, read_only=read_only
    )


__all__ = ["StateFactory", "open_state_store", "resolve_state_location"]

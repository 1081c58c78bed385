"""Open the state store a command asked for: the embedding host's factory, else SQLite at a path."""

from __future__ import annotations

from typing import Protocol

from rigcli.state.api import StateStore


class StateFactory(Protocol):
    """An embedding host's way to provide state: called with where rig would put it."""

    def __call__(self, *, project_dir: str, config_path: str | None, state_path: str | None) -> StateStore: ...


def open_state_store(
    factory: StateFactory | None,
    *,
    project_dir: str,
    config_path: str | None = None,
    state_path: str | None = None,
) -> StateStore:
    """The store for this project; ``state_path`` None means ``<project>/.rig/state.sqlite``."""
    if factory is not None:
        return factory(project_dir=project_dir, config_path=config_path, state_path=state_path)
    from rigcli.state.store import create_state_store

    return create_state_store(project_dir=project_dir, config_path=config_path, state_path=state_path)


__all__ = ["StateFactory", "open_state_store"]

"""The file names rig uses inside a project and under RIG_HOME, spelled once."""

from __future__ import annotations

import os

CONFIG_FILE = "rig_config.py"  # the project's workflow definition; its directory is the project dir
STATE_DIR = ".rig"  # per-project state and local machines, ignored by git
STATE_FILE = "state.sqlite"  # the state database, in STATE_DIR (or a fragment's directory)
STATE_URL_ENV = "RIG_STATE_URL"  # a PostgreSQL URL (or a path) for the project state; --state wins
STATE_URL_SCHEMES = ("postgresql://", "postgres://")


def default_state_path(project_dir: str | os.PathLike[str]) -> str:
    """``<project>/.rig/state.sqlite``: where a project's state lives unless ``--state`` says otherwise."""
    return os.path.join(os.fspath(project_dir), STATE_DIR, STATE_FILE)


def is_state_url(location: str | os.PathLike[str]) -> bool:
    """True for a PostgreSQL URL; anything else names a SQLite file."""
    return isinstance(location, str) and location.lower().startswith(STATE_URL_SCHEMES)


__all__ = [
    "CONFIG_FILE",
    "STATE_DIR",
    "STATE_FILE",
    "STATE_URL_ENV",
    "STATE_URL_SCHEMES",
    "default_state_path",
    "is_state_url",
]

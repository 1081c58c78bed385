"""The file names rig uses inside a project and under RIG_HOME, spelled once."""

from __future__ import annotations

import os

CONFIG_FILE = "rig_config.py"  # the project's workflow definition; its directory is the project dir
STATE_DIR = ".rig"  # per-project state and local machines, ignored by git
STATE_FILE = "state.sqlite"  # the state database, in STATE_DIR (or a fragment's directory)
STATE_URL_ENV = "RIG_STATE_URL"  # a PostgreSQL URL (or a path) for the project state; --state wins (state_location.py)


def default_state_path(project_dir: str | os.PathLike[str]) -> str:
    """``<project>/.rig/state.sqlite``: where a project's state lives unless ``--state`` says otherwise."""
    return os.path.join(os.fspath(project_dir), STATE_DIR, STATE_FILE)


__all__ = [
    "CONFIG_FILE",
    "STATE_DIR",
    "STATE_FILE",
    "STATE_URL_ENV",
    "default_state_path",
]

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


_ALIAS_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def ssh_alias(workspace: str, project_dir: str) -> str:
    """``WS.PROJECT.rig``, the ssh Host of a workspace: PROJECT is the project directory's name lowercased,
    each run of characters outside ``[a-z0-9-]`` one ``-`` (without ``re``: ``rig ls`` lists it too)."""
    word: list[str] = []
    outside = False
    for character in os.path.basename(os.path.abspath(project_dir)).lower():
        if character in _ALIAS_CHARACTERS:
            word.append(character)
            outside = False
        elif not outside:
            word.append("-")
            outside = True
    return f"{workspace}.{''.join(word)}.rig"


__all__ = [
    "CONFIG_FILE",
    "STATE_DIR",
    "STATE_FILE",
    "STATE_URL_ENV",
    "default_state_path",
    "ssh_alias",
]

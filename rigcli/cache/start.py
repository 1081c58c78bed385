"""Where a remembered answer is looked for: the project, its config and its state, found as a load finds them."""

from __future__ import annotations

import os


class Start:
    """The plain strings an answer's recall needs (no pathlib on this path: with urllib.parse it costs
    more than the rest of finding the project). ``state_path`` is None when the state is not a SQLite
    file: then nothing is remembered (``gates.py``)."""

    __slots__ = ("cache_dir", "config_path", "project_dir", "state_path")

    def __init__(self, project_dir: str, config_path: str, state_path: str | None, cache_dir: str) -> None:
        self.project_dir = project_dir
        self.config_path = config_path
        self.state_path = state_path
        self.cache_dir = cache_dir


def locate(*, chdir: str | None, config: str | None, state: str | None) -> Start | None:
    """The project and its state as ``discovery.find_project``/``locate_state`` find them; None when
    anything is wrong (the load then says what, as it always has)."""
    from rigcli.discovery import given_state, project_paths, state_of
    from rigcli.errors import RigError
    from rigcli.state.paths import rig_home_path
    from rigcli.state_location import SQLiteState

    try:
        base, project_dir, config_path = project_paths(chdir=chdir, config=config)
        where = state_of(project_dir, given_state(state, base))
        cache = os.path.join(rig_home_path(), "cache")
    except RigError:
        return None
    return Start(project_dir, config_path, where.path if isinstance(where, SQLiteState) else None, cache)


__all__ = ["Start", "locate"]

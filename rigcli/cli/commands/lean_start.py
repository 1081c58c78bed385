"""Where a lean path starts: the project's SQLite state, its config and rig's cache, found as the full way does."""

from __future__ import annotations

from rigcli.cli.spec import GlobalOptions


class LeanStart:
    """The plain strings a lean path needs (no pathlib on these paths: with urllib.parse it costs more
    than the rest of finding the project)."""

    __slots__ = ("cache_dir", "config_path", "state_path")

    def __init__(self, state_path: str, config_path: str, cache_dir: str) -> None:
        self.state_path = state_path
        self.config_path = config_path
        self.cache_dir = cache_dir


def lean_start(opts: GlobalOptions) -> LeanStart | None:
    """The project and its state as ``find_project``/``locate_state`` find them; None when the state is
    not a SQLite file, or when anything is wrong (the full way then says what, as it always has)."""
    import os

    from rigcli.discovery import given_state, project_paths, state_of
    from rigcli.errors import RigError
    from rigcli.state.paths import rig_home_path
    from rigcli.state_location import SQLiteState

    try:
        base, project_dir, config_path = project_paths(chdir=opts.chdir, config=opts.config)
        state = state_of(project_dir, given_state(opts.state, base))
        cache = os.path.join(rig_home_path(), "cache")
    except RigError:
        return None
    if not isinstance(state, SQLiteState):
        return None
    return LeanStart(state.path, config_path, cache)


__all__ = ["LeanStart", "lean_start"]

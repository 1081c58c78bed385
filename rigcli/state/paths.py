"""Where rig keeps per-user files: RIG_HOME and the directories under it."""

from __future__ import annotations

import os

from rigcli.errors import ConfigError
from rigcli.speed.lazy_modules import lazy_module

# Not typing.TYPE_CHECKING: `rig logs TASK` answered from the cache asks for ``rig_home_path`` and imports no
# pathlib (with urllib.parse, more than the rest of its start); the Paths are made on request.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

if TYPE_CHECKING:
    import pathlib

    import platformdirs
else:
    pathlib = lazy_module("pathlib")
    platformdirs = lazy_module("platformdirs")


def _from_env(name: str) -> pathlib.Path | None:

    value = os.environ.get(name, "").strip()
    return pathlib.Path(value).expanduser() if value else None


def rig_home() -> pathlib.Path:
    """``$RIG_HOME``, else the platform's user data directory for rig (``~/.local/share/rig`` on Linux).

    A path that cannot be a directory (it, or the nearest part of it that exists, is a file) is a
    clear error here rather than a crash wherever rig first writes under it.
    """

    return pathlib.Path(rig_home_path())


def rig_home_path() -> str:
    """``rig_home()`` as a plain string (``os.path``'s reading of the same text)."""
    configured = os.environ.get("RIG_HOME", "").strip()
    if configured:
        return _usable(os.path.expanduser(configured), "RIG_HOME")
    # Imported here: platformdirs is only needed when RIG_HOME is not set.

    return _usable(platformdirs.user_data_dir("rig", appauthor=False), "rig's data directory")


def _usable(home: str, what: str) -> str:
    shown = os.path.normpath(home)  # as a Path spells it ("a//b/" is a/b)
    place = shown
    while True:
        if os.path.isdir(place):
            return home
        if os.path.lexists(place):
            raise ConfigError(f"{what} {shown} is not a directory ({place} is a file); point RIG_HOME at a directory")
        parent = os.path.dirname(place)
        if parent == place or not parent:
            return home
        place = parent


def fragments_dir() -> Path:
    """Global fragment caches: ``$RIG_HOME/fragments/<fragment-hash>/state.sqlite``."""
    return rig_home() / "fragments"


def logs_dir() -> Path:
    """Crash logs with tracebacks: ``$RIG_HOME/logs``."""
    return rig_home() / "logs"


def plugin_index_file() -> Path:
    """The installed provider plugins, remembered (a copy rig rebuilds at will):
    ``$RIG_HOME/cache/provider-entry-points.json``."""
    return rig_home() / "cache" / "provider-entry-points.json"


def plugin_index_path() -> str:
    """``plugin_index_file()`` as a plain string, for a command answered from the cache, which imports no pathlib."""
    return os.path.join(rig_home_path(), "cache", "provider-entry-points.json")


def default_host_storage_dir() -> Path:
    """Provider host storage: ``$RIG_HOST_STORAGE_DIR``, else ``$RIG_HOME/providers``."""
    return _from_env("RIG_HOST_STORAGE_DIR") or rig_home() / "providers"


__all__ = [
    "default_host_storage_dir",
    "fragments_dir",
    "logs_dir",
    "plugin_index_file",
    "plugin_index_path",
    "rig_home",
    "rig_home_path",
]

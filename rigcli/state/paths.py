"""Where rig keeps per-user files: RIG_HOME and the directories under it."""

from __future__ import annotations

import os
from pathlib import Path


def _from_env(name: str) -> Path | None:
    value = os.environ.get(name, "").strip()
    return Path(value).expanduser() if value else None


def rig_home() -> Path:
    """``$RIG_HOME``, else the platform's user data directory for rig (``~/.local/share/rig`` on Linux)."""
    configured = _from_env("RIG_HOME")
    if configured is not None:
        return configured
    # Imported here: platformdirs is only needed when RIG_HOME is not set.
    import platformdirs

    return Path(platformdirs.user_data_dir("rig", appauthor=False))


def fragments_dir() -> Path:
    """Global fragment caches: ``$RIG_HOME/fragments/<fragment-hash>/state.sqlite``."""
    return rig_home() / "fragments"


def logs_dir() -> Path:
    """Crash logs with tracebacks: ``$RIG_HOME/logs``."""
    return rig_home() / "logs"


def default_host_storage_dir() -> Path:
    """Provider host storage: ``$RIG_HOST_STORAGE_DIR``, else ``$RIG_HOME/providers``."""
    return _from_env("RIG_HOST_STORAGE_DIR") or rig_home() / "providers"


__all__ = ["default_host_storage_dir", "fragments_dir", "logs_dir", "rig_home"]

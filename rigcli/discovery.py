"""Find the project: rig_config.py upward from cwd, in a --chdir directory, or named by --config."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rigcli.errors import ConfigError
from rigcli.layout import CONFIG_FILE, STATE_DIR, default_state_path, is_state_url

# Directories `rig projects` never descends into: VCS data, rig state, dependency and build trees.
SKIP_DIRS = frozenset({".git", STATE_DIR, "node_modules", ".venv", "venv", "dist", "build", "__pycache__"})


@dataclass(frozen=True)
class ProjectLocation:
    """Where a project lives; ``state_path`` is None when the default ``.rig/state.sqlite`` applies.

    ``state_url`` is a ``--state`` that names a PostgreSQL database instead of a file (then
    ``state_path`` is None); ``RIG_STATE_URL`` is the state room's to read, after ``.env`` loads.
    """

    project_dir: Path
    config_path: Path
    state_path: Path | None = None
    state_url: str | None = None

    @property
    def effective_state_path(self) -> Path:
        return self.state_path or Path(default_state_path(self.project_dir))

    @property
    def state_location(self) -> str | Path | None:
        """What ``--state`` named: a URL as written, a file made absolute, or None."""
        return self.state_url or self.state_path

    def to_json(self) -> dict[str, str]:
        return {"project_dir": str(self.project_dir), "config_path": str(self.config_path)}


def base_dir(chdir: str | None, *, cwd: Path | None = None) -> Path:
    """The directory commands work from: ``--chdir`` resolved against cwd, else cwd."""
    start = (cwd or Path.cwd()).resolve()
    if chdir is None:
        return start
    target = (start / chdir).resolve()
    if not target.is_dir():
        raise ConfigError(f"No such directory: {target}")
    return target


def find_project(
    *, chdir: str | None = None, config: str | None = None, state: str | None = None, cwd: Path | None = None
) -> ProjectLocation:
    """Locate rig_config.py the way DESIGN §2 says; raise ConfigError with the next step when absent."""
    base = base_dir(chdir, cwd=cwd)
    state_url = state if state and is_state_url(state) else None
    state_path = (base / state).resolve() if state and state_url is None else None
    if config is not None:
        config_path = (base / config).resolve()
        if not config_path.is_file():
            raise ConfigError(f"Config file {config_path} does not exist.")
        return ProjectLocation(config_path.parent, config_path, state_path, state_url)
    if chdir is not None:
        config_path = base / CONFIG_FILE
        if not config_path.is_file():
            raise ConfigError(f'No {CONFIG_FILE} found in {base}. Run "rig init" to create one.')
        return ProjectLocation(base, config_path, state_path, state_url)
    found = search_upward(base)
    if found is None:
        raise ConfigError(f'No {CONFIG_FILE} found from {base} upward. Run "rig init" to create one.')
    return ProjectLocation(found, found / CONFIG_FILE, state_path, state_url)


def search_upward(start: Path) -> Path | None:
    """The first directory from ``start`` up to the filesystem root that holds rig_config.py."""
    for directory in (start, *start.parents):
        if (directory / CONFIG_FILE).is_file():
            return directory
    return None


def scan_projects(root: Path) -> list[ProjectLocation]:
    """Every project at or below ``root``; a project's own subdirectories are not searched further."""
    found: list[ProjectLocation] = []
    for directory, subdirs, files in os.walk(root):
        if CONFIG_FILE in files:
            project_dir = Path(directory).resolve()
            found.append(ProjectLocation(project_dir, project_dir / CONFIG_FILE))
            subdirs[:] = []
            continue
        subdirs[:] = sorted(name for name in subdirs if name not in SKIP_DIRS)
    return sorted(found, key=lambda item: str(item.config_path))


__all__ = [
    "SKIP_DIRS",
    "ProjectLocation",
    "base_dir",
    "find_project",
    "scan_projects",
    "search_upward",
]

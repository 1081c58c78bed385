"""Find the project (rig_config.py upward from cwd, in a --chdir directory, or named by --config) and its state.

The project's ``.env`` is read here and nowhere else, as soon as the project is found
(``project_paths``, which every way of finding it goes through; ``config_loader`` asks again for a
project the engine is given directly), never overriding variables already set. ``locate_state``
is how every command learns where the project's state lives: the one rule,
``rigcli.state_location.resolve_state_location``, after that.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from rigcli.errors import ConfigError
from rigcli.layout import CONFIG_FILE, STATE_DIR
from rigcli.speed.lazy_modules import lazy_module
from rigcli.state_location import StateGiven, StateLocation, resolve_state_location

# Not typing.TYPE_CHECKING: `rig logs TASK` answered from the cache finds the project by the rule below on
# plain strings (``project_paths``), and pathlib's import (urllib.parse with it) would cost it more
# than the rest of finding the project; a Path is made only where one is handed out.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

if TYPE_CHECKING:
    import pathlib

    import dotenv
else:
    dotenv = lazy_module("dotenv")
    pathlib = lazy_module("pathlib")


# Directories `rig projects` never descends into: VCS data, rig state, dependency and build trees.
SKIP_DIRS = frozenset({".git", STATE_DIR, "node_modules", ".venv", "venv", "dist", "build", "__pycache__"})


# A plain slotted class, not a dataclass: ``rig logs TASK`` answered from the cache finds the project and
# nothing else needs the dataclasses module (whose import, with inspect's, costs more than the
# rest of that path's own modules; see rigcli/speed/__init__.py). A value: nothing assigns to it.
class ProjectLocation:
    """Where a project lives, and the ``--state`` given for it (as written, resolved by ``locate_state``).

    ``base`` is the directory commands work from (``-C``, else the working directory).
    """

    __slots__ = ("base", "config_path", "project_dir", "state_given")

    def __init__(
        self, project_dir: Path, config_path: Path, state_given: StateGiven | None = None, base: Path | None = None
    ) -> None:
        self.project_dir = project_dir
        self.config_path = config_path
        self.state_given = state_given
        self.base = base

    def _key(self) -> tuple[object, ...]:
        return (self.project_dir, self.config_path, self.state_given, self.base)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProjectLocation) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash((ProjectLocation, *self._key()))

    def __repr__(self) -> str:
        return (
            f"ProjectLocation(project_dir={self.project_dir!r}, config_path={self.config_path!r}, "
            f"state_given={self.state_given!r}, base={self.base!r})"
        )

    def to_json(self) -> dict[str, str]:
        return {"project_dir": str(self.project_dir), "config_path": str(self.config_path)}


def base_dir(chdir: str | None, *, cwd: pathlib.Path | None = None) -> pathlib.Path:
    """The directory commands work from: ``--chdir`` resolved against cwd, else cwd."""

    return pathlib.Path(_base_path(chdir, cwd))


def _base_path(chdir: str | None, cwd: str | os.PathLike[str] | None) -> str:
    # os.path.realpath is what Path.resolve() does (less its RuntimeError on a symlink loop, which
    # then reads as a directory that is not there).
    start = os.path.realpath(os.getcwd() if cwd is None else cwd)
    if chdir is None:
        return start
    target = os.path.realpath(os.path.join(start, chdir))
    if not os.path.isdir(target):
        raise ConfigError(f"No such directory: {target}")
    return target


def project_paths(
    *, chdir: str | None = None, config: str | None = None, cwd: str | os.PathLike[str] | None = None
) -> tuple[str, str, str]:
    """Where the project is, on plain absolute paths: (the base directory, the project's directory, its
    rig_config.py), with its ``.env`` read; raises ConfigError with the next step when there is none."""
    base = _base_path(chdir, cwd)
    if config is not None:
        config_path = os.path.realpath(os.path.join(base, config))
        if not os.path.isfile(config_path):
            raise ConfigError(f"Config file {config_path} does not exist.")
        project_dir = os.path.dirname(config_path)
    elif chdir is not None:
        config_path = os.path.join(base, CONFIG_FILE)
        if not _holds_project(base):
            raise ConfigError(f'No {CONFIG_FILE} found in {base}. Run "rig init" to create one.')
        project_dir = base
    else:
        found = _search_upward(base)
        if found is None:
            raise ConfigError(f'No {CONFIG_FILE} found from {base} upward. Run "rig init" to create one.')
        project_dir, config_path = found, os.path.join(found, CONFIG_FILE)
    load_dotenv_file(project_dir)
    return base, project_dir, config_path


def given_state(state: str | None, base: str) -> StateGiven | None:
    """``--state`` as written, kept with the directory it is relative to; blank means not given."""
    return StateGiven(state, base) if state and state.strip() else None


def find_project(
    *, chdir: str | None = None, config: str | None = None, state: str | None = None, cwd: pathlib.Path | None = None
) -> ProjectLocation:
    """Locate rig_config.py (``project_paths``); raise ConfigError with the next step when absent."""

    base, project_dir, config_path = project_paths(chdir=chdir, config=config, cwd=cwd)
    return ProjectLocation(
        pathlib.Path(project_dir), pathlib.Path(config_path), given_state(state, base), pathlib.Path(base)
    )


def locate_state(project: ProjectLocation, environ: Mapping[str, str] | None = None) -> StateLocation:
    """Where ``project``'s state lives: ``--state``, else ``RIG_STATE_URL`` from the environment or
    the project's ``.env``, else ``<project>/.rig/state.sqlite`` (see state_location.py).

    The project's ``.env`` was read when the project was found (set variables win). Raises
    StateLocationError for a location that cannot be state.
    """
    return state_of(project.project_dir, project.state_given, environ)


def state_of(
    project_dir: str | os.PathLike[str], given: StateGiven | None, environ: Mapping[str, str] | None = None
) -> StateLocation:
    """``locate_state`` for a project known by its directory alone."""
    return resolve_state_location(project_dir, given=given, environ=environ)


def load_dotenv_file(project_dir: str | os.PathLike[str]) -> None:
    """Load ``<project>/.env`` into ``os.environ`` without overriding variables already set (so reading
    it again changes nothing: when it is read does not matter)."""
    env_file = os.path.join(project_dir, ".env")
    if os.path.isfile(env_file):
        try:
            dotenv.load_dotenv(env_file, override=False)
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"{env_file} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
                "save it as UTF-8"
            ) from None
        except OSError as exc:
            raise ConfigError(f"Cannot read {env_file}: {exc.strerror or exc}") from None


def search_upward(start: Path) -> Path | None:
    """The first directory from ``start`` up to the filesystem root that holds rig_config.py."""
    found = _search_upward(os.fspath(start))
    return None if found is None else type(start)(found)


def _holds_project(directory: str) -> bool:
    """rig_config.py, or (zero config) a dev container configuration without one."""
    from rigcli.devcontainer.locations import has_config

    return os.path.isfile(os.path.join(directory, CONFIG_FILE)) or has_config(directory)


def _search_upward(start: str) -> str | None:
    directory = start
    while not _holds_project(directory):
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent
    return directory


def scan_projects(root: pathlib.Path) -> list[ProjectLocation]:
    """Every project at or below ``root``; a project's own subdirectories are not searched further."""

    found: list[ProjectLocation] = []
    for directory, subdirs, files in os.walk(root):
        if CONFIG_FILE in files or _holds_project(directory):  # zero config: a dev container configuration
            project_dir = pathlib.Path(directory).resolve()
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
    "given_state",
    "load_dotenv_file",
    "locate_state",
    "project_paths",
    "scan_projects",
    "search_upward",
    "state_of",
]

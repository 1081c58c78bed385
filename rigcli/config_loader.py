"""Import rig_config.py afresh (after loading .env) and turn what it binds into workflows.

Every load imports the config and the project's own helper modules anew, so an edited
helper is seen by the next load in the same process. Errors name the file and line.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import time
from collections.abc import Mapping, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import CodeType, ModuleType
from typing import TYPE_CHECKING

from rigcli.authoring.nodes import SequenceNode
from rigcli.authoring.project import ProjectConfig
from rigcli.authoring.values import ProviderDefinition
from rigcli.discovery import load_dotenv_file
from rigcli.errors import ConfigError, RigError, describe_exception
from rigcli.layout import CONFIG_FILE
from rigcli.load_inputs import noting
from rigcli.speed.imports import forget_module, install_module
from rigcli.speed.lazy_modules import lazy_module
from rigcli.speed.records import evolve, lazy_dataclass

if TYPE_CHECKING:
    import traceback
else:
    traceback = lazy_module("traceback")


@lazy_dataclass(frozen=True)
class LoadedConfig:
    """What importing rig_config.py gave: its workflows, its providers and the module itself."""

    path: Path
    project_dir: Path
    workflows: tuple[SequenceNode, ...]
    providers: Mapping[str, ProviderDefinition]
    module: ModuleType
    # time.time() before any of the project's files was read: a file changed since then may be
    # newer than what this load saw (engine/memo.py keeps nothing for it).
    read_since: float = 0.0
    # Files the load read besides its modules (load_inputs.py): the memo stamps them too.
    inputs: tuple[str, ...] = ()


def load_config(config_path: Path, project_dir: Path) -> LoadedConfig:
    source = None if config_path.is_file() else _zero_config(config_path, project_dir)
    if source is None and not config_path.is_file():
        raise ConfigError(f'No {CONFIG_FILE} found at {config_path}. Run "rig init" to create one.')
    read_since = time.time()
    load_dotenv_file(project_dir)
    with noting() as inputs:
        module = _import_fresh(config_path, project_dir, source)
    loaded = _read_workflows(module, config_path, project_dir, read_since)
    return evolve(loaded, inputs=tuple(dict.fromkeys(inputs))) if inputs else loaded


def _zero_config(config_path: Path, project_dir: Path) -> str | None:
    """Without rig_config.py, the one a directory's dev container configurations stand for (what
    ``rig init --devcontainer`` writes); None when it has none."""
    from rigcli.devcontainer.locations import config_paths, starter_config

    found = config_paths(str(project_dir)) if config_path.name == CONFIG_FILE else []
    return starter_config(found) if found else None


# Every project directory loaded in this process: an embedding host (or a test run) may load
# several projects, and each one's helper modules must never be served to another.
_PROJECT_ROOTS: set[str] = set()


class _FreshSourceLoader(importlib.machinery.SourceFileLoader):
    """Compile from the source file every time: a stale .pyc (same size, same second) must
    never run code other than what the fingerprint read."""

    def get_code(self, fullname: str) -> CodeType:
        return compile(self.get_data(self.path), self.path, "exec", dont_inherit=True)


class _GivenSourceLoader(_FreshSourceLoader):
    """A config that is not on disk (zero config): its text given, its file name the one it stands for."""

    def __init__(self, fullname: str, path: str, source: str) -> None:
        super().__init__(fullname, path)
        self._source = source

    def get_data(self, path: str) -> bytes:
        return self._source.encode("utf-8")


class _ProjectFinder:
    """A meta path finder (not an ``importlib.abc.MetaPathFinder`` subclass: importing that module
    pulls in importlib.resources, tempfile and shutil, ~2 ms of every command that loads a config)."""

    def __init__(self, root: str) -> None:
        self._root = root

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        origin = getattr(spec, "origin", None)
        if spec is None or not origin or not origin.endswith(".py"):
            return spec
        if not os.path.realpath(origin).startswith(self._root + os.sep):
            return spec
        return importlib.util.spec_from_file_location(
            fullname,
            origin,
            loader=_FreshSourceLoader(fullname, origin),
            submodule_search_locations=spec.submodule_search_locations,
        )


def _project_module_names(project_dir: Path) -> set[str]:
    try:
        entries = list(project_dir.iterdir())
    except OSError:
        return set()
    names = {entry.stem for entry in entries if entry.suffix == ".py"}
    names |= {entry.name for entry in entries if (entry / "__init__.py").is_file()}
    return names


def _is_installed(file: str) -> bool:
    prefixes = {os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return os.path.realpath(file).startswith(tuple(prefixes))


def _forget_project_modules(project_dir: Path) -> None:
    """Drop modules that a project import could be served from a stale copy of.

    That is every module loaded from any project seen so far, and any other non-installed
    module whose name a file in this project would provide (e.g. a ``helpers`` imported by
    someone else), so the next import reads this project's file.
    """
    _PROJECT_ROOTS.add(os.path.realpath(project_dir))
    roots = tuple(root + os.sep for root in _PROJECT_ROOTS)
    shadowed = _project_module_names(project_dir)
    # Resolving every loaded module's path costs more than a cached plan itself: modules loaded
    # from the interpreter's own directories, as written, are never a project's.
    interpreter = tuple({place + os.sep for place in (sys.prefix, sys.base_prefix, sys.exec_prefix)})
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not file:
            continue
        top = name.partition(".")[0]
        if top in shadowed:
            if not _is_installed(file):
                forget_module(name)
        elif not file.startswith(interpreter) and os.path.realpath(file).startswith(roots):
            forget_module(name)


def _import_fresh(config_path: Path, project_dir: Path, source: str | None = None) -> ModuleType:
    _forget_project_modules(project_dir)
    module_name = "rig_config"
    path = str(config_path)
    loader = _FreshSourceLoader(module_name, path) if source is None else _GivenSourceLoader(module_name, path, source)
    spec = importlib.util.spec_from_file_location(module_name, path, loader=loader)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{config_path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    install_module(module_name, module)
    project_entry = str(project_dir)
    sys.path.insert(0, project_entry)
    finder = _ProjectFinder(os.path.realpath(project_dir))
    sys.meta_path.insert(0, finder)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        line = f":{exc.lineno}" if exc.lineno else ""
        file = exc.filename or str(config_path)
        raise ConfigError(f"{file}{line}: SyntaxError: {exc.msg}") from exc
    except RigError as exc:
        raise type(exc)(f"{_where(exc, config_path, project_dir)}{exc}") from exc
    except SystemExit as exc:  # a config must not end rig silently with its own exit code
        where = _where(exc, config_path, project_dir)
        raise ConfigError(f"{where}called sys.exit({exc.code!r}) while loading") from exc
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # whatever the config raises (GeneratorExit, its own kinds) is its error
        raise ConfigError(f"{_where(exc, config_path, project_dir)}{describe_exception(exc)}") from exc
    finally:
        sys.meta_path.remove(finder)
        if sys.path and sys.path[0] == project_entry:
            sys.path.pop(0)
    return module


def _where(exc: BaseException, config_path: Path, project_dir: Path) -> str:
    """ "file:line: " of the innermost frame in the project (the config file preferred)."""

    frames = traceback.extract_tb(exc.__traceback__)
    root = str(project_dir.resolve()) + os.sep
    in_config = [f for f in frames if os.path.realpath(f.filename) == os.path.realpath(config_path)]
    in_project = [f for f in frames if os.path.realpath(f.filename).startswith(root)]
    candidates = in_config or in_project
    if not candidates:
        return f"{config_path}: "
    return f"{candidates[-1].filename}:{candidates[-1].lineno}: "


def _read_workflows(module: ModuleType, config_path: Path, project_dir: Path, read_since: float) -> LoadedConfig:
    if not hasattr(module, "workflows"):
        raise ConfigError(
            f"{config_path}: must bind the name `workflows` to a workflow, a list of workflows, or define_config(...)"
        )
    value: object = module.workflows
    providers: Mapping[str, ProviderDefinition] = {}
    if isinstance(value, ProjectConfig):
        providers = value.providers
        items: tuple[object, ...] = tuple(value.workflows)
    elif isinstance(value, SequenceNode):
        items = (value,)
    elif isinstance(value, (list, tuple)):
        items = tuple(value)
    else:
        raise ConfigError(
            f"{config_path}: `workflows` must be a workflow, a list of workflows or define_config(...), "
            f"not {type(value).__name__}"
        )
    if not items:
        raise ConfigError(f"{config_path}: `workflows` is empty")
    roots: list[SequenceNode] = []
    for item in items:
        if not isinstance(item, SequenceNode):
            raise ConfigError(f"{config_path}: `workflows` holds a {type(item).__name__}, not a workflow sequence")
        if any(root.workflow == item.workflow for root in roots):
            raise ConfigError(f"{config_path}: Workflow names must be unique (duplicate: {item.workflow})")
        roots.append(item)
    return LoadedConfig(config_path, project_dir, tuple(roots), providers, module, read_since)


__all__ = ["LoadedConfig", "load_config", "load_dotenv_file"]

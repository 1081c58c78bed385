"""What completion offers from the project: workflows, operations and their inputs, workspaces, tasks.

Workspaces and cached tasks come from the state every command reads (``discovery.locate_state``:
the same flags, environment and ``.env``), opened read-only; a missing SQLite file is not created
and a PostgreSQL server gets a short connect timeout. Every source is safe: any failure (no
project, a broken config, a locked or missing state) yields an empty list, and a config that
prints while it loads cannot reach the shell.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable, Iterator
from functools import cached_property
from typing import TYPE_CHECKING, TypeVar

from rigcli.discovery import ProjectLocation, find_project, locate_state
from rigcli.speed.entry_points import PROVIDERS_GROUP, entry_point_values
from rigcli.speed.records import lazy_dataclass
from rigcli.state.paths import plugin_index_file
from rigcli.state_location import SQLiteState

if TYPE_CHECKING:
    from rigcli.authoring.nodes import SequenceNode
    from rigcli.cli.opargs import InputField
    from rigcli.records import WorkspaceRecord
    from rigcli.state.api import StateStore

T = TypeVar("T")
# A Tab press waits at most this long for a PostgreSQL state server (rig's commands wait longer).
TAB_CONNECT_TIMEOUT_S = 3
Item = tuple[str, str]  # (value, description)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        yield


def _safe(fetch: Callable[[], T], empty: T) -> T:
    try:
        with _quiet():
            return fetch()
    except (Exception, SystemExit):  # a config may even call sys.exit() while it loads
        return empty


@lazy_dataclass(frozen=True)
class OperationSpec:
    id: str
    workflow: str
    description: str
    fields: tuple[InputField, ...]


class ProjectSource:
    """Lazily reads the project named by the words' global options; each piece is read at most once."""

    def __init__(self, *, chdir: str | None, config: str | None, state: str | None, workflow: str | None) -> None:
        self._chdir, self._config, self._state = chdir, config, state
        self.workflow = workflow

    @cached_property
    def location(self) -> ProjectLocation | None:
        return _safe(lambda: find_project(chdir=self._chdir, config=self._config, state=self._state), None)

    @cached_property
    def _workflows(self) -> list[SequenceNode]:
        location = self.location
        if location is None:
            return []

        def load() -> list[SequenceNode]:
            from rigcli.config_loader import load_config

            return list(load_config(location.config_path, location.project_dir).workflows)

        return _safe(load, [])

    def _selected(self) -> list[SequenceNode]:
        return [item for item in self._workflows if self.workflow in (None, item.workflow)]

    def workflows(self) -> list[Item]:
        return [(item.workflow, "workflow") for item in self._workflows]

    def operations(self, *, workspace: bool) -> list[OperationSpec]:
        def read() -> list[OperationSpec]:
            from rigcli.cli.opargs import fields_from_schema  # pydantic: only once operations are asked for

            specs = []
            for item in self._selected():
                definitions = item.workspace_operations if workspace else item.operations
                for definition in definitions:
                    schema = definition.input.model_json_schema() if definition.input is not None else None
                    about = definition.description or definition.title or ""
                    specs.append(OperationSpec(definition.id, item.workflow, about, tuple(fields_from_schema(schema))))
                if workspace and item.workspace_definition is not None:
                    specs.append(OperationSpec("remove", item.workflow, "Remove this workspace", ()))
            return specs

        return _safe(read, [])

    @cached_property
    def _store(self) -> StateStore | None:
        location = self.location
        if location is None:
            return None

        def open_store() -> StateStore | None:
            from rigcli.state.factory import open_state

            where = locate_state(location)  # the state `rig ls` reads: same flags, environment and .env
            if isinstance(where, SQLiteState) and not os.path.isfile(where.path):
                return None  # never create a state database just because someone pressed Tab
            return open_state(
                where,
                project_dir=str(location.project_dir),
                config_path=str(location.config_path),
                read_only=True,
                connect_timeout=TAB_CONNECT_TIMEOUT_S,
            )

        return _safe(open_store, None)

    def workspace_records(self) -> list[WorkspaceRecord]:
        store = self._store
        if store is None:
            return []
        return _safe(lambda: store.list_workspaces(self.workflow), [])

    def workspaces(self) -> list[Item]:
        return [(item.name, f"workspace ({item.workflow})") for item in self.workspace_records()]

    def task_paths(self, *, valid_only: bool) -> list[Item]:
        store = self._store
        if store is None:
            return []

        def read() -> list[Item]:
            runs = store.list_runs(workflow=self.workflow, statuses=["succeeded"])
            paths = [run.node_path for run in runs if not (valid_only and run.invalidated)]
            return [(path, "cached task") for path in dict.fromkeys(paths)]

        return _safe(read, [])


def provider_ids() -> list[Item]:
    def read() -> list[Item]:
        return [(name, "provider") for name in entry_point_values(PROVIDERS_GROUP, plugin_index_file())]

    empty: list[Item] = []
    return sorted(set(_safe(read, empty)))


def paths(prefix: str, *, dirs_only: bool) -> list[Item]:
    """Files and directories matching ``prefix``; hidden ones only when the prefix asks for them."""
    directory, _, start = prefix.rpartition("/")
    base = directory + "/" if directory or prefix.startswith("/") else ""

    def read() -> list[Item]:
        items = []
        with os.scandir(os.path.expanduser(base or ".")) as entries:
            for entry in entries:
                if not entry.name.startswith(start) or (entry.name.startswith(".") and not start.startswith(".")):
                    continue
                if entry.is_dir():
                    items.append((f"{base}{entry.name}/", "directory"))
                elif not dirs_only:
                    items.append((f"{base}{entry.name}", "file"))
        return sorted(items)

    return _safe(read, [])


__all__ = ["Item", "OperationSpec", "ProjectSource", "paths", "provider_ids"]

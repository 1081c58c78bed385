"""SQLiteStateStore: a project's (or a global fragment's) state in one SQLite file, and its writer lock."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager

from rigcli.jsonutil import JsonValue
from rigcli.layout import default_state_path
from rigcli.records import ApplyRecord, LockHolder, utc_now
from rigcli.state.database import dumps
from rigcli.state.effects import EffectsJournal
from rigcli.state.lock import HolderCallback, state_lock
from rigcli.state.paths import fragments_dir
from rigcli.state.provider_storage import ProjectProviderStorage
from rigcli.state.runs import RunJournal
from rigcli.state.workspaces import WorkspaceTable

StatePath = str | os.PathLike[str]


class SQLiteStateStore(RunJournal, WorkspaceTable, EffectsJournal):
    """Run journal, workspaces, applies, provider storage and metadata of one state database.

    Opening is lazy: the first use runs ``sync_schema`` (call it yourself to see its warnings).
    Reads never take the writer lock; commands that write wrap their work in ``lock(...)``.
    """

    def get_metadata(self, key: str) -> JsonValue | None:
        with self._read() as db:
            row = db.execute('SELECT value_json FROM runtime_metadata WHERE "key" = ?', (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def set_metadata(self, key: str, value: JsonValue) -> None:
        with self._write() as db:
            db.execute(
                'INSERT INTO runtime_metadata ("key", value_json) VALUES (?, ?) '
                'ON CONFLICT("key") DO UPDATE SET value_json = excluded.value_json',
                (key, dumps(value)),
            )

    def record_apply(
        self, workflow: str, *, provider_fingerprint: str, cached_node_count: int, node_count: int
    ) -> ApplyRecord:
        record: ApplyRecord = {
            "workflow": workflow,
            "provider_fingerprint": provider_fingerprint,
            "cached_node_count": cached_node_count,
            "node_count": node_count,
            "applied_at": utc_now(),
        }
        with self._write() as db:
            db.execute(
                "INSERT INTO workflow_applies "
                "(workflow, provider_fingerprint, cached_node_count, node_count, applied_at) "
                "VALUES (:workflow, :provider_fingerprint, :cached_node_count, :node_count, :applied_at) "
                "ON CONFLICT(workflow) DO UPDATE SET "
                "provider_fingerprint = excluded.provider_fingerprint, "
                "cached_node_count = excluded.cached_node_count, node_count = excluded.node_count, "
                "applied_at = excluded.applied_at",
                dict(record),
            )
        return record

    def provider_storage(self, provider_id: str) -> ProjectProviderStorage:
        """``setup.storage`` for ``provider_id``: its JSON records in this database."""
        return ProjectProviderStorage(self, provider_id)

    @contextmanager
    def lock(
        self,
        command: str,
        *,
        wait: bool = True,
        on_wait: HolderCallback | None = None,
        on_takeover: HolderCallback | None = None,
    ) -> Iterator[LockHolder]:
        """Hold this database's writer lock (see lock.state_lock); ``command`` names us to waiters."""
        with state_lock(self.path, command, wait=wait, on_wait=on_wait, on_takeover=on_takeover) as holder:
            yield holder

    def __repr__(self) -> str:
        return f"SQLiteStateStore({self.path!r})"


def create_state_store(
    *,
    project_dir: StatePath,
    state_path: StatePath | None = None,
    config_path: StatePath | None = None,
    read_only: bool = False,
) -> SQLiteStateStore:
    """A store for ``state_path`` (default ``<project_dir>/.rig/state.sqlite``); nothing is opened yet.

    Paths are made absolute but symlinks are kept, so ``project.dir`` reads as the user wrote it.
    ``read_only`` never creates, migrates or writes (completion opens the store this way).
    """
    project = os.path.abspath(os.fspath(project_dir))
    default = str(default_state_path(project))
    path = os.path.abspath(os.fspath(state_path)) if state_path is not None else default
    config = os.path.abspath(os.fspath(config_path)) if config_path is not None else None
    # Only rig's own locations may have an unusable database moved aside; a file the user named
    # (``--state``) that is not a rig database is refused and left untouched.
    managed = path == default or _inside(path, str(fragments_dir()))
    return SQLiteStateStore(path, project_dir=project, config_path=config, read_only=read_only, move_aside=managed)


def _inside(path: str, directory: str) -> bool:
    return os.path.commonpath([path, os.path.abspath(directory)]) == os.path.abspath(directory)


__all__ = ["SQLiteStateStore", "StatePath", "create_state_store"]

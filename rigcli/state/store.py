"""SQLiteStateStore: a project's (or a global fragment's) state in one SQLite file, and its writer lock."""

from __future__ import annotations

import _sqlite3 as sqlite3  # the extension module itself: see state_file.py
import json
import os
from collections.abc import Iterator
from contextlib import closing, contextmanager

from rigcli.layout import default_state_path
from rigcli.records import LockHolder
from rigcli.state.api import StateStatus
from rigcli.state.lock import Cancelled, HolderCallback, peek_holder, state_lock
from rigcli.state.paths import fragments_dir
from rigcli.state.queries import StoreQueries
from rigcli.state.schema_version import SCHEMA_VERSION_KEY

StatePath = str | os.PathLike[str]


class SQLiteStateStore(StoreQueries):
    """Run journal, workspaces, applies, provider storage and metadata of one state database.

    Opening is lazy: the first use runs ``sync_schema`` (call it yourself to see its warnings).
    Reads never take the writer lock; commands that write wrap their work in ``lock(...)``.
    """

    @contextmanager
    def lock(
        self,
        command: str,
        *,
        wait: bool = True,
        on_wait: HolderCallback | None = None,
        on_takeover: HolderCallback | None = None,
        cancelled: Cancelled | None = None,
    ) -> Iterator[LockHolder]:
        """Hold this database's writer lock (see lock.state_lock); ``command`` names us to waiters."""
        with state_lock(
            self.path, command, wait=wait, on_wait=on_wait, on_takeover=on_takeover, cancelled=cancelled
        ) as holder:
            yield holder

    def status(self) -> StateStatus:
        """The file, its schema version and the lock holder; nothing is created, migrated or locked."""
        version: int | None = None
        exists = os.path.isfile(self.path)
        if exists:
            try:
                with closing(sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=2.0)) as db:
                    row = db.execute(
                        'SELECT value_json FROM runtime_metadata WHERE "key" = ?', (SCHEMA_VERSION_KEY,)
                    ).fetchone()
                found = None if row is None else json.loads(row[0])
                version = found if isinstance(found, int) else None
            except (sqlite3.Error, ValueError):
                version = None  # not (yet) a rig database: the next writer reports it properly
        return StateStatus(
            backend=self.backend,
            url=self.path,
            exists=exists,
            schema_version=version,
            server_version=sqlite3.sqlite_version,
            lock=peek_holder(self.path),
        )

    def fragment_store(self, fragment_hash: str) -> None:
        """SQLite fragments live in files of their own under ``$RIG_HOME`` (engine/stores.py)."""
        return None

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

"""A task's last run and its stored output, read straight from a SQLite state file: ``rig logs TASK``'s lean path.

``RunOutput.output_pieces`` (``run_output.py``) is the one reader every backend shares, behind a
store that checks, migrates and records itself on open. Copying a finished run's output out
needs none of that, and its imports and checks cost more than reading 50 MB does, so a file
that is as this rig would leave it (no damage marker, the schema this rig writes) is read here
with two queries and the chunks' blobs; anything else returns None before a byte is read, and
the caller goes the full way, which says what is wrong.

The file is read through ``_sqlite3``, the extension module the ``sqlite3`` package re-exports
(the same ``connect``, ``Connection`` and ``Error``): the package's own module adds only the
default adapters and converters, which these queries do not use, and importing ``datetime`` for
them cost this path ~7M instructions, more than copying 50 MB out of the mapped pages does.
"""

from __future__ import annotations

import _sqlite3 as sqlite3
import os
import time
from collections.abc import Callable, Iterator

from rigcli.state.damage_marker import marked
from rigcli.state.expiry import due_condition
from rigcli.state.schema_version import SCHEMA_VERSION_KEY, STATE_SCHEMA_VERSION

# Not typing.TYPE_CHECKING: this module is on `rig logs TASK`'s lean path, which imports no typing
# (rigcli/__init__.py); mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

# Read in pieces that stay in the CPU's cache on their way from SQLite's pages to the pipe (4 MiB
# pieces measured slower than 64–256 KiB ones for the same 50 MB).
PIECE_BYTES = 256 * 1024
# SQLite reads a blob a page (4 KiB) at a time: 50 MB is ~12,000 pread calls, most of the copy's
# time. Mapped, the same pages are copied from memory: a 50 MB run went out in ~70 ms instead of
# ~110 ms (median of 12, piped, a busy 2-core machine). The pages read count in the process's RSS
# while it runs (the file's, shared with the page cache, not memory of its own).
MMAP_BYTES = 1 << 30
_NEWEST_FIRST = "ORDER BY created_at DESC, id DESC"  # as runs.py orders them


class FinishedRun:
    """The newest run of a task, when it succeeded: the only kind whose output is all there is to show."""

    __slots__ = ("id",)

    def __init__(self, run_id: str) -> None:
        self.id = run_id


class OutputFile:
    """A SQLite state file opened for reading one run's stored output; ``None`` from ``open`` when it cannot be."""

    def __init__(self, db: sqlite3.Connection, blobopen: Callable[..., Any]) -> None:
        self._db = db
        self._blobopen = blobopen

    @classmethod
    def open(cls, path: str) -> OutputFile | None:
        if not os.path.isfile(path) or marked(path) is not None:
            return None
        try:
            db = sqlite3.connect(path, timeout=15.0, isolation_level=None)
        except sqlite3.Error:
            return None
        try:
            found = db.execute('SELECT value_json FROM runtime_metadata WHERE "key" = ?', (SCHEMA_VERSION_KEY,))
            version = found.fetchone()
        except sqlite3.Error:
            version = None
        blobopen = getattr(db, "blobopen", None)  # Python 3.11+: a value read in place, a piece at a time
        if blobopen is None or version is None or version[0] != str(STATE_SCHEMA_VERSION):
            db.close()
            return None
        try:  # noqa: SIM105 - contextlib is not imported on this path
            db.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        except sqlite3.Error:
            pass  # a build without mmap reads the pages as before
        return cls(db, blobopen)

    def close(self) -> None:
        self._db.close()

    def expiry_due(self) -> bool:
        """Whether a workspace is due to expire (``state/workspaces.py:due_workspaces``, the same
        one indexed query): then the full way runs, since every command that opens the state reaps."""
        query = f"SELECT 1 FROM workspaces WHERE {due_condition()} LIMIT 1"
        try:
            return self._db.execute(query, (_utc_now(),)).fetchone() is not None
        except sqlite3.Error:
            return True  # unsure: the full way finds out

    def last_run(self, workflow: str, node_path: str) -> FinishedRun | None:
        """The newest run of ``node_path`` in ``workflow`` if it succeeded; None otherwise (none, or
        one still running or that ended otherwise: the full way says how it ended)."""
        try:
            query = f"SELECT id, status FROM workflow_node_runs WHERE workflow = ? AND node_path = ? {_NEWEST_FIRST}"
            row = self._db.execute(f"{query} LIMIT 1", (workflow, node_path)).fetchone()
        except sqlite3.Error:
            return None
        return FinishedRun(str(row[0])) if row is not None and row[1] == "succeeded" else None

    def pieces(self, run_id: str) -> Iterator[tuple[bytes, bool]]:
        """The run's stored UTF-8 in ``seq`` order, as (piece, whether it ends its chunk); a chunk
        removed meanwhile (``cache clear``) ends where it was cut."""
        rows = self._db.execute("SELECT rowid FROM node_run_output WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
        for (rowid,) in rows:
            try:
                with self._blobopen("node_run_output", "data", rowid, readonly=True) as blob:
                    left = len(blob)
                    while True:
                        data = blob.read(PIECE_BYTES) if left > 0 else b""
                        left -= len(data)
                        ends = left <= 0 or not data
                        yield data, ends
                        if ends:
                            break
            except sqlite3.Error:
                yield b"", True


def _utc_now() -> str:
    """``records.utc_now()`` (``2026-05-10T00:00:00.000000+00:00``) without importing datetime."""
    seconds, nanoseconds = divmod(time.time_ns(), 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{nanoseconds // 1000:06d}+00:00"


__all__ = ["PIECE_BYTES", "FinishedRun", "OutputFile"]

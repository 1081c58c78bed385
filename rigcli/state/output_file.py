"""A task's last run and its stored output, read straight from a SQLite state file (``rig logs TASK``).

``RunOutput.output_pieces`` (``run_output.py``) is the one reader every backend shares, behind a
store that checks, migrates and records itself on open. Copying a finished run's output out
needs none of that, and its imports and checks cost more than reading 50 MB does, so a file
that is as this rig would leave it (no damage marker, the schema this rig writes) is read here
with two queries and the chunks' blobs; anything else returns None before a byte is read, and
the caller goes through the engine, which says what is wrong.

The file is opened by ``state_file.py``, which every command answered from the cache shares.
"""

from __future__ import annotations

import _sqlite3 as sqlite3
from collections.abc import Callable, Iterator

from rigcli.state.state_file import expiry_due, open_current

# Not typing.TYPE_CHECKING: this module is on `rig logs TASK` answered from the cache, which imports no typing
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
_NEWEST_FIRST = "ORDER BY created_at DESC, substr(id, 13) DESC, id DESC"  # as runs.py orders them


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
        db = open_current(path)
        if db is None:
            return None
        blobopen = getattr(db, "blobopen", None)  # Python 3.11+: a value read in place, a piece at a time
        if blobopen is None:
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
        """Whether a workspace is due to expire: then the engine answers, which reaps."""
        return expiry_due(self._db)

    def last_run(self, workflow: str, node_path: str) -> FinishedRun | None:
        """The newest run of ``node_path`` in ``workflow`` if it succeeded; None otherwise (none, or
        one still running or that ended otherwise: the engine says how it ended)."""
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


__all__ = ["PIECE_BYTES", "FinishedRun", "OutputFile"]

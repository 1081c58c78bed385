"""A damaged SQLite state database: telling damage from other errors, checking for it, and the marker
that keeps every later rig from writing into it.

Damage is what SQLite reports as SQLITE_CORRUPT ("database disk image is malformed") or, for a
file whose header still says SQLite, SQLITE_NOTADB. Writing into such a file can spread the damage
(a broken free list hands out pages still in use), so a store that meets it refuses every write
from then on, and leaves ``<database>.damaged`` beside it: a later rig that finds the marker checks
the file again (``PRAGMA quick_check``) and refuses it while the check fails. ``rig state check``
runs the full ``PRAGMA integrity_check`` and parses every stored JSON value; ``rig state
recover`` (``recovery.py``) salvages the rows into a new file, after which the marker goes.

Writers also check before their first write in a process, so damage that no query has run into
yet is found before anything is written: ``quick_check`` reads every page once (about 5 µs a
page: 0.2 ms for the state of 200 cached tasks, 27 ms for 22 MB).

The marker is read by ``damage_marker.py``, which ``rig logs TASK`` answered from the cache asks too.
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # the extension module itself: see state_file.py
import contextlib
import json
import os
import time

from rigcli.errors import DamagedStateError
from rigcli.state.damage_marker import MARKER_SUFFIX, marked, marker

_CORRUPT, _NOT_A_DATABASE = 11, 26  # SQLite's primary result codes


def is_damage(error: BaseException) -> bool:
    """True for SQLite's own report of a damaged database file (never a lock, a full disk, a permission)."""
    if not isinstance(error, sqlite3.DatabaseError):
        return False
    code = getattr(error, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_CORRUPT, _NOT_A_DATABASE)
    text = str(error).lower()
    # The last one is Python's, not SQLite's: rig writes only UTF-8, so a text cell that is not is
    # a damaged cell that SQLite's page checks cannot see.
    return any(sign in text for sign in ("malformed", "not a database", "could not decode to utf-8"))


def mark(path: str, reason: str) -> None:
    """Leave the marker beside the database (best effort: a read-only directory keeps only this process off it)."""
    record = {"reason": reason, "found_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "pid": os.getpid()}
    temporary = f"{marker(path)}.{os.getpid()}.tmp"
    with contextlib.suppress(OSError):
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(record, handle)
        os.replace(temporary, marker(path))


def unmark(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(marker(path))


def problems(db: sqlite3.Connection, *, full: bool = False) -> list[str]:
    """What SQLite's check finds wrong (``quick_check``, or ``integrity_check`` when ``full``); [] when ok."""
    pragma = "integrity_check" if full else "quick_check"
    try:
        found = [str(row[0]) for row in db.execute(f"PRAGMA {pragma}")]
    except sqlite3.DatabaseError as error:
        if not is_damage(error):
            raise
        return [str(error)]
    return [] if found == ["ok"] else found


def parses(value: object) -> bool:
    """Whether a stored ``*_json`` value is what rig writes: UTF-8 JSON text (or NULL)."""
    if value is None:
        return True
    try:
        json.loads(value.decode("utf-8") if isinstance(value, bytes) else str(value))
    except ValueError:  # JSONDecodeError and UnicodeDecodeError both are
        return False
    return True


def unparsable_values(db: sqlite3.Connection) -> list[str]:
    """Cells of ``*_json`` columns that do not parse: damage inside a cell's content (an overwritten
    overflow page) that SQLite's checks cannot see, and that rig would refuse when it read them."""
    found: list[str] = []
    db.text_factory = bytes  # a cell that is not UTF-8 is one of them, not an error of the scan
    try:
        tables = [str(row[0], "utf-8") for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            if table.startswith("sqlite_"):
                continue
            columns = [str(row[1], "utf-8") for row in db.execute(f'PRAGMA table_info("{table}")')]
            for column in (name for name in columns if name.endswith("_json")):
                for rowid, value in db.execute(f'SELECT rowid, "{column}" FROM "{table}"'):
                    if not parses(value):
                        found.append(f"{table} row {rowid}: the stored value of {column} does not parse")
    finally:
        db.text_factory = str
    return found


def check_file(path: str, *, full: bool = False, values: bool = False) -> list[str]:
    """``problems`` of the database at ``path``, opened read-only (nothing is written, not even a log);
    ``values`` (implied by ``full``) also parses every stored JSON value once SQLite's own check passes."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=15.0)) as db:
            found = problems(db, full=full)
            return found if found or not (full or values) else unparsable_values(db)
    except sqlite3.DatabaseError as error:
        if not is_damage(error):
            raise
        return [str(error)]


def damaged(path: str, reason: str) -> DamagedStateError:
    """Mark the database and return the error that says so (in one line)."""
    mark(path, reason)
    return DamagedStateError(path, reason)


def summary(found: list[str]) -> str:
    """One line for the first problems a check found (SQLite's ``*** in database main ***`` dropped)."""
    lines = [" ".join(line.split()) for row in found for line in row.splitlines()]
    lines = [line for line in lines if line and not line.startswith("*** in database")] or ["damaged"]
    first = "; ".join(line[:200] for line in lines[:2])
    return first + (f"; and {len(lines) - 2} more" if len(lines) > 2 else "")


__all__ = [
    "MARKER_SUFFIX",
    "check_file",
    "damaged",
    "is_damage",
    "mark",
    "marked",
    "marker",
    "parses",
    "problems",
    "summary",
    "unmark",
    "unparsable_values",
]

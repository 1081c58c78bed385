"""``rig state check`` and ``rig state recover``: SQLite's full check of a state file, and the salvage
of a damaged one into a new file that the project then uses, the old one kept beside it.

Recovery reads the damaged file read-only, in one of two ways, and never writes to it:

- the ``sqlite3`` command-line shell's ``.recover``, when one is installed (it reads every page,
  b-tree or not, and finds rows no query can reach);
- otherwise Python's own driver (whose stdlib has no ``.recover``): each table is read whole, and a
  table whose read fails is read again row by row (by rowid, from both ends and then one rowid at a
  time in between), so only the rows under a damaged page are lost.

The rows found go into a fresh database of the current schema (``INSERT OR IGNORE``: what two
ways found twice is kept once), except those with a stored JSON value that does not parse (a
damaged cell); the new database must pass ``rig state check``. Then, under the state's
writer lock, the damaged file (with its write-ahead log) becomes ``<state>.damaged-<UTC time>`` and
the new one takes its place: at every moment one of the two is at the state's path.
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # the extension module itself: see state_file.py
import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import field

from rigcli.errors import StateError
from rigcli.jsonutil import JsonObject
from rigcli.speed.records import lazy_dataclass
from rigcli.state.damage import check_file, is_damage, parses, unmark
from rigcli.state.lock import state_lock
from rigcli.state.migrations import DATA_TABLES, MIGRATIONS_KEY
from rigcli.state.schema_sync import SQLITE_HEADER, sync_schema_file
from rigcli.state.schema_version import SCHEMA_VERSION_KEY

Row = tuple[object, ...]  # a table row as sqlite3 reads it, copied as it is

TABLES = DATA_TABLES  # every table, so a recovered file keeps run history and stored output too
_OWN_METADATA = (SCHEMA_VERSION_KEY, MIGRATIONS_KEY)  # the new file's own schema bookkeeping
_CLI_TIMEOUT = 300.0
_MAX_MISSES = 10_000  # rowids probed past the last row found, when the table's end is unreadable


@lazy_dataclass(frozen=True)
class CheckReport:
    path: str
    problems: list[str]  # [] when SQLite's integrity check says ok

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> JsonObject:
        return {"path": self.path, "ok": self.ok, "problems": list(self.problems)}


@lazy_dataclass
class RecoveryReport:
    path: str  # where the recovered database now is (the state's own path)
    backup: str  # where the damaged one was kept
    method: str  # "sqlite3 .recover" | "python"
    tables: dict[str, int] = field(default_factory=dict)  # rows in the recovered database
    incomplete: list[str] = field(default_factory=list)  # tables with rows under damaged pages

    def to_json(self) -> JsonObject:
        return {
            "path": self.path,
            "backup": self.backup,
            "method": self.method,
            "tables": dict(self.tables),
            "rows": sum(self.tables.values()),
            "incomplete": list(self.incomplete),
        }


def check_state(path: str) -> CheckReport:
    """``PRAGMA integrity_check`` of the state file, then its JSON values parsed (read-only: nothing
    is written, not even a log)."""
    _require_sqlite_file(path)
    return CheckReport(path, check_file(path, full=True))


def recover_state(path: str, *, wait: bool = True) -> RecoveryReport:
    """Salvage the state at ``path`` into a new file that takes its place; the old one is kept beside it."""
    _require_sqlite_file(path)
    with state_lock(path, "state recover", wait=wait):
        scratch = f"{path}.recovering-{os.getpid()}"
        _remove_database(scratch)
        try:
            report = _salvage(path, scratch)
            found = check_file(scratch, full=True)
            if found:
                raise StateError(f"The database recovered from {path} does not pass SQLite's check: {found[0]}")
            report.backup = _swap(path, scratch)
        finally:
            _remove_database(scratch)
        unmark(path)
    return report


def _require_sqlite_file(path: str) -> None:
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        raise StateError(f"No state database at {path}") from None
    except OSError as error:
        raise StateError(f"Cannot read the state database {path}: {error}") from None
    if head != SQLITE_HEADER:
        raise StateError(f"{path} is not a SQLite database: there is nothing rig can check or recover in it")


def _salvage(path: str, scratch: str) -> RecoveryReport:
    db, _ = sync_schema_file(scratch, _connect)  # the current schema, empty
    try:
        report = RecoveryReport(path, "", "python")
        recovered = _with_sqlite_shell(path) if shutil.which("sqlite3") else None
        if recovered is not None:
            report.method = "sqlite3 .recover"
            with contextlib.closing(recovered):
                _fill(db, recovered, report, probe=False)
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=15.0)) as damaged:
            _fill(db, damaged, report, probe=True)  # what the shell missed, or all of it without one
        for table in TABLES:
            report.tables[table] = int(db.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0])
        return report
    finally:
        db.close()


def _connect(path: str) -> sqlite3.Connection:
    return sqlite3.connect(path, timeout=15.0, isolation_level=None)


def _with_sqlite_shell(path: str) -> sqlite3.Connection | None:
    """The rows the ``sqlite3`` shell's ``.recover`` finds, in an in-memory database; None if it cannot."""
    try:
        dump = subprocess.run(
            ["sqlite3", "-readonly", path, ".recover"],
            capture_output=True,
            timeout=_CLI_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if dump.returncode != 0 or b"error" in dump.stderr.lower() or not dump.stdout:
        return None  # some builds' .recover fails on every database ("SQL logic error"): Python then does it
    memory = sqlite3.connect(":memory:", isolation_level=None)
    try:
        memory.executescript(dump.stdout.decode("utf-8", errors="replace"))
    except sqlite3.Error:
        memory.close()
        return None
    return memory


def _fill(target: sqlite3.Connection, source: sqlite3.Connection, report: RecoveryReport, *, probe: bool) -> None:
    """Copy what ``source`` still has of each table into ``target`` (columns both have)."""
    for table in TABLES:
        wanted = [str(row[1]) for row in target.execute(f'PRAGMA table_info("{table}")')]
        try:
            have = {str(row[1]) for row in source.execute(f'PRAGMA table_info("{table}")')}
        except sqlite3.DatabaseError:
            have = set()
        columns = [name for name in wanted if name in have]
        if not columns:
            if probe and table not in report.incomplete and not _has_rows(target, table):
                report.incomplete.append(table)
            continue
        rows, complete = _readable_rows(source, table, columns) if probe else (_all_rows(source, table, columns), True)
        json_columns = [index for index, name in enumerate(columns) if name.endswith("_json")]
        parsing = [row for row in rows if all(parses(row[index]) for index in json_columns)]
        complete, rows = complete and len(parsing) == len(rows), parsing  # a damaged cell loses its row
        if not complete and table not in report.incomplete:
            report.incomplete.append(table)
        if table == "runtime_metadata":
            key = columns.index("key")
            rows = [row for row in rows if row[key] not in _OWN_METADATA]
        names = ", ".join(f'"{name}"' for name in columns)
        marks = ", ".join("?" for _ in columns)
        target.execute("BEGIN")
        target.executemany(f'INSERT OR IGNORE INTO "{table}" ({names}) VALUES ({marks})', rows)
        target.execute("COMMIT")


def _has_rows(db: sqlite3.Connection, table: str) -> bool:
    return db.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone() is not None


def _all_rows(source: sqlite3.Connection, table: str, columns: Sequence[str]) -> list[Row]:
    names = ", ".join(f'"{name}"' for name in columns)
    try:
        return [tuple(row) for row in source.execute(f'SELECT {names} FROM "{table}"')]
    except sqlite3.DatabaseError:
        return []


def _readable_rows(source: sqlite3.Connection, table: str, columns: Sequence[str]) -> tuple[list[Row], bool]:
    """Every row still readable, and whether that is all of them (no read failed)."""
    names = ", ".join(f'"{name}"' for name in columns)
    select = f'SELECT rowid, {names} FROM "{table}" NOT INDEXED'
    try:
        return [tuple(row[1:]) for row in source.execute(select)], True
    except sqlite3.DatabaseError as error:
        if not _unreadable(error):
            raise
    forward: dict[int, Row] = {}
    if _scan(source, f"{select} ORDER BY rowid", forward):
        return [forward[key] for key in sorted(forward)], True
    backward: dict[int, Row] = {}
    _scan(source, f"{select} ORDER BY rowid DESC", backward)
    found = {**forward, **backward}
    # Between the last row read from the start and the first read from the end, one rowid at a time:
    # a lookup that passes through a damaged page fails, the others find their row.
    rowid, high = max(forward, default=0) + 1, min(backward, default=None)
    misses = 0
    while (rowid < high) if high is not None else (misses < _MAX_MISSES):
        try:
            row = source.execute(f"{select} WHERE rowid = ?", (rowid,)).fetchone()
        except sqlite3.DatabaseError as error:
            if not _unreadable(error):
                raise
            row = None
        if row is None:
            misses += 1
        else:
            found[int(row[0])], misses = tuple(row[1:]), 0
        rowid += 1
    return [found[key] for key in sorted(found)], False


def _scan(source: sqlite3.Connection, query: str, found: dict[int, Row]) -> bool:
    """Read rows in the query's order into ``found`` until the end (True) or a damaged page (False)."""
    try:
        for row in _rows(source, query):
            rowid = row[0]
            assert isinstance(rowid, int)  # the query's first column is the rowid
            found[rowid] = tuple(row[1:])
    except sqlite3.DatabaseError as error:
        if not _unreadable(error):
            raise
        return False
    return True


def _rows(source: sqlite3.Connection, query: str) -> Iterator[Row]:
    yield from source.execute(query)


def _unreadable(error: sqlite3.DatabaseError) -> bool:
    return is_damage(error) or isinstance(error, sqlite3.OperationalError)


def _swap(path: str, recovered: str) -> str:
    """Keep the damaged file (and its log) as ``<path>.damaged-<UTC time>``; put ``recovered`` at ``path``."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    backup, attempt = f"{path}.damaged-{stamp}", 1
    while os.path.exists(backup):
        backup, attempt = f"{path}.damaged-{stamp}-{attempt}", attempt + 1
    try:
        os.link(path, backup)  # the old file stays at path until the new one replaces it
    except OSError:
        shutil.copy2(path, backup)
    for suffix in ("-wal", "-shm"):  # a log left beside the new file would be replayed into it
        if os.path.exists(path + suffix):
            os.replace(path + suffix, backup + suffix)
    os.replace(recovered, path)
    return backup


def _remove_database(path: str) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path + suffix)


__all__ = ["CheckReport", "RecoveryReport", "check_state", "recover_state"]

"""``rig state copy``: every row of one state into an empty other, in one transaction, verified by counts.

Either direction (SQLite → PostgreSQL when a team adopts rig, back when going offline). The
source is opened read-only and read in one snapshot (a read transaction), so it is never
written, migrated or locked and a writer working on it meanwhile cannot make the copy torn. The
target is created or migrated as usual, must hold no rows, is locked for the copy, and gets
everything in a single write transaction: a failure leaves it as empty as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rigcli.errors import StateError
from rigcli.jsonutil import JsonObject
from rigcli.speed.records import lazy_dataclass
from rigcli.state.api import StateStore
from rigcli.state.damage import check_file, damaged, summary
from rigcli.state.database import StateDatabase
from rigcli.state.dialect import Column, Connection, Row, placeholders
from rigcli.state.migrations import DATA_TABLES, MIGRATIONS_KEY, RIG_VERSION_KEY
from rigcli.state.postgres.store import PostgresStateStore
from rigcli.state.schema_version import SCHEMA_VERSION_KEY
from rigcli.state.store import SQLiteStateStore

CopyableStore = SQLiteStateStore | PostgresStateStore

# Every table of the schema; metadata first, so a copy that fails midway is still one transaction.
TABLES = DATA_TABLES
# The target's own bookkeeping (its schema, the rig that wrote it, who holds its lock) is never copied.
_OWN_METADATA = (SCHEMA_VERSION_KEY, MIGRATIONS_KEY, RIG_VERSION_KEY, "project.dir", "config.path")
_BATCH = 500


@lazy_dataclass(frozen=True)
class CopyReport:
    source: str  # location (masked)
    source_backend: str
    target: str
    target_backend: str
    tables: dict[str, int]  # rows copied per table (verified in the target)

    def to_json(self) -> JsonObject:
        return {
            "source": {"backend": self.source_backend, "url": self.source},
            "target": {"backend": self.target_backend, "url": self.target},
            "tables": dict(self.tables),
            "rows": sum(self.tables.values()),
        }


def _copied_metadata(key: str) -> bool:
    return key not in _OWN_METADATA and not key.startswith("lock.holder")


@contextmanager
def _snapshot(store: StateDatabase) -> Iterator[Connection]:
    """The source's rows as of one moment: a read-only transaction, ended without writing anything."""
    with store._read() as db:
        begin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" if store.backend == "postgresql" else "BEGIN"
        db.execute(begin)
        try:
            yield db
        finally:
            db.execute("ROLLBACK")


def _counts(db: Connection, *, skip_own_metadata: bool) -> dict[str, int]:
    counts: dict[str, int] = {}
    for table in TABLES:
        if table == "runtime_metadata":
            keys = [str(row[0]) for row in db.execute('SELECT "key" FROM runtime_metadata')]
            counts[table] = sum(1 for key in keys if _copied_metadata(key)) if skip_own_metadata else len(keys)
        else:
            counts[table] = int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    return counts


def _adapt(row: Row, columns: list[Column]) -> tuple[object, ...]:
    """A source row for the target: booleans become bools where the target has a boolean type."""
    pairs = zip(row, columns, strict=True)
    return tuple(bool(value) if column.boolean and value is not None else value for value, column in pairs)


def _rows(source: StateDatabase, db: Connection, table: str, names: list[str]) -> list[Row]:
    try:
        found = list(db.execute(f"SELECT {', '.join(_quoted(names))} FROM {table}"))
    except Exception as error:  # read inside the target's transaction: said of the source, not the target
        mapped = source._driver_error(error)
        if mapped is None:
            raise
        raise mapped from error
    if table == "runtime_metadata":
        key = names.index("key")
        found = [row for row in found if _copied_metadata(str(row[key]))]
    return found


def _quoted(names: list[str]) -> list[str]:
    return [f'"{name}"' for name in names]


def _check_empty(target: CopyableStore) -> None:
    with target._read() as db:
        counts = _counts(db, skip_own_metadata=True)
    filled = {table: count for table, count in counts.items() if count}
    if filled:
        detail = ", ".join(f"{table}: {count}" for table, count in filled.items())
        msg = f"Target state {target.path} is not empty ({detail}); rig state copy only fills an empty state"
        raise StateError(msg)


def _own(store: StateStore) -> CopyableStore:
    if not isinstance(store, (SQLiteStateStore, PostgresStateStore)):
        raise StateError(f"rig state copy works on rig's own state stores, not {type(store).__name__}")
    return store


def copy_state(source_store: StateStore, target_store: StateStore) -> CopyReport:
    """Copy every row of ``source`` (opened read-only) into the empty ``target``; verify the counts."""
    source, target = _own(source_store), _own(target_store)
    if (source.backend, source.path, getattr(source, "schema", None)) == (
        target.backend,
        target.path,
        getattr(target, "schema", None),
    ):
        raise StateError(f"The source and the target are the same state ({source.path})")
    if source.backend == "sqlite":  # a damaged source is refused whole: no half-right copy
        problems = check_file(source.path)
        if problems:
            raise damaged(source.path, summary(problems))
    target.sync_schema()
    with target.lock("state copy", wait=False):
        _check_empty(target)
        with _snapshot(source) as read:
            expected = _counts(read, skip_own_metadata=True)
            with target._write() as write:
                for table in TABLES:
                    wanted = target.dialect.columns(write, table)
                    have = {column.name for column in source.dialect.columns(read, table)}
                    columns = [column for column in wanted if column.name in have]
                    names = [column.name for column in columns]
                    found = _rows(source, read, table, names)  # its errors are the source's (_rows)
                    insert = f"INSERT INTO {table} ({', '.join(_quoted(names))}) VALUES ({placeholders(len(names))})"
                    if table == "runtime_metadata":
                        insert += ' ON CONFLICT("key") DO UPDATE SET value_json = excluded.value_json'
                    for start in range(0, len(found), _BATCH):
                        write.executemany(insert, [_adapt(row, columns) for row in found[start : start + _BATCH]])
        with target._read() as db:
            copied = _counts(db, skip_own_metadata=True)
    if copied != expected:
        msg = f"Copy to {target.path} did not verify: expected {expected}, found {copied}"
        raise StateError(msg)
    return CopyReport(source.path, source.backend, target.path, target.backend, copied)


__all__ = ["TABLES", "CopyReport", "copy_state"]

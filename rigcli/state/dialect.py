"""The dialect seam: the one connection shape every state module writes SQL against.

Why a seam and not SQLAlchemy Core: the SQLite path is rig's hot path (a cached ``rig plan``
has a budget of about 0.3 s, and importing SQLAlchemy alone costs most of that), and rig's SQL
is a few dozen short statements that are already portable. So the state modules keep writing
plain SQL with ``?`` placeholders against ``StateDatabase._read()`` / ``_write()``, and what
truly differs per backend is small enough to name here:

- placeholders (``?`` and ``:name``) — PostgreSQL's driver wants ``%s`` / ``%(name)s``; its
  connection wrapper translates (``state/postgres/connection.py``);
- booleans — write them as ``TRUE``/``FALSE`` literals or bound Python bools, never ``0``/``1``
  (SQLite stores 0/1 either way; PostgreSQL refuses ``boolean = integer``);
- "newest first" ties (rows stamped in the same microsecond) — broken by ``id``, never ``rowid``;
- catalog queries (which tables exist, a table's columns) and how a write transaction begins
  (``BEGIN IMMEDIATE`` vs ``BEGIN``) — methods of ``Dialect``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from rigcli.speed.records import lazy_dataclass

# A row as a driver returns it: each column's type comes from the schema, which Python cannot see.
Row = tuple[Any, ...]
Params = Sequence[object] | Mapping[str, object]


class Cursor(Protocol):
    """What ``execute`` returns: rows to fetch or iterate (state/rows.py maps them by column name),
    and how many rows a write changed."""

    @property
    def rowcount(self) -> int: ...

    @property
    def description(self) -> Sequence[Sequence[object]] | None:
        """The result's columns; each one's name comes first (DB-API), on every driver."""
        ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """What ``StateDatabase._read()`` and ``_write()`` yield: ``sqlite3.Connection`` has this shape."""

    def execute(self, sql: str, parameters: Params = (), /) -> Cursor: ...

    def executemany(self, sql: str, seq_of_parameters: Iterable[Params], /) -> Cursor: ...


@lazy_dataclass(frozen=True)
class Column:
    """A table column, and whether its values are booleans."""

    name: str
    boolean: bool  # values must be bound as Python bools on backends with a real boolean type


class Dialect(Protocol):
    """The catalog and transaction statements that differ between backends."""

    name: str  # "sqlite" | "postgresql"

    def begin_write(self, db: Connection) -> None:
        """Start a write transaction that will not deadlock on a read-to-write upgrade."""
        ...

    def begin_migration(self, db: Connection) -> None:
        """Start the transaction one migration runs in, serialised against other migrating rigs."""
        ...

    def list_tables(self, db: Connection) -> list[str]:
        """Names of rig's (and anyone else's) tables where this store lives, sorted."""
        ...

    def columns(self, db: Connection, table: str) -> list[Column]:
        """``table``'s columns in declaration order."""
        ...

    def text_bytes(self, column: str) -> str:
        """An expression for ``length`` bytes of text ``column``'s UTF-8 from byte ``start`` (1-based):
        it takes the placeholders ``start, length``, in that order."""
        ...


class SQLiteDialect:
    name = "sqlite"

    def begin_write(self, db: Connection) -> None:
        # Take the write lock up front: a deferred transaction that reads and then writes can
        # fail with SQLITE_BUSY instead of waiting out the busy timeout.
        db.execute("BEGIN IMMEDIATE")

    def begin_migration(self, db: Connection) -> None:
        db.execute("BEGIN IMMEDIATE")

    def list_tables(self, db: Connection) -> list[str]:
        rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        return sorted(str(row[0]) for row in rows if not str(row[0]).startswith("sqlite_"))

    def columns(self, db: Connection, table: str) -> list[Column]:
        rows = db.execute(f'PRAGMA table_info("{table}")').fetchall()
        return [Column(str(row[1]), str(row[2]).upper() == "BOOLEAN") for row in rows]

    def text_bytes(self, column: str) -> str:
        # A TEXT value cast to BLOB is its stored UTF-8 as it is: substr then counts bytes.
        return f"substr(CAST({column} AS BLOB), ?, ?)"


SQLITE = SQLiteDialect()


def placeholders(count: int) -> str:
    """``?, ?, ?`` for an ``IN (...)`` list of ``count`` values."""
    return ", ".join("?" * count)


def where_clause(
    equal: Sequence[tuple[str, object | None]], *, statuses: Collection[str] | None = None
) -> tuple[str, list[object]] | None:
    """``WHERE a = ? AND status IN (...)`` for the filters given (None: not filtered on), with
    its parameters; None when ``statuses`` is empty, which no row can match."""
    clauses: list[str] = []
    params: list[object] = []
    for column, value in equal:
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if statuses is not None:
        if not statuses:
            return None
        clauses.append(f"status IN ({placeholders(len(statuses))})")
        params.extend(statuses)
    return (f"WHERE {' AND '.join(clauses)}" if clauses else "", params)


__all__ = [
    "SQLITE",
    "Column",
    "Connection",
    "Cursor",
    "Dialect",
    "Params",
    "Row",
    "SQLiteDialect",
    "placeholders",
    "where_clause",
]

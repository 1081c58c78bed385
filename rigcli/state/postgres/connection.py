"""psycopg behind the dialect seam: connecting, ``?`` → ``%s``, one-line errors with the URL masked.

psycopg is imported here and only here, and only once a PostgreSQL URL is used; without it the
user gets one line saying what to install. Connections run in autocommit mode: a read is one
statement, and ``StateDatabase._write`` brackets writes with explicit ``BEGIN``/``COMMIT``.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from rigcli.errors import StateError
from rigcli.speed.digests import sha256
from rigcli.state.dialect import Column, Connection, Cursor, Params
from rigcli.state.postgres.url import PostgresURL

if TYPE_CHECKING:
    import psycopg

INSTALL_HINT = "pip install 'rig[postgres]'"
# Client and server keepalives: a peer that vanished (SIGKILL is seen at once; a cut cable is
# not) is noticed within about idle + interval * count seconds, and its session — with any
# advisory lock it held — ends. Only libpq's defaults are changed; the URL can override them.
KEEPALIVES = {"keepalives": "1", "keepalives_idle": "10", "keepalives_interval": "5", "keepalives_count": "3"}
SERVER_KEEPALIVES = "-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3"
CONNECT_TIMEOUT = "10"


def import_psycopg(masked_url: str) -> Any:
    """psycopg, imported without what a synchronous client never uses (``DRIVER_RARELY_USED``)."""
    from rigcli.speed.deferred import DRIVER_RARELY_USED
    from rigcli.speed.imports import import_deferring

    try:
        return import_deferring("psycopg", DRIVER_RARELY_USED)
    except ImportError:
        msg = f"State URL {masked_url} needs the PostgreSQL driver psycopg: {INSTALL_HINT}"
        raise StateError(msg) from None


def one_line(error: BaseException, url: PostgresURL) -> str:
    """A driver message as one line (libpq's are multi-line), with the password scrubbed out."""
    parts = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = "; ".join(parts) or type(error).__name__
    return url.scrub(text)


def state_error(error: BaseException, url: PostgresURL, *, doing: str = "") -> StateError | None:
    """The StateError for a psycopg error (None for anything else)."""
    psycopg = import_psycopg(url.masked)
    if not isinstance(error, psycopg.Error):
        return None
    what = f" ({doing})" if doing else ""
    return StateError(f"State database {url.masked}{what}: {one_line(error, url)}")


@functools.lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """``?`` → ``%s`` and ``:name`` → ``%(name)s`` outside quotes; ``%`` → ``%%`` everywhere."""
    out: list[str] = []
    quote: str | None = None
    index, length = 0, len(sql)
    while index < length:
        char = sql[index]
        if char == "%":
            out.append("%%")
        elif quote is not None:
            out.append(char)
            if char == quote:
                quote = None
        elif char in ("'", '"'):
            quote = char
            out.append(char)
        elif char == "?":
            out.append("%s")
        elif char == ":" and index + 1 < length and (sql[index + 1].isalpha() or sql[index + 1] == "_"):
            if index > 0 and sql[index - 1] == ":":  # a PostgreSQL cast (value::type), not a parameter
                out.append(char)
            else:
                end = index + 1
                while end < length and (sql[end].isalnum() or sql[end] == "_"):
                    end += 1
                out.append(f"%({sql[index + 1 : end]})s")
                index = end
                continue
        else:
            out.append(char)
        index += 1
    return "".join(out)


def _bind(parameters: Params) -> Any:
    return dict(parameters) if isinstance(parameters, Mapping) else tuple(parameters)


class PgConnection:
    """The ``Connection`` shape over one psycopg connection (``?`` placeholders, tuples for rows)."""

    def __init__(self, raw: psycopg.Connection[Any], url: PostgresURL) -> None:
        self.raw = raw
        self.url = url

    def execute(self, sql: str, parameters: Params = (), /) -> Cursor:
        cursor = self.raw.cursor()
        cursor.execute(translate(sql), _bind(parameters))
        return cursor

    def executemany(self, sql: str, seq_of_parameters: Iterable[Params], /) -> Cursor:
        cursor = self.raw.cursor()
        cursor.executemany(translate(sql), [_bind(item) for item in seq_of_parameters])
        return cursor

    @property
    def in_transaction(self) -> bool:
        return int(self.raw.info.transaction_status) != 0  # psycopg.pq.TransactionStatus.IDLE

    @property
    def broken(self) -> bool:
        return bool(self.raw.closed or self.raw.broken)

    @property
    def server_version(self) -> str:
        number = int(self.raw.info.server_version)  # 150004 → 15.4 (PostgreSQL ≥ 10 numbering)
        return f"{number // 10000}.{number % 10000}"

    def close(self) -> None:
        # Closing a connection that already broke must not hide the real error.
        with contextlib.suppress(Exception):
            self.raw.close()


def _settings(url: PostgresURL, schema: str, application_name: str) -> dict[str, str]:
    """libpq parameters rig adds to the URL's (never overriding what the user wrote)."""
    psycopg = import_psycopg(url.masked)
    given = psycopg.conninfo.conninfo_to_dict(url.conninfo)
    extra = {key: value for key, value in KEEPALIVES.items() if key not in given}
    if "connect_timeout" not in given and "PGCONNECT_TIMEOUT" not in os.environ:
        extra["connect_timeout"] = url.connect_timeout or CONNECT_TIMEOUT
    if "application_name" not in given and "PGAPPNAME" not in os.environ:
        extra["application_name"] = application_name
    # search_path names the project's schema, so the state modules' SQL needs no schema prefix.
    options = str(given.get("options") or os.environ.get("PGOPTIONS") or "")
    extra["options"] = f"{options} -c search_path={schema} {SERVER_KEEPALIVES}".strip()
    return extra


def connect(url: PostgresURL, schema: str, *, application_name: str = "rig") -> PgConnection:
    """A new autocommit connection whose search_path is ``schema``; errors are one masked line."""
    psycopg = import_psycopg(url.masked)
    try:
        raw = psycopg.connect(url.conninfo, autocommit=True, **_settings(url, schema, application_name))
    except psycopg.Error as error:
        raise StateError(f"Cannot connect to the state database {url.masked}: {one_line(error, url)}") from None
    return PgConnection(raw, url)


def _key31(text: str) -> int:
    return int.from_bytes(sha256(text.encode()).digest()[:4], "big") & 0x7FFFFFFF


def advisory_key(schema: str, scope: str) -> tuple[int, int]:
    """The two-int advisory lock key of (schema, scope): 62 bits, non-negative, per database."""
    return _key31(f"rig-schema:{schema}"), _key31(f"rig-scope:{scope}")


class PostgresDialect:
    """Catalog queries for one schema; migrations serialise on a transaction-level advisory lock."""

    name = "postgresql"

    def __init__(self, schema: str) -> None:
        self.schema = schema

    def begin_write(self, db: Connection) -> None:
        db.execute("BEGIN")

    def begin_migration(self, db: Connection) -> None:
        # A separate key from the writer lock: a reader migrating a fresh schema must not wait
        # for a writer's whole apply, and the xact lock ends with the transaction.
        db.execute("BEGIN")
        db.execute("SELECT pg_advisory_xact_lock(?, ?)", advisory_key(self.schema, "migrate"))
        # Looked up first: CREATE SCHEMA IF NOT EXISTS still needs the database's CREATE
        # privilege, which a teammate's role may lack once the schema exists.
        if db.execute("SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = ?", (self.schema,)).fetchone() is None:
            db.execute(f"CREATE SCHEMA {self.schema}")

    def list_tables(self, db: Connection) -> list[str]:
        rows = db.execute("SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = ?", (self.schema,))
        return sorted(str(row[0]) for row in rows)

    def text_bytes(self, column: str) -> str:
        return f"substring(convert_to({column}, 'UTF8') from CAST(? AS integer) for CAST(? AS integer))"

    def columns(self, db: Connection, table: str) -> list[Column]:
        rows = db.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position",
            (self.schema, table),
        )
        return [Column(str(row[0]), str(row[1]) == "boolean") for row in rows]


__all__ = [
    "INSTALL_HINT",
    "PgConnection",
    "PostgresDialect",
    "advisory_key",
    "connect",
    "import_psycopg",
    "one_line",
    "state_error",
    "translate",
]

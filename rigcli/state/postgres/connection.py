"""psycopg behind the dialect seam: connecting, ``?`` → ``%s``, one-line errors with the URL masked.

psycopg is imported here and only here, and only once a PostgreSQL URL is used; without it the
user gets one line saying what to install. Connections run in autocommit mode: a read is one
statement, and ``StateDatabase._write`` brackets writes with explicit ``BEGIN``/``COMMIT``.

Every wait on the server is bounded (``rigcli/timeouts.py``): connecting by libpq's
``connect_timeout`` (RIG_CONNECT_TIMEOUT unless the URL or ``PGCONNECT_TIMEOUT`` sets one), each
statement by RIG_READ_TIMEOUT (a bulk ``executemany`` by RIG_LONG_TIMEOUT) through the
``watchdog``. The writer lock's wait is no statement (it polls ``pg_try_advisory_lock``), and a
migration's wait for another's transaction lock is left unbounded on purpose. Running out of a
bound is one StateError naming the database and the bound.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from rigcli.errors import StateError
from rigcli.speed.digests import sha256
from rigcli.state.dialect import Column, Connection, Cursor, Params
from rigcli.state.postgres.url import PostgresURL
from rigcli.state.postgres.watchdog import WATCHDOG, shut_down
from rigcli.timeouts import Bound, connect_bound, long_bound, read_bound

if TYPE_CHECKING:
    import psycopg

INSTALL_HINT = "pip install 'rig[postgres]'"
# Client and server keepalives: a peer that vanished (SIGKILL is seen at once; a cut cable is
# not) is noticed within about idle + interval * count seconds, and its session — with any
# advisory lock it held — ends. Only libpq's defaults are changed; the URL can override them.
KEEPALIVES = {"keepalives": "1", "keepalives_idle": "10", "keepalives_interval": "5", "keepalives_count": "3"}
SERVER_KEEPALIVES = "-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3"


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
    """The ``Connection`` shape over one psycopg connection (``?`` placeholders, tuples for rows), each
    statement bounded (see the module)."""

    def __init__(self, raw: psycopg.Connection[Any], url: PostgresURL) -> None:
        self.raw = raw
        self.url = url
        self._reading, self._bulk = read_bound(), long_bound()
        self._unbounded = False  # set while a statement waits on purpose (unbounded())
        self._cut: Bound | None = None  # the bound the watchdog cut this connection at

    def execute(self, sql: str, parameters: Params = (), /) -> Cursor:
        cursor = self.raw.cursor()
        if self._unbounded:
            cursor.execute(translate(sql), _bind(parameters))
            return cursor
        WATCHDOG.arm(self, self._reading)
        try:
            cursor.execute(translate(sql), _bind(parameters))
        except Exception:
            self._raise_if_cut()
            raise
        finally:
            WATCHDOG.disarm(self)
        return cursor

    def executemany(self, sql: str, seq_of_parameters: Iterable[Params], /) -> Cursor:
        cursor = self.raw.cursor()
        WATCHDOG.arm(self, self._bulk)
        try:
            cursor.executemany(translate(sql), [_bind(item) for item in seq_of_parameters])
        except Exception:
            self._raise_if_cut()
            raise
        finally:
            WATCHDOG.disarm(self)
        return cursor

    @contextlib.contextmanager
    def unbounded(self) -> Iterator[None]:
        """Statements in this block wait as long as the server makes them (a lock wait with rules of its own)."""
        self._unbounded = True
        try:
            yield
        finally:
            self._unbounded = False

    def cut_off(self, bound: Bound) -> None:
        """The statement outlived ``bound`` (the watchdog's thread): end its wait; the connection is gone."""
        self._cut = bound
        shut_down(self.raw.fileno())

    def _raise_if_cut(self) -> None:
        if self._cut is not None:
            raise StateError(f"State database {self.url.masked}: no answer within {self._cut}") from None

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
        extra["connect_timeout"] = url.connect_timeout or _whole_seconds(connect_bound())
    if "application_name" not in given and "PGAPPNAME" not in os.environ:
        extra["application_name"] = application_name
    # search_path names the project's schema, so the state modules' SQL needs no schema prefix.
    options = str(given.get("options") or os.environ.get("PGOPTIONS") or "")
    extra["options"] = f"{options} -c search_path={schema} {SERVER_KEEPALIVES}".strip()
    return extra


def _whole_seconds(bound: Bound) -> str:
    """libpq's connect_timeout is whole seconds (and at least 2): the bound rounded up."""
    return str(max(2, -int(-bound.seconds // 1)))


def connect(url: PostgresURL, schema: str, *, application_name: str = "rig") -> PgConnection:
    """A new autocommit connection whose search_path is ``schema``; errors are one masked line (one that ran
    out of rig's connect bound names it)."""
    psycopg = import_psycopg(url.masked)
    settings = _settings(url, schema, application_name)
    try:
        raw = psycopg.connect(url.conninfo, autocommit=True, **settings)
    except psycopg.Error as error:
        reason = one_line(error, url)
        if "timeout expired" in reason and "connect_timeout" in settings and url.connect_timeout is None:
            reason += f": no answer within {Bound(float(settings['connect_timeout']), connect_bound().variable)}"
        raise StateError(f"Cannot connect to the state database {url.masked}: {reason}") from None
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
        waiting = db.unbounded() if isinstance(db, PgConnection) else contextlib.nullcontext()
        with waiting:  # another rig's migration may take a while: its lock is waited for, not timed out
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

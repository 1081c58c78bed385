"""Where a rig command's time goes on PostgreSQL state, measured inside the rig process.

The ``apply-postgres`` row runs it with the timed install's interpreter, ``python -I
postgres_probe.py RIG_ARGS...`` (``-I``: this file's folder stays off ``sys.path``): rig runs as
its console script would, and on exit one line ``POSTGRES_PROBE {json}`` on stderr gives the
milliseconds spent importing the driver, connecting (that import left out) and sending
statements, and how many statements were sent. It wraps rig's own seams
(``rigcli.state.postgres.connection``), so it reads what rig pays, with rig's deferred imports.
"""

from __future__ import annotations

import atexit
import json
import sys
import time
from typing import Any

MARKER = "POSTGRES_PROBE "


def _install(spent: dict[str, float]) -> None:
    from rigcli.state.postgres import connection, store

    import_psycopg, connect = connection.import_psycopg, connection.connect
    execute, executemany = connection.PgConnection.execute, connection.PgConnection.executemany

    def timed_import(masked_url: str) -> Any:
        started = time.perf_counter()
        try:
            return import_psycopg(masked_url)
        finally:
            spent["import_ms"] += (time.perf_counter() - started) * 1000

    def timed_connect(*args: Any, **kwargs: Any) -> Any:
        started, imported = time.perf_counter(), spent["import_ms"]
        try:
            return connect(*args, **kwargs)
        finally:
            spent["connect_ms"] += (time.perf_counter() - started) * 1000 - (spent["import_ms"] - imported)

    def counted(method: Any) -> Any:
        def send(self: Any, *args: Any) -> Any:
            started = time.perf_counter()
            try:
                return method(self, *args)
            finally:
                spent["statements_ms"] += (time.perf_counter() - started) * 1000
                spent["statements"] += 1

        return send

    connection.import_psycopg = timed_import
    connection.connect = timed_connect
    store.connect = timed_connect  # type: ignore[attr-defined]  # the store took the name at import
    connection.PgConnection.execute = counted(execute)  # type: ignore[method-assign]
    connection.PgConnection.executemany = counted(executemany)  # type: ignore[method-assign]


def main() -> None:
    spent = {"import_ms": 0.0, "connect_ms": 0.0, "statements_ms": 0.0, "statements": 0}
    _install(spent)
    atexit.register(lambda: sys.stderr.write(MARKER + json.dumps(spent) + "\n"))
    from rigcli.__main__ import main as rig

    sys.argv = ["rig", *sys.argv[1:]]
    raise SystemExit(rig())


if __name__ == "__main__":
    main()

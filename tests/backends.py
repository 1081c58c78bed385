"""The state backends the conformance suites run on, and raw SQL against either (not through rig).

A test names a database by its *location*: a SQLite path, or a PostgreSQL URL (with password and
``schema=``). ``rows``/``execute`` talk to it with the driver directly, ``?`` placeholders both ways.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from rigcli.state.postgres.connection import translate

BACKENDS = ("sqlite", "postgresql")


def is_postgres(location: str | Path) -> bool:
    return str(location).startswith(("postgresql://", "postgres://"))


def _pg(location: str) -> tuple[str, str]:
    """(libpq URL without rig's parameters, schema) of a state URL."""
    parts = urlsplit(location)
    pairs = parse_qsl(parts.query)
    schema = next((value for key, value in pairs if key == "schema"), "rig")
    rest = "&".join(f"{key}={value}" for key, value in pairs if key not in ("schema", "fragments_schema"))
    return f"{parts.scheme}://{parts.netloc}{parts.path}" + (f"?{rest}" if rest else ""), schema


def rows(location: str | Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` from the database at ``location`` (its own schema on PostgreSQL)."""
    if is_postgres(location):
        import psycopg

        url, schema = _pg(str(location))
        with psycopg.connect(url, autocommit=True, options=f"-c search_path={schema}") as connection:
            cursor = connection.execute(translate(sql), params)  # type: ignore[arg-type]
            return [tuple(row) for row in cursor.fetchall()] if cursor.description else []
    connection = sqlite3.connect(str(location))
    try:
        return list(connection.execute(sql, params).fetchall())
    finally:
        connection.close()


def execute(location: str | Path, sql: str, params: tuple[Any, ...] = ()) -> None:
    if is_postgres(location):
        rows(location, sql, params)
        return
    connection = sqlite3.connect(str(location))
    try:
        with connection:
            connection.execute(sql, params)
    finally:
        connection.close()


def dict_rows(location: str | Path, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    """Rows as {column: value}, for comparing a whole row."""
    if is_postgres(location):
        import psycopg
        from psycopg.rows import dict_row

        url, schema = _pg(str(location))
        with psycopg.connect(url, autocommit=True, options=f"-c search_path={schema}", row_factory=dict_row) as db:
            return list(db.execute(translate(sql), params).fetchall())  # type: ignore[arg-type]
    connection = sqlite3.connect(str(location))
    connection.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in connection.execute(sql, params).fetchall()]
    finally:
        connection.close()


__all__ = ["BACKENDS", "dict_rows", "execute", "is_postgres", "rows"]

"""Helpers shared by the engine tests: config writing, async running, SQLite peeking."""

from __future__ import annotations

import asyncio
import functools
import inspect
import sqlite3
import textwrap
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

# An engine that hangs must fail the test, not the whole run.
SCENARIO_TIMEOUT = 120.0


def run_async(fn: Callable[..., Awaitable[T]]) -> Callable[..., T]:
    """Turn an ``async def`` test into a sync one that runs on a fresh event loop."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        async def bounded() -> T:
            return await asyncio.wait_for(fn(*args, **kwargs), SCENARIO_TIMEOUT)

        return asyncio.run(bounded())

    return wrapper


def write_config(project_dir: Path, source: str, name: str = "rig_config.py") -> Path:
    """Write a rig config (dedented Python source) into the project and return its path."""
    path = project_dir / name
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return path


def query(db_path: str | Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows from a real SQLite file, read with the standard library (not through rig)."""
    connection = sqlite3.connect(str(db_path))
    try:
        return list(connection.execute(sql, params).fetchall())
    finally:
        connection.close()


def execute(db_path: str | Path, sql: str, params: tuple[Any, ...] = ()) -> None:
    connection = sqlite3.connect(str(db_path))
    try:
        with connection:
            connection.execute(sql, params)
    finally:
        connection.close()


def assert_matches(actual: Any, expected: Mapping[str, Any]) -> None:
    """Subset match: every key of ``expected`` is in ``actual`` with an equal value."""
    assert isinstance(actual, Mapping), f"expected a mapping, got {actual!r}"
    subset = {key: actual.get(key, "<missing>") for key in expected}
    assert subset == dict(expected)


async def resolve(value: Any) -> Any:
    """Await ``value`` if it is awaitable (for API calls that may be sync or async)."""
    if inspect.isawaitable(value):
        return await value
    return value


async def reason_codes(engine: Any, workflow: str | None = None) -> dict[str, str]:
    """``{node path: reason code}`` from ``engine.explain``."""
    explanations = await engine.explain(workflow=workflow)
    return {item.path: item.reason.code for item in explanations}


class EngineFactory:
    """``create_engine`` that remembers its engines and closes them when the test ends."""

    def __init__(self) -> None:
        self.engines: list[Any] = []

    def __call__(self, project_dir: Path | str, **options: Any) -> Any:
        from rigcli.engine import create_engine

        engine = create_engine(str(project_dir), **options)
        self.engines.append(engine)
        return engine

    def close(self, engine: Any) -> None:
        """Close one engine now (it is not closed again at teardown)."""
        if engine in self.engines:
            self.engines.remove(engine)
        _close_engine(engine)

    def close_all(self) -> None:
        engines, self.engines = self.engines, []
        for engine in engines:
            _close_engine(engine)


def _close_engine(engine: Any) -> None:
    close = getattr(engine, "close", None)
    if close is None:
        return
    result = close()
    if inspect.isawaitable(result):
        asyncio.run(_await(result))


async def _await(value: Awaitable[Any]) -> Any:
    return await value


__all__ = [
    "SCENARIO_TIMEOUT",
    "EngineFactory",
    "assert_matches",
    "execute",
    "query",
    "reason_codes",
    "resolve",
    "run_async",
    "write_config",
]

"""Helpers shared by the engine tests: the project harness, config writing, async running, SQLite peeking."""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import textwrap
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.backends import execute as raw_execute
from tests.backends import is_postgres, rows

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


def _unmasked(location: str | Path) -> str | Path:
    """The test's own PostgreSQL URL for the masked one rig reports (``get_project_info().state_path``)."""
    if not is_postgres(location):
        return location
    configured = os.environ.get("RIG_STATE_URL", "")
    from rigcli.state.postgres.url import mask_url

    assert str(location) in (configured, mask_url(configured)), f"not this test's database: {mask_url(str(location))}"
    return configured


def query(db_path: str | Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows from the real state database (a SQLite file, or the test's PostgreSQL schema), not through rig."""
    return rows(_unmasked(db_path), sql, params)


def execute(db_path: str | Path, sql: str, params: tuple[Any, ...] = ()) -> None:
    raw_execute(_unmasked(db_path), sql, params)


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
    explanations = await engine.cache.explain(workflow=workflow)
    return {item.path: item.reason.code for item in explanations}


class EngineProject:
    """The test's project directory (created empty) and the engines opened over it, closed when the test ends.

    ``env`` (on :meth:`engine`, :meth:`loaded` and :meth:`applied`) sets environment variables, for
    the rest of the test, just before the engine is created: "apply with X=1, then load a fresh
    engine with X=2" is two calls. Every other keyword option goes to ``create_engine``.
    """

    def __init__(self, path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        path.mkdir()
        self.path = path
        self.backend = "sqlite"  # or "postgresql": the conftest sets RIG_STATE_URL then
        self.engines: list[Any] = []
        self._monkeypatch = monkeypatch

    def state_location(self, sqlite_path: Path) -> str:
        """Where a test that names its state file keeps it: that file, or on PostgreSQL the test's schema."""
        return os.environ["RIG_STATE_URL"] if self.backend == "postgresql" else str(sqlite_path)

    def write_config(self, source: str, name: str = "rig_config.py") -> Path:
        return write_config(self.path, source, name)

    def engine(self, *, env: Mapping[str, str] | None = None, **options: Any) -> Any:
        """A new engine over the project, not loaded yet."""
        from rigcli.engine import create_engine

        for name, value in (env or {}).items():
            self._monkeypatch.setenv(name, value)
        engine = create_engine(str(self.path), **options)
        self.engines.append(engine)
        return engine

    async def loaded(self, *, env: Mapping[str, str] | None = None, **options: Any) -> Any:
        """A new engine that has loaded the project's config."""
        engine = self.engine(env=env, **options)
        await engine.load()
        return engine

    async def applied(self, *, env: Mapping[str, str] | None = None, **options: Any) -> Any:
        """A new, loaded engine that has applied its workflow once (the apply result is not kept)."""
        engine = await self.loaded(env=env, **options)
        await engine.planner.apply()
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


def record_events(engine: Any) -> list[dict[str, Any]]:
    """The list every event the engine emits from now on is appended to, as its JSON document."""
    events: list[dict[str, Any]] = []
    engine.on_event(lambda event: events.append(event.to_json()))
    return events


def fragment_locator(fragment_root: Path) -> Callable[[Any], dict[str, str]]:
    """A ``fragment_state_locator`` keeping each global fragment's state in ``fragment_root/<hash>/``."""
    return lambda fragment: {"state_path": str(fragment_root / fragment.hash / "state.sqlite")}


class EnvCounters:
    """Call counters that config handlers keep in environment variables.

    ``EnvCounters(monkeypatch, auth="RIG_AUTH_COUNT")`` sets each variable to ``"0"`` for the test;
    calling it reads them back by label: ``{"auth": "1"}``.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch, **variables: str) -> None:
        self.variables = variables
        for name in variables.values():
            monkeypatch.setenv(name, "0")

    def __call__(self) -> dict[str, str]:
        return {label: os.environ[name] for label, name in self.variables.items()}


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
    "EngineProject",
    "EnvCounters",
    "assert_matches",
    "execute",
    "fragment_locator",
    "query",
    "reason_codes",
    "record_events",
    "resolve",
    "run_async",
    "write_config",
]

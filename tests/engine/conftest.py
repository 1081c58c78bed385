"""Fixtures for engine tests: a tmp project whose engines are closed after each test.

``project`` runs every test that takes it on both state backends: SQLite (``.rig/state.sqlite``)
and PostgreSQL (``RIG_STATE_URL`` naming fresh schemas of the session's server), so the engine
suite is a conformance suite for the state store too. A test about SQLite files themselves is
marked ``sqlite_only``. The isolated RIG_HOME, host storage and browser settings come from
``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.backends import BACKENDS
from tests.engine.support import EngineProject


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sqlite_only: the test is about SQLite state files (not run on PostgreSQL)")


@pytest.fixture(params=BACKENDS)
def project(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[EngineProject]:
    """An empty project directory to write a config into, and the engines opened over it."""
    if request.param == "postgresql":
        if request.node.get_closest_marker("sqlite_only") is not None:
            pytest.skip("about SQLite state files")
        from tests.pg_server import unique_schema

        server = request.getfixturevalue("postgres_server")
        schema = unique_schema()
        monkeypatch.setenv("RIG_STATE_URL", server.url(schema, fragments_schema=f"{schema}_fragments"))
    harness = EngineProject(tmp_path / "project", monkeypatch)
    harness.backend = request.param
    yield harness
    harness.close_all()

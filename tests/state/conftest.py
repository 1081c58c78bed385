"""Fixtures for the state tests: a real store (SQLite in tmp_path, or a schema of the session's
PostgreSQL) and per-user dirs kept out of $HOME.

``store`` is parametrized over both backends: every test that takes it is a conformance test
both must pass (in the spirit of Terraform's TestBackendStates / TestBackendStateLocks).
``state_location`` is where that store lives, for tests that reach it from another process or
with the driver directly (tests/backends.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rigcli.state import StateStore, create_state_store
from tests.backends import BACKENDS


@pytest.fixture(autouse=True)
def _private_rig_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "rig-home"
    monkeypatch.setenv("RIG_HOME", str(home))
    monkeypatch.delenv("RIG_HOST_STORAGE_DIR", raising=False)
    return home


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture(params=BACKENDS)
def state_location(request: pytest.FixtureRequest, project_dir: Path) -> str:
    """A SQLite path (its directory made) or a PostgreSQL URL with a fresh schema of its own."""
    if request.param == "sqlite":
        (project_dir / ".rig").mkdir()  # the database file exists from sync on (tests read it directly)
        return str(project_dir / ".rig" / "state.sqlite")
    from tests.pg_server import unique_schema

    server = request.getfixturevalue("postgres_server")
    schema = unique_schema()
    return str(server.url(schema, fragments_schema=f"{schema}_fragments"))


@pytest.fixture
def store(state_location: str, project_dir: Path) -> Iterator[StateStore]:
    from rigcli.state.factory import open_state_store

    if state_location.startswith("postgresql://"):
        state = open_state_store(None, project_dir=str(project_dir), state_path=state_location)
    else:
        state = create_state_store(project_dir=project_dir)
    state.sync_schema()
    yield state
    state.close()

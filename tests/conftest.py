"""Shared test setup: each test gets its own RIG_HOME and host storage, no colour and no browser."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.pg_server import PostgresServer

# Variables that change how rig renders or behaves; tests opt in to them explicitly.
_BEHAVIOUR_VARIABLES = (
    "RIG_DEBUG",
    "RIG_RENDER",
    "RIG_NO_CONSOLE_INTERCEPT",
    "RIG_TRUST_HOST_COMMANDS",
    "RIG_STATE_URL",
    # Bounds on waits (rigcli/timeouts.py): a test that needs one sets it.
    "RIG_CONNECT_TIMEOUT",
    "RIG_READ_TIMEOUT",
    "RIG_CHECK_TIMEOUT",
    "RIG_LONG_TIMEOUT",
)


@pytest.fixture(autouse=True)
def _isolated_rig_environment(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("rig-home")
    monkeypatch.setenv("RIG_HOME", str(home))
    monkeypatch.setenv("RIG_HOST_STORAGE_DIR", str(home / "providers"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("RIG_NO_BROWSER", "1")
    for name in _BEHAVIOUR_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A private PostgreSQL for this test session (tests/pg_server.py), stopped by PID at the end.

    Skips when the server binaries or psycopg are missing, unless RIG_REQUIRE_POSTGRES=1 (CI),
    which turns that into a failure. Each test gets schemas of its own (``unique_schema``).
    """
    required = os.environ.get("RIG_REQUIRE_POSTGRES") == "1"
    try:
        import psycopg  # noqa: F401

        from tests.pg_server import start_server

        server = start_server()
    except (ImportError, FileNotFoundError) as missing:
        if required:
            pytest.fail(f"RIG_REQUIRE_POSTGRES=1 but PostgreSQL cannot run here: {missing}")
        pytest.skip(f"PostgreSQL is not available: {missing}")
    try:
        yield server
    finally:
        server.cleanup()

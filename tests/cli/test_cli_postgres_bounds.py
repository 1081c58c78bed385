"""PostgreSQL state that never answers: one line naming the database and the bound, exit 1, never a hang.

Two silent peers through the installed ``rig``: a port that accepts and never starts a session
(the connect bound, libpq's ``connect_timeout``), and a relay to the real server that goes quiet
once the session is ready, so the first statement is never answered (the statement bound, cut by
rig's watchdog). Each run is held to a generous wall-clock limit by the subprocess's own timeout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cli.cli_support import DEV_CONFIG, run_rig, write_project
from tests.silent_peers import Relay, Silent

WALL_SECONDS = 60  # far above the bounds: only a hang reaches it


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "project", DEV_CONFIG)


def one_error(result: Any, password: str) -> str:
    assert result.returncode == 1, result
    assert result.stdout == ""
    assert "Traceback" not in result.stderr and password not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result
    return str(lines[0])


def test_a_server_that_never_starts_a_session_is_the_connect_bound(project: Path) -> None:
    with Silent.tcp() as peer:
        url = f"postgresql://rig:hunter2@127.0.0.1:{peer.port}/rig_test"
        env = {"RIG_CONNECT_TIMEOUT": "1", "RIG_RENDER": "0"}
        listed = run_rig("--state", url, "--json", "ls", cwd=project, env=env, subprocess=True, timeout=WALL_SECONDS)
        assert peer.accepted >= 1
    line = one_error(listed, "hunter2")
    # libpq waits at least 2 s: rig's bound is rounded up to what it takes.
    expected = f"error: Cannot connect to the state database postgresql://rig:***@127.0.0.1:{peer.port}/rig_test: "
    assert line.startswith(expected)
    assert line.endswith("timeout expired: no answer within 2s (RIG_CONNECT_TIMEOUT)")


def test_a_statement_that_never_returns_is_the_read_bound(project: Path, postgres_server: Any) -> None:
    from tests.pg_server import unique_schema

    with Relay.tcp(("127.0.0.1", postgres_server.port), after_ready=True) as relay:
        direct = postgres_server.url(unique_schema())
        url = direct.replace(f":{postgres_server.port}/", f":{relay.port}/") + "&sslmode=disable&gssencmode=disable"
        env = {"RIG_READ_TIMEOUT": "1", "RIG_RENDER": "0"}
        applied = run_rig("--state", url, "apply", cwd=project, env=env, subprocess=True, timeout=WALL_SECONDS)
    line = one_error(applied, postgres_server.password)
    masked = url.replace(postgres_server.password, "***")
    assert line == f"error: State database {masked}: no answer within 1s (RIG_READ_TIMEOUT)"

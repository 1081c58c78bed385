"""The CLI on PostgreSQL state: choosing it, `state copy` both ways, doctor, `ls --json`, errors, imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rigcli.state import STATE_SCHEMA_VERSION
from rigcli.state.postgres.url import mask_url
from tests.backends import rows
from tests.cli.cli_support import DEV_CONFIG, run_rig, write_project


@pytest.fixture
def server(postgres_server: Any) -> Any:
    return postgres_server


@pytest.fixture
def url(server: Any) -> str:
    from tests.pg_server import unique_schema

    schema = unique_schema()
    return str(server.url(schema, fragments_schema=f"{schema}_fragments"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "project", DEV_CONFIG)


def _no_secret(result: Any, server: Any) -> None:
    assert server.password not in result.stdout + result.stderr, result


def test_the_project_env_selects_postgres_and_state_wins(project: Path, url: str, server: Any, tmp_path: Path) -> None:
    (project / ".env").write_text(f"RIG_STATE_URL={url}\n")
    applied = run_rig("--json", "apply", cwd=project)
    assert applied.returncode == 0, applied
    assert not (project / ".rig" / "state.sqlite").exists()
    assert rows(url, "SELECT node_path, status FROM workflow_node_runs ORDER BY node_path") == [
        ("base", "succeeded"),
        ("tools", "succeeded"),
    ]
    listed = run_rig("--json", "ls", cwd=project)
    assert listed.json["state"] == {"backend": "postgresql", "url": mask_url(url)}
    assert listed.json["lock"] is None
    _no_secret(listed, server)
    # --state wins over RIG_STATE_URL: a file of its own, nothing cached there yet.
    local = run_rig("--state", str(tmp_path / "mine.sqlite"), "--json", "plan", cwd=project)
    assert local.json["cached_node_count"] == 0
    assert run_rig("--json", "ls", "--state", str(tmp_path / "mine.sqlite"), cwd=project).json["state"] == {
        "backend": "sqlite",
        "url": str(tmp_path / "mine.sqlite"),
    }


def test_state_copy_moves_everything_to_postgres_and_back(project: Path, url: str, server: Any, tmp_path: Path) -> None:
    assert run_rig("fork", "dev", cwd=project).returncode == 0
    source = project / ".rig" / "state.sqlite"
    before = source.read_bytes()
    copied = run_rig("--json", "state", "copy", "--to", url, cwd=project)
    assert copied.returncode == 0, copied
    report = copied.json
    assert report["source"] == {"backend": "sqlite", "url": str(source)}
    assert report["target"] == {"backend": "postgresql", "url": mask_url(url)}
    assert (report["tables"]["workflow_node_runs"], report["tables"]["workspaces"]) == (2, 1)
    assert source.read_bytes() == before  # the source is only read
    _no_secret(copied, server)
    assert rows(url, "SELECT name, owner FROM workspaces") == [
        ("dev", rows(source, "SELECT owner FROM workspaces")[0][0])
    ]
    on_postgres = run_rig("--state", url, "--json", "plan", cwd=project)
    assert on_postgres.json["cached_node_count"] == 2
    assert rows(url, "SELECT COUNT(*) FROM workflow_node_runs WHERE invalidated") == [(0,)]

    again = run_rig("state", "copy", "--to", url, cwd=project)
    assert again.returncode == 1 and "not empty" in again.stderr, again

    back = tmp_path / "offline.sqlite"
    returned = run_rig("--state", url, "--json", "state", "copy", "--to", str(back), cwd=project)
    assert returned.returncode == 0, returned
    assert returned.json["tables"] == report["tables"]
    offline = run_rig("--state", str(back), "--json", "ls", cwd=project).json
    assert [item["name"] for item in offline["workflows"][0]["workspaces"]] == ["dev"]
    assert offline["workflows"][0]["cached_node_count"] == 2


def test_doctor_shows_the_backend_server_schema_and_lock_holder(project: Path, url: str, server: Any) -> None:
    assert run_rig("--state", url, "apply", cwd=project).returncode == 0
    report = run_rig("--state", url, "--json", "doctor", cwd=project)
    state = report.json["project"]["state"]
    assert (state["backend"], state["url"], state["schema_version"], state["lock"]) == (
        "postgresql",
        mask_url(url),
        STATE_SCHEMA_VERSION,
        None,
    )
    assert state["server_version"].startswith("15.") or state["server_version"][0].isdigit()
    human = run_rig("--state", url, "doctor", cwd=project)
    assert (
        f"{mask_url(url)} (PostgreSQL {state['server_version']}, schema version {STATE_SCHEMA_VERSION})" in human.stdout
    )
    assert "state lock    free" in human.stdout
    _no_secret(report, server)
    _no_secret(human, server)


@pytest.mark.parametrize(
    "bad",
    [
        "postgresql://rig:wrong-password@127.0.0.1:{port}/rig_test",
        "postgresql://rig:{password}@127.0.0.1:{port}/no_such_database",
        "postgresql://rig:{password}@127.0.0.1:1/rig_test?connect_timeout=2",
    ],
)
def test_an_unusable_server_is_one_masked_line_and_exit_1(project: Path, server: Any, bad: str) -> None:
    url = bad.format(port=server.port, password=server.password)
    for args in (("apply",), ("--json", "plan"), ("fork", "dev")):
        result = run_rig("--state", url, *args, cwd=project, subprocess=True)
        assert result.returncode == 1, result
        assert result.stdout == ""
        assert result.error_lines == [result.stderr.strip()], result
        assert "rig:***@127.0.0.1" in result.stderr and "Traceback" not in result.stderr
        assert "wrong-password" not in result.stderr
        _no_secret(result, server)


_IMPORTS = """
import sys
from rigcli.__main__ import main
code = main(["--json", "plan"])
heavy = sorted(name for name in ("sqlalchemy", "sqlmodel", "psycopg") if name in sys.modules)
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


def test_a_cached_plan_on_a_file_state_imports_neither_sqlalchemy_nor_psycopg(project: Path) -> None:
    assert run_rig("apply", cwd=project, subprocess=True).returncode == 0
    done = subprocess.run(
        [sys.executable, "-c", "import json\n" + _IMPORTS], cwd=project, capture_output=True, text=True, check=True
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report == {"code": 0, "heavy": []}
    assert json.loads(done.stdout)["cached_node_count"] == 2


_SESSIONS_CONFIG = '''
import os
from urllib.parse import urlsplit

from rigcli import sequence


def sessions_to(port):
    """This process's established TCP connections to ``port`` (its fds' sockets in /proc/net/tcp)."""
    mine = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            mine.add(link[8:-1])
    count = 0
    with open("/proc/net/tcp") as table:
        for line in table.read().splitlines()[1:]:
            fields = line.split()
            remote_port = int(fields[2].split(":")[1], 16)
            if remote_port == port and fields[3] == "01" and fields[9] in mine:
                count += 1
    return count


def probe(step):
    return {"ctx": {"sessions": sessions_to(urlsplit(os.environ["RIG_STATE_URL"]).port)}}


workflows = sequence("sessions").task("probe", probe, cache_ttl=0)
'''


def test_a_writer_holds_one_session_on_the_server(tmp_path: Path, url: str) -> None:
    # The writer lock lives on the connection rig reads through: an apply costs the server one
    # session (and one connect), not a reader's plus the lock's.
    project = write_project(tmp_path / "sessions", _SESSIONS_CONFIG)
    (project / ".env").write_text(f"RIG_STATE_URL={url}\n")
    for _ in range(2):  # the first apply migrates the schema, the second finds it ready
        applied = run_rig("--json", "apply", cwd=project, subprocess=True)
        assert applied.returncode == 0, applied
        assert applied.json["context"] == {"sessions": 1}

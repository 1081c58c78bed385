"""Where the state lives, decided once: completion and `ls` agree; unknown schemes and non-files are refused.

Every case runs the installed `rig` as a subprocess (with a timeout, so a command that would
block on a FIFO fails the test instead of hanging it).
"""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.cli_support import DEV_CONFIG, Result, run_rig, write_project

TIMEOUT_S = 30.0
PASSWORD = "Pw-7f3a-hunter2"


def rig(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Result:
    return run_rig(*args, cwd=cwd, env=env, subprocess=True, timeout=TIMEOUT_S)


def completed_words(*words: str, cwd: Path, env: dict[str, str] | None = None) -> list[str]:
    """What Tab offers after ``rig WORDS``, asked the way the completion scripts ask."""
    line = ["rig", *words]
    result = rig("__complete", "--shell", "zsh", "--index", str(len(line) - 1), "--", *line, cwd=cwd, env=env)
    assert result.returncode == 0 and result.stderr == "", result
    return [entry.split("\t")[0] for entry in result.stdout.splitlines()]


def listed_workspaces(*global_options: str, cwd: Path, env: dict[str, str] | None = None) -> list[str]:
    listed = rig(*global_options, "--json", "ls", cwd=cwd, env=env)
    assert listed.returncode == 0, listed
    return sorted(item["name"] for workflow in listed.json["workflows"] for item in workflow["workspaces"])


def tree(directory: Path) -> set[str]:
    """Every path under ``directory`` (files, directories, links): what "nothing created" is checked against."""
    return {str(path.relative_to(directory)) for path in directory.rglob("*")}


# -- completion and `rig ls` read the same state -----------------------------------------------------


@pytest.fixture
def url(postgres_server: Any) -> str:
    from tests.pg_server import unique_schema

    schema = unique_schema()
    return str(postgres_server.url(schema, fragments_schema=f"{schema}_fragments"))


@pytest.fixture
def two_states(tmp_path: Path, url: str) -> Path:
    """A project whose SQLite file holds workspace ``on-file`` and whose PostgreSQL schema holds ``on-server``."""
    project = write_project(tmp_path / "project", DEV_CONFIG)
    assert rig("fork", "on-file", cwd=project).returncode == 0
    forked = rig("--state", url, "fork", "on-server", cwd=project)
    assert forked.returncode == 0, forked
    return project


@pytest.mark.parametrize("where", ["dotenv", "environment", "flag", "flag-from-elsewhere"])
def test_completion_offers_the_workspaces_ls_lists(two_states: Path, url: str, tmp_path: Path, where: str) -> None:
    project, cwd, env, options = two_states, two_states, {}, []
    if where == "dotenv":
        (project / ".env").write_text(f"RIG_STATE_URL={url}\n")
    elif where == "environment":
        env = {"RIG_STATE_URL": url}
    elif where == "flag":
        options = ["--state", url]
    else:  # -C from another directory, the URL in the project's .env
        (project / ".env").write_text(f"RIG_STATE_URL={url}\n")
        cwd = tmp_path
        options = ["-C", str(project)]

    listed = listed_workspaces(*options, cwd=cwd, env=env)
    assert listed == ["on-server"]
    assert sorted(completed_words(*options, "rm", "", cwd=cwd, env=env)) == listed
    assert sorted(completed_words(*options, "op", listed[0], "pair", "--other", "", cwd=cwd, env=env)) == listed
    cached = rig(*options, "--json", "cache", "ls", cwd=cwd, env=env).json["entries"]
    assert sorted(completed_words(*options, "cache", "invalidate", "", cwd=cwd, env=env)) == sorted(
        {entry["node_path"] for entry in cached}
    )


def test_a_state_file_given_by_flag_wins_over_the_env_file_for_completion_too(two_states: Path, url: str) -> None:
    (two_states / ".env").write_text(f"RIG_STATE_URL={url}\n")
    options = ["--state", str(two_states / ".rig" / "state.sqlite")]
    listed = listed_workspaces(*options, cwd=two_states)
    assert listed == ["on-file"]
    assert sorted(completed_words(*options, "rm", "", cwd=two_states)) == listed


# -- issue 17, defect 9: anything with scheme:// is a URL ---------------------------------------------

UNSUPPORTED = [
    f"mysql://dev:{PASSWORD}@127.0.0.1/rig",
    f"postgresql+psycopg://dev:{PASSWORD}@127.0.0.1/rig",
    f"sqlite://dev:{PASSWORD}@/state.sqlite",
    "sqlite:///state.sqlite",
    f"http://dev:{PASSWORD}@127.0.0.1/rig",
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "project", DEV_CONFIG)


def _refused_in_one_line(result: Result) -> None:
    assert result.returncode == 1, result
    assert result.stdout == "", result
    assert result.error_lines == [result.stderr.strip()], result
    assert PASSWORD not in result.stdout + result.stderr, result


@pytest.mark.parametrize("given", UNSUPPORTED)
@pytest.mark.parametrize("how", ["flag", "environment", "dotenv"])
def test_an_unsupported_url_scheme_is_refused_with_the_password_masked(project: Path, given: str, how: str) -> None:
    env: dict[str, str] = {}
    options: list[str] = []
    if how == "flag":
        options = ["--state", given]
    elif how == "environment":
        env = {"RIG_STATE_URL": given}
    else:
        (project / ".env").write_text(f"RIG_STATE_URL={given}\n")
    before = tree(project)
    scheme = given.split("://")[0]
    for args in (("apply",), ("--json", "plan"), ("fork", "dev"), ("ls",), ("cache", "ls")):
        result = rig(*options, *args, cwd=project, env=env)
        _refused_in_one_line(result)
        assert f"{scheme}://" in result.stderr and "postgresql://" in result.stderr, result
        if PASSWORD in given:
            assert "dev:***@" in result.stderr, result
        assert tree(project) == before, f"rig {' '.join(args)} created {tree(project) - before}"


def test_state_copy_refuses_an_unsupported_target_scheme(project: Path) -> None:
    assert rig("apply", cwd=project).returncode == 0
    before = tree(project)
    result = rig("state", "copy", "--to", f"mysql://dev:{PASSWORD}@127.0.0.1/rig", cwd=project)
    _refused_in_one_line(result)
    assert "mysql://dev:***@127.0.0.1/rig" in result.stderr, result
    assert tree(project) == before


# -- issue 17, defect 10: only a regular file (or a place to create one) is a state file ----------------

COMMANDS = [
    ("plan",),
    ("apply",),
    ("--json", "apply", "--dry-run"),
    ("fork", "dev"),
    ("ls",),
    ("rm", "dev", "--yes"),
    ("op", "dev", "noop"),
    ("cache", "ls"),
    ("cache", "explain"),
    ("cache", "invalidate", "--all", "--yes"),
    ("gc", "--dry-run"),
    ("state", "copy", "--to", "copy.sqlite"),
]


@pytest.fixture
def not_a_file(request: pytest.FixtureRequest, project: Path) -> Iterator[tuple[str, str]]:
    """(what --state names, the word the refusal uses for it)."""
    kind = request.param
    if kind == "fifo":
        os.mkfifo(project / "state.fifo")
        yield "state.fifo", "FIFO"
    elif kind == "socket":
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(project / "state.sock"))
        listener.listen(1)
        try:
            yield "state.sock", "socket"
        finally:
            listener.close()
    elif kind == "device":
        assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
        yield "/dev/null", "device"
    elif kind == "directory":
        (project / "states").mkdir()
        yield "states", "directory"
    else:  # a path under a regular file: there is no directory to create it in
        (project / "notes.txt").write_text("notes\n")
        yield "notes.txt/state.sqlite", "not a directory"


@pytest.mark.parametrize("not_a_file", ["fifo", "socket", "device", "directory", "under-a-file"], indirect=True)
def test_a_state_path_that_is_not_a_regular_file_is_refused_by_every_command(
    project: Path, not_a_file: tuple[str, str]
) -> None:
    given, word = not_a_file
    before = tree(project)
    for args in COMMANDS:
        result = rig("--state", given, *args, cwd=project)
        _refused_in_one_line(result)
        assert word in result.stderr, result
        assert tree(project) == before, f"rig {' '.join(args)} created {tree(project) - before}"


@pytest.mark.parametrize("not_a_file", ["fifo"], indirect=True)
def test_a_fifo_in_the_environment_or_as_copy_target_is_refused(project: Path, not_a_file: tuple[str, str]) -> None:
    given, word = not_a_file
    for env in ({"RIG_STATE_URL": given}, {"RIG_STATE_URL": str(project / given)}):
        result = rig("plan", cwd=project, env=env)
        _refused_in_one_line(result)
        assert word in result.stderr, result
    assert rig("apply", cwd=project).returncode == 0
    copied = rig("state", "copy", "--to", given, cwd=project)
    _refused_in_one_line(copied)
    assert word in copied.stderr, copied


@pytest.mark.parametrize("not_a_file", ["fifo"], indirect=True)
def test_doctor_reports_a_fifo_state_without_waiting_on_it(project: Path, not_a_file: tuple[str, str]) -> None:
    given, word = not_a_file
    report = rig("--state", given, "--json", "doctor", cwd=project)
    assert report.returncode == 0, report
    state = report.json["project"]["state"]
    assert state["backend"] == "sqlite" and word in state["error"], state

"""Through `rig` on a real daemon: a command running in a workspace's container does not outlive a
`kill -9` of the rig that started it past the next command on the project, or `rig gc` — an
operation's command, or `rig exec`'s own program (from rig's cache, or the full way)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import closing, suppress
from pathlib import Path
from typing import Any

import pytest

from tests.cli.cli_support import RIG, env_with_rig, run_rig, write_project
from tests.helpers import wait_for
from tests.hostile.signals import Docker

CONFIG = """
from rigcli import define_provider, env, workflow

IMAGE = env("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox")
app = workflow("box", providers={"box": define_provider("docker", image=IMAGE)})


def build(step, box):
    machine = box.create_machine()
    try:
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create(workflow, box):
    return {"machine": box.from_snapshot(workflow.ctx["base"]).id}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


def long(workspace, box):
    box.from_id(workspace.ctx["machine"]).exec("echo $$ > /tmp/mark; exec sleep 300", name="long")


def quick(workspace, box):
    return box.from_id(workspace.ctx["machine"]).exec("echo quick", name="quick").stdout.strip()


workflows = (
    app.sequence("box")
    .task("build", build)
    .workspace(create=create, remove=remove)
    .workspace_operation("long", run=long)
    .workspace_operation("quick", run=quick)
)
"""


@pytest.fixture
def docker(docker_daemon: Any) -> Iterator[Docker]:
    docker = Docker(docker_daemon.api)
    yield docker
    docker.close()


@pytest.fixture
def workspace(tmp_path: Path, docker: Docker) -> Iterator[tuple[Path, str]]:
    """A project with workspace ``dev`` forked; yields it and the workspace's container id."""
    project = write_project(tmp_path / "project", CONFIG)
    forked = run_rig("fork", "dev", cwd=project)
    assert forked.returncode == 0, forked
    [container] = docker.containers(project)
    yield project, container
    labels = json.dumps({"label": [f"rig.project={project}"]})
    for item in docker.api.get("/containers/json", params={"all": "true", "filters": labels}).json():
        docker.api.delete(f"/containers/{item['Id']}", params={"force": "true"})
    for image in docker.api.get("/images/json", params={"filters": labels}).json():
        docker.api.delete(f"/images/{image['Id']}", params={"force": "true"})


# How a command that runs `sleep 300` in the workspace's container is started: by an operation, or by
# `rig exec` (its second run is answered from rig's cache, without the engine; RIG_CACHE=off: the full way).
STARTS = {
    "operation": (("op", "dev", "long"), {}),
    "exec": (("exec", "dev", "--", "sh", "-c", "exec sleep 300"), {}),
    "exec (engine)": (("exec", "dev", "--", "sh", "-c", "exec sleep 300"), {"RIG_CACHE": "off"}),
}


def _kill_long_operation(project: Path, container: str, docker: Docker, start: str = "operation") -> None:
    """Start the long command (``STARTS``), wait until it runs in the container, SIGKILL rig's group."""
    argv, extra = STARTS[start]
    if start == "exec":  # the first exec loads the config and remembers it; the second one is lean
        assert run_rig("exec", "dev", "--", "true", cwd=project).returncode == 0
    process = subprocess.Popen(
        [RIG, *argv],
        cwd=project,
        env=env_with_rig({"RIG_RENDER": "0", **extra}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(lambda: bool(docker.long_commands(container)), "the operation's command in the container", 120)
        os.killpg(process.pid, signal.SIGKILL)
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    assert docker.long_commands(container), "the command died with rig: the test would prove nothing"


def _live_sessions(project: Path) -> list[tuple[str, str]]:
    with closing(sqlite3.connect(project / ".rig" / "state.sqlite")) as db:
        query = "SELECT id, status FROM effects WHERE kind = 'exec' AND status != 'deleted'"
        return [(str(row[0]), str(row[1])) for row in db.execute(query)]


@pytest.mark.docker
@pytest.mark.parametrize("start", list(STARTS))
def test_gc_ends_the_exec_of_a_killed_rig_and_keeps_the_workspace(
    workspace: tuple[Path, str], docker: Docker, start: str
) -> None:
    project, container = workspace
    _kill_long_operation(project, container, docker, start)
    assert len(_live_sessions(project)) == 1  # journaled before it started, left by the killed rig

    collected = run_rig("--json", "gc", cwd=project)

    assert collected.returncode == 0, collected
    assert docker.long_commands(container) == []
    assert docker.containers(project) == [container]  # the workspace's machine stays
    assert _live_sessions(project) == []
    assert [item["kind"] for item in collected.json["removed"]] == ["exec"]


@pytest.mark.docker
@pytest.mark.parametrize("start", list(STARTS))
def test_the_next_command_on_the_workspace_ends_the_exec_of_a_killed_rig(
    workspace: tuple[Path, str], docker: Docker, start: str
) -> None:
    project, container = workspace
    _kill_long_operation(project, container, docker, start)

    quick = run_rig("op", "dev", "quick", cwd=project)

    assert quick.returncode == 0, quick
    assert "quick" in quick.stdout
    assert docker.long_commands(container) == []
    assert _live_sessions(project) == []


@pytest.mark.docker
@pytest.mark.parametrize("argv", [("op", "dev", "quick"), ("exec", "dev", "--", "true")], ids=" ".join)
def test_a_finished_exec_leaves_no_session_in_the_journal(
    workspace: tuple[Path, str], docker: Docker, argv: tuple[str, ...]
) -> None:
    project, _ = workspace
    for _ in range(2):  # the second `rig exec` is answered from rig's cache
        assert run_rig(*argv, cwd=project).returncode == 0
    with closing(sqlite3.connect(project / ".rig" / "state.sqlite")) as db:
        statuses = [row[0] for row in db.execute("SELECT status FROM effects WHERE kind = 'exec'")]
    assert statuses and set(statuses) == {"deleted"}


@pytest.mark.docker
@pytest.mark.parametrize("cache", ["lean", "engine"])
def test_a_signal_to_rig_ends_its_exec_128_plus_it_whatever_the_program_makes_of_it(
    workspace: tuple[Path, str], docker: Docker, cache: str
) -> None:
    """The program traps SIGTERM and exits 0: rig was interrupted all the same (exit 143)."""
    project, container = workspace
    assert run_rig("exec", "dev", "--", "true", cwd=project).returncode == 0  # the next one is lean
    process = subprocess.Popen(
        [RIG, "exec", "dev", "--", "sh", "-c", "trap 'exit 0' TERM; sleep 300 & wait"],
        cwd=project,
        env=env_with_rig({"RIG_RENDER": "0", **({"RIG_CACHE": "off"} if cache == "engine" else {})}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(lambda: bool(docker.long_commands(container)), "the command in the container", 120)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 128 + signal.SIGTERM
        wait_for(lambda: not docker.long_commands(container), "the command to end", 10)
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)

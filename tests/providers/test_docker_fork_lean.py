"""A docker `rig fork` from a committed image asks the daemon what `docker run -d` asks (a create
and a start, on rig's own connection) and loads neither httpx nor asyncio nor inspect for it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.cli_support import env_with_rig, run_rig, write_project

CONFIG = """
from rigcli import define_provider, env, workflow

box = define_provider("docker", image=env("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox"))
app = workflow("box", providers={"box": box})


def prepare(box):
    machine = box.create_machine()
    try:
        machine.write_text("marker.txt", "prepared\\n")
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create(workflow, box):
    machine = box.from_snapshot(workflow.ctx["base"])
    return {"machine": machine.id, "container": machine.container_id}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


workflows = app.sequence("root").task("prepare", prepare).workspace(create=create, remove=remove)
"""


@pytest.fixture
def project(tmp_path: Path, docker_daemon: Any) -> Iterator[Path]:
    project = write_project(tmp_path / "project", CONFIG)
    applied = run_rig("apply", cwd=project, env={"RIG_RENDER": "0"}, subprocess=True)
    assert applied.returncode == 0, applied
    yield project
    labels = json.dumps({"label": [f"rig.project={project}"]})
    api = docker_daemon.api
    for item in api.get("/containers/json", params={"all": "true", "filters": labels}).json():
        api.delete(f"/containers/{item['Id']}", params={"force": "true"})
    for image in api.get("/images/json", params={"filters": labels}).json():
        api.delete(f"/images/{image['Id']}", params={"force": "true"})


def test_a_fork_makes_a_running_container_without_httpx_asyncio_or_inspect(project: Path, docker_daemon: Any) -> None:
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "rigcli", "fork", "a"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env_with_rig({"RIG_RENDER": "0"}),
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "a\n"
    imported = {line.split("|")[-1].strip() for line in completed.stderr.splitlines() if "|" in line}
    assert "providers.docker.controller" in imported  # the docker provider made it
    # httpx: create and start go over rawhttp; asyncio: the sync create hook runs on a thread while
    # the runner waits (speed/coroutines.py); inspect: speed/awaitables.py and speed/parameters.py.
    unneeded = ["asyncio", "providers.docker.client", "secrets"]
    if docker_daemon.endpoint != "ssh":  # ssh's transport module is built on httpx (which imports inspect)
        unneeded += ["httpx", "httpcore", "inspect"]
    for name in unneeded:
        assert name not in imported, name
    listed = run_rig("--json", "ls", cwd=project, subprocess=True)
    [workflow] = listed.json["workflows"]
    [workspace] = workflow["workspaces"]
    assert workspace["status"] == "ready"
    container = docker_daemon.api.get(f"/containers/{workspace['ctx']['container']}/json").json()
    assert container["State"]["Running"] is True
    assert container["HostConfig"]["Init"] is True and container["HostConfig"]["NetworkMode"] == "none"
    assert container["Config"]["Labels"]["rig.workspace"] == "a"
    removed = run_rig("rm", "a", "--yes", cwd=project, subprocess=True)
    assert removed.returncode == 0, removed
    assert docker_daemon.api.get(f"/containers/{workspace['ctx']['container']}/json").status_code == 404


def test_fork_count_makes_every_container_on_connections_of_its_own(project: Path, docker_daemon: Any) -> None:
    forked = run_rig("fork", "b", "--count", "3", cwd=project, subprocess=True)
    assert forked.returncode == 0, forked
    assert forked.stdout.split() == ["b-1", "b-2", "b-3"]
    [workflow] = run_rig("--json", "ls", cwd=project, subprocess=True).json["workflows"]
    containers = [item["ctx"]["container"] for item in workflow["workspaces"]]
    assert len(set(containers)) == 3
    for container in containers:
        assert docker_daemon.api.get(f"/containers/{container}/json").json()["State"]["Running"] is True

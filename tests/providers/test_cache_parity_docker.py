"""Through `rig` on a real daemon: every command that may answer from the cache prints the same with and
without it while the docker workspace runs, after it is stopped, and once its container is gone; the
plugin's own hooks (``SupportsDirectStatus``, ``SupportsDirectAttach``) answer on both ways, and the
remembered answers are used (the config is not loaded again)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cache.parity import compare, loads, rig
from tests.cli.cli_support import write_project

CONFIG = """
from pathlib import Path

from rigcli import define_provider, env, workflow

with open(Path(__file__).with_name("loads.txt"), "a") as loads:
    loads.write("loaded\\n")

box = define_provider("docker", image=env("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox"))
app = workflow("dev", providers={"box": box})


def build(step, box):
    machine = box.create_machine()
    try:
        machine.exec("echo built > /built.txt")
        print("built the image")
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def stamp(step):
    print("stamped")
    return {"ctx": step.ctx}


def create(workflow, box):
    machine = box.from_snapshot(workflow.ctx["base"])
    return {"machine": machine.id, "container": machine.container_id}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


workflows = app.sequence("dev").task("build", build).task("stamp", stamp).workspace(create=create, remove=remove)
"""


@pytest.fixture
def project(tmp_path: Path, docker_daemon: Any) -> Iterator[Path]:
    project = write_project(tmp_path / "parity", CONFIG)
    for argv in (("apply",), ("fork", "ws")):
        result = rig(project, *argv)
        assert result.returncode == 0, result
    yield project
    rig(project, "rm", "--all", "--yes", "--force")
    rig(project, "gc")


def container(project: Path) -> str:
    document = json.loads(rig(project, "--json", "ls", "--no-probe").stdout)
    (found,) = [item["ctx"]["container"] for flow in document["workflows"] for item in flow["workspaces"]]
    return str(found)


def test_running_stopped_and_missing_print_the_same_both_ways(project: Path, docker_daemon: Any) -> None:
    assert compare(project, {}, daemon_clock=True) == []
    assert rig(project, "stop", "ws").returncode == 0
    assert compare(project, {}, daemon_clock=True) == []
    assert rig(project, "start", "ws").returncode == 0
    docker_daemon.api.delete(f"/containers/{container(project)}", params={"force": "true"})
    assert compare(project, {}, daemon_clock=True) == []


def test_the_remembered_answers_answer_without_the_config(project: Path) -> None:
    for argv in (("plan",), ("graph",), ("ls",), ("logs", "stamp"), ("exec", "ws", "--", "cat", "/built.txt")):
        rig(project, *argv)
        before = loads(project)
        result = rig(project, *argv)
        assert result.returncode == 0, result
        assert loads(project) == before, f"rig {' '.join(argv)} loaded the config: the cache did not answer"

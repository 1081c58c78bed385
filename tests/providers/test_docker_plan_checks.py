"""`rig plan` asks the docker daemon (once, briefly): it never calls a daemon that does not answer, or a
configured image it does not have, ok; and a check that fails now invalidates no cache entry."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.cli_support import run_rig, write_project

CONFIG = """
import os

from rigcli import define_provider, workflow

app = workflow("box", providers={"box": define_provider("docker", image=os.environ["RIG_CHECK_IMAGE"])})


def build(step, box):
    machine = box.create_machine()
    try:
        machine.exec("true", name="build")
    finally:
        machine.delete()
    return {"ctx": {"built": True}}


def later(step):
    return {"ctx": dict(step.ctx)}


workflows = app.sequence("box").task("build", build).task("later", later)
"""


def _docker_check(plan: dict[str, Any]) -> dict[str, Any]:
    [check] = [item for item in plan["provider_checks"] if item["provider_id"] == "docker"]
    return check


def test_plan_does_not_call_a_daemon_that_does_not_exist_ok(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", CONFIG)
    env = {"DOCKER_HOST": "unix:///nope.sock", "RIG_CHECK_IMAGE": "rig/base:busybox"}

    human = run_rig("plan", cwd=project, env=env, subprocess=True)
    plan = run_rig("--json", "plan", cwd=project, env=env, subprocess=True)

    assert human.returncode == 1, human  # a failing check is an error the user can act on
    assert "error: " in human.stderr and "Cannot reach the Docker daemon" in human.stderr, human
    [row] = [line for line in human.stdout.splitlines() if "docker daemon" in line]
    assert " ok " not in row and "error" in row, row
    assert "Cannot reach the Docker daemon at unix:///nope.sock" in row
    assert plan.returncode == 1, plan
    check = _docker_check(plan.json)
    assert check["status"] == "error"
    assert "unix:///nope.sock" in check["message"] and "unreachable" in check["message"]


@pytest.fixture
def tagged_image(docker_daemon: Any) -> Iterator[str]:
    """A tag of the test image that only this test uses (removed afterwards)."""
    repo, tag = "rig/check-test", f"t{os.getpid()}-{os.urandom(4).hex()}"
    tagged = docker_daemon.api.post(f"/images/{docker_daemon.image}/tag", params={"repo": repo, "tag": tag})
    assert tagged.status_code == 201, tagged.text
    yield f"{repo}:{tag}"
    docker_daemon.api.delete(f"/images/{repo}:{tag}")


@pytest.mark.docker
def test_plan_says_the_configured_image_is_missing_and_apply_fails_on_it(tmp_path: Path, docker_daemon: Any) -> None:
    project = write_project(tmp_path / "project", CONFIG)
    env = {"RIG_CHECK_IMAGE": "rig/never-built:nope"}

    plan = run_rig("--json", "plan", cwd=project, env=env)
    applied = run_rig("apply", cwd=project, env=env)

    check = _docker_check(plan.json)
    assert check["status"] == "error"
    assert 'Docker image "rig/never-built:nope" is not available' in check["message"]
    assert applied.returncode == 1
    assert 'Docker image "rig/never-built:nope" is not available' in applied.stderr


@pytest.mark.docker
def test_a_check_that_fails_now_keeps_the_cache(tmp_path: Path, docker_daemon: Any, tagged_image: str) -> None:
    project = write_project(tmp_path / "project", CONFIG)
    env = {"RIG_CHECK_IMAGE": tagged_image}
    applied = run_rig("apply", cwd=project, env=env)
    assert applied.returncode == 0, applied
    assert _docker_check(run_rig("--json", "plan", cwd=project, env=env).json)["status"] == "ok"

    docker_daemon.api.delete(f"/images/{tagged_image}")  # the image is gone; the runs made with it are not
    plan = run_rig("--json", "plan", cwd=project, env=env).json

    assert _docker_check(plan)["status"] == "error"
    assert [node["status"] for node in plan["nodes"]] == ["cached", "cached"]


@pytest.mark.docker
def test_a_missing_image_makes_plan_exit_1_naming_the_image(tmp_path: Path, docker_daemon: Any) -> None:
    project = write_project(tmp_path / "project", CONFIG)
    env = {"RIG_CHECK_IMAGE": "rig/never-built:nope"}
    for _ in range(2):  # planned, then (had it been kept) a remembered plan: the same answer
        human = run_rig("plan", cwd=project, env=env, subprocess=True)
        assert human.returncode == 1, human
        [row] = [line for line in human.stdout.splitlines() if "rig/never-built:nope" in line]
        assert "docker image" in row and "docker daemon" not in row, human.stdout
        [error] = human.error_lines
        assert "rig/never-built:nope" in error and "daemon" not in error.split(":")[1], error
        detailed = run_rig("plan", "--detailed-exitcode", cwd=project, env=env, subprocess=True)
        assert detailed.returncode == 1, detailed
        as_json = run_rig("--json", "plan", cwd=project, env=env, subprocess=True)
        assert as_json.returncode == 1, as_json
        check = _docker_check(as_json.json)  # still one document on stdout
        assert (check["status"], check["label"], check["value"]) == ("error", "docker image", "rig/never-built:nope")


@pytest.mark.docker
def test_an_image_removed_after_a_plan_fails_the_next_plan(
    tmp_path: Path, docker_daemon: Any, tagged_image: str
) -> None:
    project = write_project(tmp_path / "project", CONFIG)
    env = {"RIG_CHECK_IMAGE": tagged_image}
    assert run_rig("apply", cwd=project, env=env, subprocess=True).returncode == 0
    for _ in range(2):  # the second may be a remembered plan
        planned = run_rig("plan", "--detailed-exitcode", cwd=project, env=env, subprocess=True)
        assert planned.returncode == 0, planned

    docker_daemon.api.delete(f"/images/{tagged_image}")
    for _ in range(2):
        planned = run_rig("plan", "--detailed-exitcode", cwd=project, env=env, subprocess=True)
        assert planned.returncode == 1 and tagged_image in planned.stderr, planned

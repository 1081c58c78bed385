"""Through `rig` on a real daemon: rm never takes a daemon that does not answer as "gone", and gc
removes only the containers and images rig made that nothing refers to."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from providers.docker.images import full_image_id
from tests.cli.cli_support import Result, run_rig, write_project

CONFIG = """
from rigcli import define_provider, env, workflow

IMAGE = env("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox")
app = workflow("box", providers={"box": define_provider("docker", image=IMAGE)})


def build(step, box):
    machine = box.create_machine()  # left running: garbage once the run is over
    machine.exec("echo built > /workspace/built", name="build")
    return {"ctx": {"base": machine.snapshot_ref()}}


def create(workflow, box):
    return {"machine": box.from_snapshot(workflow.ctx["base"]).id}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


workflows = app.sequence("box").task("build", build).workspace(create=create, remove=remove)
"""


@pytest.fixture
def project(tmp_path: Path, docker_daemon: Any) -> Iterator[Path]:
    path = write_project(tmp_path / "project", CONFIG)
    yield path
    api = docker_daemon.api
    labels = f'{{"label": ["rig.project={path}"]}}'
    for container in api.get("/containers/json", params={"all": "true", "filters": labels}).json():
        api.delete(f"/containers/{container['Id']}", params={"force": "true"})
    for image in api.get("/images/json", params={"filters": labels}).json():
        api.delete(f"/images/{image['Id']}", params={"force": "true"})


def _rig(project: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return run_rig(*args, cwd=project, env=env)


def _ours(api: Any, project: Path) -> tuple[set[str], set[str]]:
    """Names of the project's containers and ids of its images, as the daemon lists them."""
    labels = f'{{"label": ["rig.project={project}"]}}'
    containers = api.get("/containers/json", params={"all": "true", "filters": labels}).json()
    images = api.get("/images/json", params={"filters": labels}).json()
    return {c["Names"][0].lstrip("/") for c in containers}, {i["Id"] for i in images}


def test_rm_keeps_the_record_while_the_daemon_does_not_answer(
    project: Path, docker_daemon: Any, tmp_path: Path
) -> None:
    assert _rig(project, "fork", "dev").returncode == 0
    down = {"DOCKER_HOST": f"unix://{tmp_path}/nobody-listens.sock", "DOCKER_TLS_VERIFY": "", "DOCKER_CERT_PATH": ""}

    failed = _rig(project, "rm", "dev", "--yes", env=down)

    assert failed.returncode == 1, failed
    assert len(failed.error_lines) == 1 and "record is kept" in failed.error_lines[0], failed
    [workflow] = _rig(project, "--json", "ls").json["workflows"]
    [record] = workflow["workspaces"]
    assert record["status"] == "removing" and record["error"]
    machine = record["ctx"]["machine"]
    assert machine in _ours(docker_daemon.api, project)[0]

    assert _rig(project, "rm", "dev", "--yes").returncode == 0  # the daemon answers again
    assert machine not in _ours(docker_daemon.api, project)[0]


def test_gc_removes_unreferenced_containers_and_images_and_never_foreign_ones(
    project: Path, docker_daemon: Any
) -> None:
    api = docker_daemon.api
    assert _rig(project, "fork", "dev").returncode == 0
    [workflow] = _rig(project, "--json", "ls").json["workflows"]
    workspace_machine = workflow["workspaces"][0]["ctx"]["machine"]
    first_image = _rig(project, "--json", "plan").json["final_context"]["base"]["image_id"]
    assert _rig(project, "cache", "invalidate", "build").returncode == 0
    assert _rig(project, "apply").returncode == 0
    second_image = _rig(project, "--json", "plan").json["final_context"]["base"]["image_id"]
    build_machines = _ours(api, project)[0] - {workspace_machine}
    assert len(build_machines) == 2
    # By hand, from rig's image: it inherits rig's labels but rig did not make it, nor the image
    # committed from it. Named uniquely: the tls and ssh variants share one daemon and run at once.
    foreign = f"by-hand-{uuid.uuid4().hex[:8]}"
    by_hand = api.post("/containers/create", params={"name": foreign}, json={"Image": second_image, "Cmd": ["true"]})
    assert by_hand.status_code == 201, by_hand.text
    committed = api.post("/commit", params={"container": foreign}, json={})
    assert committed.status_code == 201, committed.text
    foreign_image = full_image_id(committed.json()["Id"])  # Podman answers the bare hex id

    collected = _rig(project, "--json", "gc")

    assert collected.returncode == 0, collected
    removed = {(item["kind"], item["id"]) for item in collected.json["removed"]}
    assert removed == {("container", name) for name in build_machines}
    containers, images = _ours(api, project)
    assert containers == {workspace_machine, foreign}
    assert {first_image, second_image, foreign_image} <= images  # the workspace was made from the first

    assert _rig(project, "rm", "dev", "--yes").returncode == 0
    again = _rig(project, "--json", "gc")
    assert [(item["kind"], item["resource"]["image_id"]) for item in again.json["removed"]] == [("image", first_image)]
    containers, images = _ours(api, project)
    assert containers == {foreign} and first_image not in images
    assert {second_image, foreign_image} <= images

"""The docker example end to end: through the engine API and the rig CLI, checked with the daemon itself."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_support import Rig, copy_example, provider_storage, rig_env, statuses, with_engine


@pytest.fixture
def containers_project(tmp_path: Path, docker_daemon: Any) -> Iterator[Rig]:
    project = copy_example("docker", tmp_path)
    env = rig_env(tmp_path, RIG_DOCKER_IMAGE=docker_daemon.image, DOCKER_HOST=docker_daemon.host)
    yield Rig(project, env)
    # Everything the example made carries the project label: containers, and images committed from them.
    api = docker_daemon.api
    labels = json.dumps({"label": [f"rig.project={project}"]})
    for container in api.get("/containers/json", params={"all": "true", "filters": labels}).json():
        api.delete(f"/containers/{container['Id']}", params={"force": "true"})
    for image in api.get("/images/json", params={"filters": labels}).json():
        api.delete(f"/images/{image['Id']}", params={"force": "true"})


def project_containers(api: Any, project: Path) -> list[dict[str, Any]]:
    labels = json.dumps({"label": [f"rig.project={project}"]})
    found: list[dict[str, Any]] = api.get("/containers/json", params={"all": "true", "filters": labels}).json()
    return found


def test_the_cli_story_apply_cache_rebuild_fork_operate_remove(containers_project: Rig, docker_daemon: Any) -> None:
    rig, api, project = containers_project, docker_daemon.api, containers_project.project
    applied = rig.json("apply")
    base = applied["context"]["base"]
    assert base["provider"] == "docker" and base["kind"] == "image"
    assert api.get(f"/images/{base['image_id']}/json").status_code == 200
    assert project_containers(api, project) == []  # build containers are removed

    again = rig.json("apply")
    assert again["plan"]["cached_node_count"] == again["plan"]["node_count"] == 2
    assert again["context"] == applied["context"]

    assert api.delete(f"/images/{base['image_id']}", params={"force": "true"}).status_code == 200
    plan = rig.json("plan")
    assert statuses(plan) == {"tooling": ("cached", "cached"), "project": ("pending", "artifact-invalid")}
    rebuilt = rig.json("apply")["context"]["base"]
    assert rebuilt["image_id"] != base["image_id"]
    assert api.get(f"/images/{rebuilt['image_id']}/json").status_code == 200

    workspace = rig.json("fork", "dev")
    container = workspace["ctx"]["container"]
    info = api.get(f"/containers/{container}/json").json()
    assert info["State"]["Running"] and info["Image"] == rebuilt["image_id"]
    assert info["Config"]["Labels"]["rig.workspace"] == "dev"
    assert info["HostConfig"]["NetworkMode"] == "none"

    status = rig.json("op", "dev", "status")
    assert status["output"] == f"hello, {container[:12]}\ntests passed\n"
    assert rig.json("op", "dev", "path") == "/workspace"

    assert rig.json("rm", "dev", "--yes")["name"] == "dev"
    assert api.get(f"/containers/{container}/json").status_code == 404
    store, storage = provider_storage(project, "docker")
    try:
        assert storage.get(f"machine:{workspace['ctx']['machine']}") is None
    finally:
        store.close()


def test_a_missing_base_image_fails_apply_with_the_pull_to_run(containers_project: Rig) -> None:
    rig = containers_project
    rig.env["RIG_DOCKER_IMAGE"] = "rig-test/absent:1"
    done = rig.run("apply", check=False)
    assert done.returncode == 1
    assert "docker pull rig-test/absent:1" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_missing_rig_base_image_says_how_to_build_it_not_to_pull_it(containers_project: Rig) -> None:
    rig = containers_project
    rig.env["RIG_DOCKER_IMAGE"] = "rig/absent:1"  # rig's own namespace: no registry has it
    done = rig.run("apply", check=False)
    assert done.returncode == 1
    assert "docker build -t rig/absent:1" in done.stderr
    assert "docker pull" not in done.stderr


def test_the_engine_api_story(containers_project: Rig, docker_daemon: Any) -> None:
    async def story(engine: Any) -> dict[str, Any]:
        applied = await engine.planner.apply()
        workspace = await engine.workspaces.fork(name="dev")
        status = await engine.operations.run_workspace_operation("dev", "status", input={})
        removed = await engine.workspaces.remove_workspace(name="dev")
        return {"applied": applied, "workspace": workspace, "status": status, "removed": removed}

    seen = with_engine(containers_project.project, containers_project.env, story)
    container = seen["workspace"].ctx["container"]
    assert seen["status"]["output"].endswith("tests passed\n")
    assert seen["removed"].name == "dev"
    assert docker_daemon.api.get(f"/containers/{container}/json").status_code == 404
    assert docker_daemon.api.get(f"/images/{seen['applied'].context['base']['image_id']}/json").status_code == 200

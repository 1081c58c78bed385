"""Day two on a real Docker daemon (unix socket), through the installed rig: outdated and `rig diff`,
`rig fork --replace`, `--from` (the container committed as it is) and `--count`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import docker_endpoints
import pytest

from tests.cli.cli_support import Result, run_rig, write_project

CONFIG = """
from rigcli import define_provider, env, workflow

IMAGE = env("RIG_TEST_DOCKER_IMAGE", "rig/base:busybox")
app = workflow("forks", providers={"box": define_provider("docker", image=IMAGE)})
VERSION = "1"


def build(step, box):
    machine = box.create_machine()
    try:
        machine.exec("echo " + VERSION + " > /workspace/version", name="build")
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create(workflow, box):
    return {"machine": box.from_snapshot(workflow.ctx["base"]).id}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


def note(workspace, box):
    box.from_id(workspace.ctx["machine"]).exec("echo written-later > /workspace/notes", name="note")


def read(workspace, box):
    machine = box.from_id(workspace.ctx["machine"])
    found = [name for name in ("version", "notes") if machine.exists("/workspace/" + name)]
    return {name: machine.read_text("/workspace/" + name).strip() for name in found}


workflows = (
    app.sequence("forks")
    .task("build", build)
    .workspace(create=create, remove=remove)
    .workspace_operation("note", run=note)
    .workspace_operation("read", run=read)
)
"""


@pytest.fixture
def daemon(
    docker_daemons: Callable[[str], docker_endpoints.EndpointDaemon], monkeypatch: pytest.MonkeyPatch
) -> docker_endpoints.EndpointDaemon:
    found = docker_daemons("unix")
    docker_endpoints.point_environment(monkeypatch, found)
    return found


@pytest.fixture
def project(tmp_path: Path, daemon: docker_endpoints.EndpointDaemon) -> Iterator[Path]:
    path = write_project(tmp_path / "project", CONFIG)
    yield path
    api = daemon.api
    labels = f'{{"label": ["rig.project={path}"]}}'
    for container in api.get("/containers/json", params={"all": "true", "filters": labels}).json():
        api.delete(f"/containers/{container['Id']}", params={"force": "true"})
    for image in api.get("/images/json", params={"filters": labels}).json():
        api.delete(f"/images/{image['Id']}", params={"force": "true"})


def ok(project: Path, *args: str) -> Result:
    result = run_rig(*args, cwd=project, env={"RIG_RENDER": "0"}, subprocess=True)
    assert result.returncode == 0, result
    return result


def listed(project: Path) -> dict[str, dict[str, Any]]:
    document = ok(project, "--json", "ls").json
    return {item["name"]: item for workflow in document["workflows"] for item in workflow["workspaces"]}


def containers(api: Any, project: Path) -> set[str]:
    labels = f'{{"label": ["rig.project={project}"]}}'
    return {
        c["Names"][0].lstrip("/") for c in api.get("/containers/json", params={"all": "true", "filters": labels}).json()
    }


def images(api: Any, project: Path) -> set[str]:
    labels = f'{{"label": ["rig.project={project}"]}}'
    return {image["Id"] for image in api.get("/images/json", params={"filters": labels}).json()}


def test_outdated_diff_and_replace_on_docker(project: Path, daemon: docker_endpoints.EndpointDaemon) -> None:
    made = ok(project, "--json", "fork", "a").json
    assert listed(project)["a"]["outdated"] is False
    config = project / "rig_config.py"
    config.write_text(config.read_text().replace('VERSION = "1"', 'VERSION = "2"'))
    assert listed(project)["a"]["outdated"] is True
    changes = ok(project, "--json", "diff", "a").json["changes"]
    assert [(item["path"], item["reason"]["code"]) for item in changes] == [("build", "task-changed")]

    replaced = ok(project, "--json", "fork", "a", "--replace").json
    assert replaced["id"] == made["id"] and replaced["ctx"]["machine"] != made["ctx"]["machine"]
    assert containers(daemon.api, project) == {replaced["ctx"]["machine"]}  # the old container is gone
    assert ok(project, "--json", "op", "a", "read").json == {"version": "2"}
    assert listed(project)["a"]["outdated"] is False
    leftover = ok(project, "--json", "gc", "--dry-run").json["removed"]
    assert [item["id"] for item in leftover if item["kind"] == "container"] == []


def test_replace_names_what_the_container_would_lose_and_asks_first(
    project: Path, daemon: docker_endpoints.EndpointDaemon
) -> None:
    made = ok(project, "--json", "fork", "a").json
    ok(project, "op", "a", "note")  # written after the fork: the container's diff against its image
    refused = run_rig("fork", "a", "--replace", cwd=project, env={"RIG_RENDER": "0"}, subprocess=True)
    assert refused.returncode == 1, refused
    assert "added    /workspace/notes" in refused.stderr and "--yes" in refused.stderr, refused
    assert containers(daemon.api, project) == {made["ctx"]["machine"]}  # nothing changed
    assert ok(project, "--json", "op", "a", "read").json == {"version": "1", "notes": "written-later"}

    replaced = ok(project, "--json", "fork", "a", "--replace", "--yes").json
    assert containers(daemon.api, project) == {replaced["ctx"]["machine"]}
    assert ok(project, "--json", "op", "a", "read").json == {"version": "1"}
    ok(project, "--json", "fork", "a", "--replace")  # untouched since: nothing to lose, nothing asked


def test_fork_from_commits_the_live_container_and_rm_removes_the_image(
    project: Path, daemon: docker_endpoints.EndpointDaemon
) -> None:
    ok(project, "fork", "a")
    ok(project, "op", "a", "note")  # written after a's fork
    before = images(daemon.api, project)
    made = ok(project, "--json", "fork", "b", "--from", "a").json
    assert made["status"] == "ready" and made["provenance"]["from"]["workspace"] == "a"
    assert ok(project, "--json", "op", "b", "read").json == {"version": "1", "notes": "written-later"}
    committed = images(daemon.api, project) - before
    assert len(committed) == 1 and made["workflow_ctx"]["base"]["image_id"] in committed
    assert sorted(item["kind"] for item in made["resources"]) == ["container", "image"]
    state = daemon.api.get(f"/containers/{listed(project)['a']['ctx']['machine']}/json").json()["State"]
    assert state["Running"] is True and state["Paused"] is False  # unpaused after the commit
    assert ok(project, "--json", "gc", "--dry-run").json["removed"] == []
    ok(project, "rm", "b", "--yes")
    assert images(daemon.api, project) == before  # the committed image went with b
    assert containers(daemon.api, project) == {listed(project)["a"]["ctx"]["machine"]}


def test_count_makes_several_containers_at_once(project: Path, daemon: docker_endpoints.EndpointDaemon) -> None:
    made = ok(project, "fork", "w", "--count", "3")
    assert made.stdout.splitlines() == ["w-1", "w-2", "w-3"]
    records = listed(project)
    assert {name: item["status"] for name, item in records.items()} == {"w-1": "ready", "w-2": "ready", "w-3": "ready"}
    assert containers(daemon.api, project) == {item["ctx"]["machine"] for item in records.values()}
    assert len(containers(daemon.api, project)) == 3


def test_last_used_is_the_start_until_something_else_runs_in_the_container(
    docker_on: Callable[[str], Any], daemon: docker_endpoints.EndpointDaemon
) -> None:
    from rigcli.provider_api import EffectEntry, SupportsLastUse
    from rigcli.records import age_seconds

    box = docker_on("unix")
    assert isinstance(box.controller, SupportsLastUse)
    machine = box.runtime.create_machine()
    entry: EffectEntry = {"id": machine.id, "kind": "container", "resource": {"machine_id": machine.id}}
    started = daemon.api.get(f"/containers/{machine.id}/json").json()["State"]["StartedAt"]
    idle = box.controller.last_used(entry)
    assert idle is not None and idle[:19] == started[:19]  # only its own two processes: used when started

    machine.exec("sleep 300 >/dev/null 2>&1 &", name="leave a process running")
    busy = box.controller.last_used(entry)
    assert busy is not None and busy > idle and abs(age_seconds(busy)) < 60  # in use now

    assert box.controller.last_used({**entry, "kind": "image"}) is None  # not a machine
    daemon.api.post(f"/containers/{machine.id}/stop", params={"t": "0"})
    assert box.controller.last_used(entry) is None  # stopped: nothing to stop

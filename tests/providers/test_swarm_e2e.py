"""examples/swarm through `rig` on the two-node cluster: build there, fork across both nodes, operate, clean up."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_support import copy_example, statuses
from swarm_cluster import API, SwarmCluster, snapshot_key

from tests.cli.cli_support import Result, run_rig


class SwarmProject:
    """The example copied into a temp dir, pointed at the cluster through its RIG_SWARM_* variables."""

    def __init__(self, path: Path, swarm: SwarmCluster) -> None:
        self.path = path
        self.swarm = swarm
        self.env = {
            "RIG_SWARM_HOST": swarm.manager,
            "RIG_SWARM_REGISTRY": swarm.registry,
            "RIG_SWARM_NODES": json.dumps(swarm.nodes),
            "RIG_SWARM_IMAGE": swarm.image,
            "RIG_RENDER": "0",
        }

    def rig(self, *args: str, **env: str) -> Result:
        return run_rig(*args, cwd=self.path, env={**self.env, **env}, timeout=300)

    def ok(self, *args: str, **env: str) -> Any:
        result = self.rig("--json", *args, **env)
        assert result.returncode == 0, result
        return result.json

    def services(self) -> dict[str, str]:
        """The project's services -> the hostname of the node their task runs on."""
        labels = json.dumps({"label": [f"rig.project={self.path}"]})
        nodes = {node["ID"]: node["Description"]["Hostname"] for node in self.swarm.api.get(f"{API}/nodes").json()}
        placed = {}
        for service in self.swarm.api.get(f"{API}/services", params={"filters": labels}).json():
            tasks = self.swarm.api.get(f"{API}/tasks", params={"filters": json.dumps({"service": [service["ID"]]})})
            running = [task for task in tasks.json() if task["Status"]["State"] == "running"]
            placed[service["Spec"]["Name"]] = nodes[running[0]["NodeID"]] if running else "-"
        return placed

    def tags(self) -> set[str]:
        prefix = f"{snapshot_key(self.path)}-"
        return {tag for tag in self.swarm.registry_tags("rig/snapshot") if tag.startswith(prefix)}


@pytest.fixture
def cluster_project(tmp_path: Path, swarm: SwarmCluster) -> Iterator[SwarmProject]:
    project = SwarmProject(copy_example("swarm", tmp_path), swarm)
    yield project
    swarm.clean(project.path)


def test_apply_builds_on_the_cluster_and_forks_spread_over_both_nodes(cluster_project: SwarmProject) -> None:
    project, swarm = cluster_project, cluster_project.swarm
    applied = project.ok("apply")
    base, toolchain = applied["context"]["base"], applied["context"]["toolchain"]
    for ref in (base, toolchain):
        assert (ref["provider"], ref["kind"]) == ("swarm", "image")
        assert ref["image"].startswith(f"{swarm.registry}/rig/snapshot@sha256:")
    assert project.tags() == {base["snapshot_id"], toolchain["snapshot_id"]}
    assert project.services() == {}  # the build machines were services, and are gone

    again = project.ok("apply")
    assert again["plan"]["cached_node_count"] == again["plan"]["node_count"] == 2
    # The registry is the snapshot's home: without its manifest there, the task is rebuilt.
    assert swarm.delete_registry_tag("rig/snapshot", base["snapshot_id"])
    assert statuses(project.ok("plan")) == {
        "toolchain": ("cached", "cached"),
        "project": ("pending", "artifact-invalid"),
    }
    base = project.ok("apply")["context"]["base"]
    assert base["snapshot_id"] in project.tags()

    names = [f"ws{index}" for index in range(1, 7)]
    for name in names:
        assert project.rig("fork", name).returncode == 0
    placed = project.services()
    assert len(placed) == 6
    assert set(placed.values()) == set(swarm.nodes), f"6 forks did not reach both nodes: {placed}"

    worker = next(hostname for hostname, role in swarm.node_roles().items() if role == "worker")
    listed = {ws["name"]: ws for ws in project.ok("ls")["workflows"][0]["workspaces"]}
    on_worker = next(name for name in names if listed[name]["ctx"]["node"] == worker)
    where = project.ok("op", on_worker, "where")
    assert where["node"] == worker
    assert where["output"] == f"toolchain ready on {where['container'][:12]}\nchecks passed\n"

    for name in names:
        assert project.ok("rm", name, "--yes")["name"] == name
    assert project.services() == {}
    collected = project.ok("gc")
    assert {item["kind"] for item in collected["removed"]} <= {"image"}
    assert project.tags() == {base["snapshot_id"], toolchain["snapshot_id"]}  # the cache still refers to them

    assert project.ok("cache", "clear", "--yes")["deleted"] >= 2
    project.ok("gc")
    assert swarm.wait_gone(project.path) == []


def test_another_registry_makes_the_tasks_provider_changed(cluster_project: SwarmProject) -> None:
    project, swarm = cluster_project, cluster_project.swarm
    project.ok("apply")
    port = swarm.registry.rsplit(":", 1)[1]
    other = {"RIG_SWARM_REGISTRY": f"localhost:{port}", "RIG_SWARM_IMAGE": f"localhost:{port}/rig/base:busybox"}
    plan = project.ok("plan", **other)
    assert statuses(plan)["toolchain"] == ("pending", "provider-changed")
    [check] = [c for c in plan["provider_checks"] if c["id"] == "swarm.cluster"]
    assert f"registry=localhost:{port}" in check["fingerprint"]
    assert statuses(project.ok("plan"))["toolchain"] == ("cached", "cached")


def test_doctor_in_the_project_shows_the_manager_the_nodes_and_the_registry(cluster_project: SwarmProject) -> None:
    project, swarm = cluster_project, cluster_project.swarm
    report = project.ok("doctor")
    [box] = report["project"]["swarm_providers"]
    assert (box["name"], box["reachable"], box["host"]) == ("box", True, swarm.manager)
    assert {node["hostname"]: node["endpoint"] for node in box["nodes"]} == swarm.nodes
    assert (box["registry"]["name"], box["registry"]["reachable"]) == (swarm.registry, True)
    human = project.rig("doctor")
    assert human.returncode == 0 and "registry http://" in human.stdout and "(worker, ready, reached)" in human.stdout

"""Stopping and starting a swarm machine: scaled to 0 and back, its files kept through the registry."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from provider_helpers import Harness
from swarm_cluster import API, SwarmCluster

from providers.swarm import snapshots
from providers.swarm.power import saved_tag


def replicas(swarm: SwarmCluster, name: str) -> int:
    return int(swarm.api.get(f"{API}/services/{name}").json()["Spec"]["Mode"]["Replicated"]["Replicas"])


def saved_labels(swarm: SwarmCluster, tag: str) -> dict[str, str]:
    accept = {"Accept": "application/vnd.docker.distribution.manifest.v2+json"}
    base = f"http://{swarm.registry}/v2/rig/snapshot"
    manifest = httpx.get(f"{base}/manifests/{tag}", headers=accept, timeout=10).json()
    labels: dict[str, str] = httpx.get(f"{base}/blobs/{manifest['config']['digest']}", timeout=10).json()["config"][
        "Labels"
    ]
    return labels


def digest_of(swarm: SwarmCluster, reference: str) -> int:
    accept = {"Accept": "application/vnd.docker.distribution.manifest.v2+json"}
    url = f"http://{swarm.registry}/v2/rig/snapshot/manifests/{reference}"
    return httpx.head(url, headers=accept, timeout=10).status_code


def test_a_stopped_machine_keeps_its_files_and_starts_again_on_any_node(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness], project: Path
) -> None:
    box = swarm_on()
    controller, runtime = box.controller, box.runtime
    machine = runtime.create_machine()
    machine.write_text("work/notes.txt", "unsaved work\n")

    controller.stop_machine(machine.id)
    assert replicas(swarm, machine.id) == 0
    tag = saved_tag(str(project), machine.id)
    labels = saved_labels(swarm, tag)
    assert (labels["rig.kind"], labels["rig.effect"], labels["rig.project"]) == ("stopped", tag, str(project))
    image = swarm.api.get(f"{API}/services/{machine.id}").json()["Spec"]["TaskTemplate"]["ContainerSpec"]["Image"]
    assert image.startswith(f"{swarm.registry}/rig/snapshot@sha256:")
    # A stopped machine's files are not a snapshot: nothing for rm or gc to take while its machine exists.
    assert {(entry["kind"], entry["id"]) for entry in controller.find_effects()} == {("service", machine.id)}
    controller.stop_machine(machine.id)  # already stopped: nothing to do
    first = image.rsplit("@", 1)[1]

    controller.start_machine(machine.id)
    assert replicas(swarm, machine.id) == 1
    again = runtime.from_id(machine.id)
    assert again.container_id != machine.container_id
    assert again.read_text("work/notes.txt") == "unsaved work\n"
    controller.start_machine(machine.id)  # already running: nothing to do
    assert runtime.from_id(machine.id).container_id == again.container_id

    again.write_text("work/more.txt", "more\n")
    controller.stop_machine(machine.id)
    assert digest_of(swarm, first) == 404  # the first stop's image went once the second replaced it
    controller.start_machine(machine.id)
    third = runtime.from_id(machine.id)
    assert third.exec("cat work/notes.txt work/more.txt").stdout == "unsaved work\nmore\n"

    third.delete()
    assert swarm.api.get(f"{API}/services/{machine.id}").status_code == 404
    assert tag not in swarm.registry_tags("rig/snapshot")
    assert controller.find_effects() == []


def test_the_saved_files_of_a_machine_whose_service_went_are_found_by_gc(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness], project: Path
) -> None:
    controller = swarm_on().controller
    machine = swarm_on().runtime.create_machine()
    controller.stop_machine(machine.id)
    assert swarm.api.delete(f"{API}/services/{machine.id}").status_code == 200  # removed by hand

    tag = saved_tag(str(project), machine.id)
    found: list[Any] = [entry for entry in controller.find_effects() if entry["kind"] == "image"]
    assert [entry["id"] for entry in found] == [tag]
    assert controller.remove_effect(found[0]) is True
    assert tag not in swarm.registry_tags("rig/snapshot")
    assert controller.find_effects() == []


def test_every_node_copy_of_saved_files_goes_whatever_order_the_node_lists_them(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A second stop commits the container that runs the first stop's image: on that node the new copy is
    # a child of the old one, and a parent cannot go before its child (409 "dependent child images"). One
    # node runs every task, so the machine runs the child there when it is removed, as on a busy cluster.
    node = next(name for name, role in swarm.node_roles().items() if role == "manager")
    box = swarm_on(constraints=[f"node.hostname=={node}"])
    controller, runtime = box.controller, box.runtime
    machine = runtime.create_machine()
    controller.stop_machine(machine.id)
    controller.start_machine(machine.id)
    controller.stop_machine(machine.id)
    controller.start_machine(machine.id)
    tag = saved_tag(str(project), machine.id)

    listed = snapshots.copies
    with_parents = 0

    def parents_first(daemon: Any, wanted: str) -> list[str]:
        nonlocal with_parents
        ids = listed(daemon, wanted)
        parents = {daemon.json("GET", f"/images/{image}/json")["Parent"] for image in ids}
        with_parents += len(parents & set(ids))
        return sorted(ids, key=lambda image: image not in parents)

    monkeypatch.setattr(snapshots, "copies", parents_first)
    assert controller.delete_machine(machine.id) is True
    assert with_parents >= 1  # the case at hand: a node held a parent and its child
    assert tag not in swarm.registry_tags("rig/snapshot")
    assert {node: images for node, images in swarm.node_images(project).items() if images} == {}
    assert controller.find_effects() == []

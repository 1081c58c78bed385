"""Swarm services and registry snapshots are journaled before they are made and found again by rig's labels."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from provider_helpers import Harness
from swarm_cluster import API, SwarmCluster, snapshot_key

from rigcli.engine.effects import StoreEffects
from rigcli.errors import ProviderError
from rigcli.state import create_state_store


@pytest.fixture
def wired(swarm_on: Callable[..., Harness], project: Path) -> Iterator[tuple[Any, Any, Any]]:
    """(store, controller, runtime) of the swarm provider on a real effects journal."""
    harness = swarm_on(workspace="dev")
    store = create_state_store(project_dir=project)
    store.sync_schema()
    controller = harness.plugin.create_provider(replace(harness.setup, effects=StoreEffects(store, "swarm")))
    runtime = controller.runtime(replace(harness.context, effects=StoreEffects(store, "swarm", ("run", "r1"))))
    yield store, controller, runtime
    controller.close()
    store.close()


def _spec(swarm: SwarmCluster, name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "Name": name,
        "Labels": labels,
        "TaskTemplate": {
            "ContainerSpec": {"Image": swarm.image, "Command": ["sleep", "600"], "Init": True, "StopGracePeriod": 0},
            "RestartPolicy": {"Condition": "none"},
        },
        "Mode": {"Replicated": {"Replicas": 1}},
        "EndpointSpec": {"Mode": "dnsrr"},
    }


def test_services_and_snapshots_are_found_by_their_labels_and_removed_once(
    swarm: SwarmCluster, wired: tuple[Any, Any, Any], project: Path
) -> None:
    store, controller, runtime = wired
    machine = runtime.create_machine()
    ref = machine.snapshot_ref()
    tag = ref["snapshot_id"]
    assert tag.startswith(f"{snapshot_key(project)}-{machine.id}-")

    # Not rig's: a service with the project's label but named otherwise, and a tag in the registry
    # under the project's prefix whose image says nothing of rig.
    foreign = swarm.api.post(
        f"{API}/services/create", json=_spec(swarm, "by-hand", {"rig.project": str(project), "rig.effect": "x"})
    )
    assert foreign.status_code == 201, foreign.text
    try:
        found = {(entry["kind"], entry["id"]) for entry in controller.find_effects()}
        assert found == {("service", machine.id), ("image", tag)}

        service, image = sorted(store.list_effects(), key=lambda effect: effect.kind == "image")
        assert (service.kind, service.id, service.status) == ("service", machine.id, "confirmed")
        assert (image.kind, image.id, image.status) == ("image", tag, "confirmed")
        for effect in (service, image):
            entry = {"id": effect.id, "kind": effect.kind, "resource": store.get_effect(effect.id).resource}
            assert controller.remove_effect(entry) is True
            assert controller.remove_effect(entry) is False  # already gone counts as removed
            assert store.get_effect(effect.id).status == "deleted"
        assert swarm.api.get(f"{API}/services/{machine.id}").status_code == 404
        assert tag not in swarm.registry_tags("rig/snapshot")
        assert [entry["id"] for entry in controller.find_effects()] == []
    finally:
        swarm.api.delete(f"{API}/services/by-hand")


def test_a_service_whose_create_reply_was_lost_is_found_by_its_name(
    swarm: SwarmCluster, wired: tuple[Any, Any, Any], project: Path
) -> None:
    store, controller, _ = wired
    effects = StoreEffects(store, "swarm", ("workspace", "w1"))
    name = "rig-0123456789ab"
    effects.requested("service", {"machine_id": name, "manager": swarm.manager}, effect_id=name)
    labels = {"rig.project": str(project), "rig.machine": name, "rig.effect": name, "rig.kind": "machine"}
    made = swarm.api.post(f"{API}/services/create", json=_spec(swarm, name, labels))
    assert made.status_code == 201, made.text  # made, but rig never heard back

    assert [entry["id"] for entry in controller.find_effects()] == [name]
    entry = {"id": name, "kind": "service", "resource": store.get_effect(name).resource}
    assert controller.remove_effect(entry) is True
    assert swarm.api.get(f"{API}/services/{name}").status_code == 404


def test_a_snapshot_tag_pushed_before_rig_was_killed_is_found_in_the_registry_and_on_its_node(
    swarm: SwarmCluster, wired: tuple[Any, Any, Any], project: Path
) -> None:
    store, controller, runtime = wired
    machine = runtime.create_machine()
    ref = machine.snapshot_ref()
    tag = ref["snapshot_id"]
    store.delete_effect(tag)  # as if the journal row were lost: only the registry and the node know
    machine.delete()

    [found] = [entry for entry in controller.find_effects() if entry["kind"] == "image"]
    assert found["id"] == tag
    assert controller.remove_effect(found) is True
    assert tag not in swarm.registry_tags("rig/snapshot")
    # The committing node's copy is found (by its labels) as long as it is there, and goes with the tag.
    assert [entry for entry in controller.find_effects() if entry["kind"] == "image"] == []
    assert all(images == [] for images in swarm.node_images(project).values()), swarm.node_images(project)


def test_a_manager_that_does_not_answer_is_never_taken_as_gone(
    wired: tuple[Any, Any, Any], tmp_path: Path, swarm: SwarmCluster
) -> None:
    _, controller, _ = wired
    config = {**controller.setup.config, "host": f"unix://{tmp_path}/no.sock"}
    down = type(controller)(replace(controller.setup, config=config))
    entry = {"id": "rig-0123456789ab", "kind": "service", "resource": {"machine_id": "rig-0123456789ab"}}
    with pytest.raises(ProviderError, match="Cannot reach the Docker daemon"):
        down.remove_effect(entry)
    with pytest.raises(ProviderError, match="Cannot reach the Docker daemon"):
        down.find_effects()
    with pytest.raises(ProviderError, match="Cannot reach the Docker daemon"):
        down.checks("plan", workflow="web", local=None)
    down.close()

    unreachable = {**controller.setup.config, "registry": "127.0.0.1:1", "image": None}
    no_registry = type(controller)(replace(controller.setup, config=unreachable))
    tag = {"id": f"{snapshot_key(controller.setup.project_dir)}-x", "kind": "image", "resource": {}}
    with pytest.raises(ProviderError, match=r"Cannot reach the registry at http://127\.0\.0\.1:1"):
        no_registry.remove_effect(tag)
    with pytest.raises(ProviderError, match="Cannot reach the registry"):
        no_registry.validate_artifact({"provider": "swarm", "kind": "image", "image": "127.0.0.1:1/rig/snapshot:x"})
    no_registry.close()


def test_the_cluster_id_and_the_registry_are_the_providers_identity(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness]
) -> None:
    cluster_id = swarm.api.get(f"{API}/swarm").json()["ID"]
    [check] = swarm_on().controller.checks("plan", workflow="web", local=None)
    assert check["fingerprint"] == f"cluster={cluster_id} registry={swarm.registry}"
    assert check["status"] == "ok" and cluster_id in check["value"]
    port = swarm.registry.rsplit(":", 1)[1]
    [other] = swarm_on(registry=f"localhost:{port}", image=None).controller.checks("plan", workflow="web", local=None)
    assert other["fingerprint"] == f"cluster={cluster_id} registry=localhost:{port}"
    # Another manager of the same cluster would be the same identity: the address is not part of it.
    assert swarm.manager not in check["fingerprint"]


def test_doctor_shows_the_manager_each_node_and_how_it_is_reached_and_the_registry(swarm: SwarmCluster) -> None:
    from providers.swarm import plugin

    diagnosis = plugin.diagnose(swarm.provider_config())
    assert diagnosis.ok, diagnosis
    details = diagnosis.details
    assert details["host"] == swarm.manager and details["cluster_id"]
    nodes = {node["hostname"]: node for node in details["nodes"]}  # type: ignore[union-attr]
    assert set(nodes) == set(swarm.nodes)
    for hostname, node in nodes.items():
        assert (node["endpoint"], node["reachable"], node["state"]) == (swarm.nodes[hostname], True, "ready")
    assert {node["role"] for node in nodes.values()} == {"manager", "worker"}
    assert details["registry"] == {
        "name": swarm.registry,
        "url": f"http://{swarm.registry}",
        "reachable": True,
        "status": 200,
    }
    worker = next(h for h, n in nodes.items() if n["role"] == "worker")
    assert f"{worker} (worker, ready, reached)" in diagnosis.summary

    # A node without an endpoint, and a registry that does not answer, are said so.
    partial = swarm.provider_config(nodes={h: e for h, e in swarm.nodes.items() if h != worker}, registry="127.0.0.1:1")
    missing = plugin.diagnose(partial)
    assert not missing.ok
    assert f"{worker} (worker, ready, no endpoint)" in missing.summary
    assert "Cannot reach the registry at http://127.0.0.1:1" in missing.summary
    assert json.dumps(missing.details)  # JSON all the way down, for rig doctor --json

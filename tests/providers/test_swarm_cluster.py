"""The CI cluster really is two Swarm nodes: a service from the registry runs on the worker and is reached there."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from provider_helpers import wait_until
from swarm_cluster import API, SwarmCluster, exec_output, wait_for_task


def _events(api: Any, since: float, **filters: list[str]) -> list[dict[str, Any]]:
    """The daemon's events since ``since`` until now (NDJSON, read to the end)."""
    params = {"since": f"{since:.9f}", "until": f"{time.time():.9f}", "filters": json.dumps(filters)}
    lines = api.get(f"{API}/events", params=params).text.splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_a_service_from_the_registry_runs_on_the_worker_and_is_reached_through_its_own_node(
    swarm: SwarmCluster,
) -> None:
    roles = swarm.node_roles()
    assert sorted(roles.values()) == ["manager", "worker"]
    worker = next(hostname for hostname, role in roles.items() if role == "worker")
    worker_api = swarm.node_api(worker)
    since = time.time() - 1
    name = f"rig-smoke-{secrets.token_hex(4)}"
    spec = {
        "Name": name,
        "Labels": {"rig.test": "swarm-smoke"},
        "TaskTemplate": {
            "ContainerSpec": {
                "Image": swarm.image,  # the registry's name: what the worker pulls, from nowhere else
                "Command": ["sleep", "2147483647"],
                "Hostname": "{{.Node.Hostname}}",
                "StopGracePeriod": 0,
            },
            "Placement": {"Constraints": ["node.role==worker"]},
            "RestartPolicy": {"Condition": "none"},
        },
        "Mode": {"Replicated": {"Replicas": 1}},
        "EndpointSpec": {"Mode": "dnsrr"},  # no IPVS here: no virtual IP
    }
    # No X-Registry-Auth and API 1.41: the manager does not resolve the image through any registry.
    created = swarm.api.post(f"{API}/services/create", json=spec)
    assert created.status_code == 201, created.text
    service_id = created.json()["ID"]
    service_filter = json.dumps({"label": [f"com.docker.swarm.service.id={service_id}"]})
    try:
        task = wait_for_task(swarm.api, service_id)
        node = swarm.api.get(f"{API}/nodes/{task['NodeID']}").json()
        assert node["Description"]["Hostname"] == worker
        container = task["Status"]["ContainerStatus"]["ContainerID"]

        # The task's container exists on the worker only: exec goes to the task's own node.
        assert swarm.api.get(f"{API}/containers/{container}/json").status_code == 404
        assert exec_output(worker_api, container, ["hostname"]) == (0, f"{worker}\n")
        assert worker_api.get(f"{API}/containers/{container}/json").json()["Config"]["Image"] == swarm.image

        # The worker pulled the image, and only from the registry.
        pulls = [event["id"] for event in _events(worker_api, since, type=["image"], event=["pull"])]
        assert pulls and all(image.startswith(f"{swarm.registry}/") for image in pulls), pulls
        for image in worker_api.get(f"{API}/images/json").json():
            names = (image.get("RepoTags") or []) + (image.get("RepoDigests") or [])
            assert names and all(n.startswith(f"{swarm.registry}/") for n in names), names
    finally:
        assert swarm.api.delete(f"{API}/services/{service_id}").status_code == 200
        gone = wait_until(
            lambda: (
                not worker_api.get(f"{API}/containers/json", params={"all": "true", "filters": service_filter}).json()
            ),
            timeout=30,
        )
        # The next run proves its pull again; nothing of this test stays on the worker.
        worker_api.delete(f"{API}/images/{swarm.image}", params={"force": "true"})
    assert gone, "the service's task container outlived the service"
    assert [s for s in swarm.api.get(f"{API}/services").json() if s["ID"] == service_id] == []
    assert swarm.registry_tags("rig/base") == ["busybox"]

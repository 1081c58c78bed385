"""The two-node Docker Swarm and registry the swarm tests run against (started by ``.ci/swarm.sh``).

``swarm_ci_start`` exports RIG_TEST_SWARM_MANAGER (the manager's endpoint), RIG_TEST_SWARM_NODES
(JSON: node hostname -> that node's own endpoint), RIG_TEST_SWARM_REGISTRY (host:port, plain HTTP
on loopback, reachable under the same name from the host and from both nodes) and
RIG_TEST_SWARM_IMAGE (the busybox base image in that registry). Tests talk to the Engine API over
the unix sockets and to the registry's v2 API with httpx, the way a provider would.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

START_HINT = "start it with: source .ci/swarm.sh && swarm_ci_start"
API = "/v1.41"  # at 1.30+ the daemon never resolves a service's image through a registry (--no-resolve-image)


class Unavailable(Exception):
    """The cluster cannot be tested here; the message says why."""


def engine_client(host: str) -> httpx.Client:
    if not host.startswith("unix://"):
        raise Unavailable(f"the swarm tests drive nodes over unix sockets, not {host}")
    return httpx.Client(transport=httpx.HTTPTransport(uds=host[len("unix://") :]), base_url="http://docker", timeout=30)


@dataclass
class SwarmCluster:
    """The manager, each node's own endpoint, and the registry every image comes from."""

    manager: str
    nodes: dict[str, str]  # node hostname -> its Docker endpoint
    registry: str  # host:port
    image: str  # REGISTRY/rig/base:busybox
    api: httpx.Client  # on the manager
    _clients: dict[str, httpx.Client] = field(default_factory=dict)

    def node_api(self, hostname: str) -> httpx.Client:
        """A client on that node's own daemon (a task's container exists only there)."""
        if hostname not in self._clients:
            self._clients[hostname] = engine_client(self.nodes[hostname])
        return self._clients[hostname]

    def node_roles(self) -> dict[str, str]:
        """hostname -> "manager" | "worker", for the nodes the manager sees as ready."""
        nodes = self.api.get(f"{API}/nodes").json()
        return {
            node["Description"]["Hostname"]: node["Spec"]["Role"]
            for node in nodes
            if node["Status"]["State"] == "ready"
        }

    def registry_tags(self, repository: str) -> list[str]:
        response = httpx.get(f"http://{self.registry}/v2/{repository}/tags/list", timeout=10)
        if response.status_code == 404:
            return []
        tags: list[str] = response.json().get("tags") or []
        return tags

    def provider_config(self, **extra: Any) -> dict[str, Any]:
        """The swarm provider's config for this cluster (``extra`` on top)."""
        return {
            "host": self.manager,
            "registry": self.registry,
            "nodes": dict(self.nodes),
            "image": self.image,
            **extra,
        }

    def leftovers(self, project: Any) -> list[str]:
        """What rig made for ``project`` that is still there: services, task containers on any node, registry tags."""
        labels = json.dumps({"label": [f"rig.project={project}"]})
        found = [
            f"service {s['Spec']['Name']}" for s in self.api.get(f"{API}/services", params={"filters": labels}).json()
        ]
        for hostname in self.nodes:
            containers = self.node_api(hostname).get(
                f"{API}/containers/json", params={"all": "true", "filters": labels}
            )
            found += [f"container {c['Names'][0]} on {hostname}" for c in containers.json()]
        prefix = f"{snapshot_key(project)}-"
        found += [f"registry tag rig/snapshot:{t}" for t in self.registry_tags("rig/snapshot") if t.startswith(prefix)]
        return found

    def clean(self, project: Any, *, timeout: float = 30.0) -> list[str]:
        """Remove what :meth:`leftovers` finds (services first, then wait for their containers); what was found."""
        found = self.leftovers(project)
        labels = json.dumps({"label": [f"rig.project={project}"]})
        for service in self.api.get(f"{API}/services", params={"filters": labels}).json():
            self.api.delete(f"{API}/services/{service['ID']}")
        prefix = f"{snapshot_key(project)}-"
        for tag in self.registry_tags("rig/snapshot"):
            if tag.startswith(prefix):
                self.delete_registry_tag("rig/snapshot", tag)
        self.wait_gone(project, timeout)
        for hostname in self.nodes:  # the nodes' copies of the project's snapshots
            api = self.node_api(hostname)
            for image in api.get(f"{API}/images/json", params={"filters": labels}).json():
                api.delete(f"{API}/images/{image['Id']}", params={"force": "true"})
        return found

    def node_images(self, project: Any) -> dict[str, list[str]]:
        """hostname -> the ids of the images on that node committed from the project's machines."""
        labels = json.dumps({"label": [f"rig.project={project}"]})
        return {
            hostname: [
                i["Id"] for i in self.node_api(hostname).get(f"{API}/images/json", params={"filters": labels}).json()
            ]
            for hostname in self.nodes
        }

    def delete_registry_tag(self, repository: str, tag: str) -> bool:
        """Delete the manifest a tag names (as rig does: by the digest the schema 2 manifest has)."""
        accept = {"Accept": "application/vnd.docker.distribution.manifest.v2+json"}
        head = httpx.head(f"http://{self.registry}/v2/{repository}/manifests/{tag}", headers=accept, timeout=10)
        if head.status_code != 200:
            return False
        digest = head.headers["Docker-Content-Digest"]
        return httpx.delete(f"http://{self.registry}/v2/{repository}/manifests/{digest}", timeout=10).status_code == 202

    def wait_gone(self, project: Any, timeout: float = 30.0) -> list[str]:
        """What is left of ``project`` once task containers had ``timeout`` seconds to go (nodes remove them late)."""
        deadline = time.monotonic() + timeout
        left = self.leftovers(project)
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = self.leftovers(project)
        return left

    def close(self) -> None:
        for client in [self.api, *self._clients.values()]:
            client.close()


def snapshot_key(project: Any) -> str:
    """The prefix of a project's snapshot tags (what the swarm provider names them by)."""
    from providers.swarm.snapshots import project_key

    return project_key(str(project))


def connect() -> SwarmCluster:
    """The cluster the RIG_TEST_SWARM_* variables describe, checked to be a live two-node swarm; raises Unavailable."""
    names = ("RIG_TEST_SWARM_MANAGER", "RIG_TEST_SWARM_NODES", "RIG_TEST_SWARM_REGISTRY", "RIG_TEST_SWARM_IMAGE")
    missing = [name for name in names if not os.environ.get(name)]
    if missing:
        raise Unavailable(f"{', '.join(missing)} not set ({START_HINT})")
    manager, registry, image = (os.environ[name] for name in (names[0], names[2], names[3]))
    nodes = json.loads(os.environ["RIG_TEST_SWARM_NODES"])
    api = engine_client(manager)
    cluster = SwarmCluster(manager, nodes, registry, image, api)
    try:
        swarm = api.get(f"{API}/info", timeout=5).json()["Swarm"]
        if swarm.get("LocalNodeState") != "active" or not swarm.get("ControlAvailable"):
            raise Unavailable(f"{manager} is not a swarm manager ({swarm.get('LocalNodeState')})")
        ready = cluster.node_roles()
        if len(ready) < 2 or set(ready) != set(nodes):
            raise Unavailable(f"the swarm's ready nodes are {sorted(ready)}, not the two in RIG_TEST_SWARM_NODES")
        repository, _, tag = image[len(registry) + 1 :].rpartition(":")
        if tag not in cluster.registry_tags(repository):
            raise Unavailable(f"the registry {registry} has no {image}")
    except (httpx.HTTPError, OSError, KeyError, ValueError) as exc:
        cluster.close()
        raise Unavailable(f"the swarm at {manager} does not answer ({exc})") from None
    except Unavailable:
        cluster.close()
        raise
    return cluster


def wait_for_task(api: httpx.Client, service_id: str, *, timeout: float = 60.0) -> dict[str, Any]:
    """The service's task once it runs; a task that failed or was rejected fails the test with its error."""
    deadline = time.monotonic() + timeout
    filters = json.dumps({"service": [service_id]})
    tasks: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        tasks = api.get(f"{API}/tasks", params={"filters": filters}).json()
        for task in tasks:
            state = task["Status"]["State"]
            if state == "running":
                return task
            if state in ("failed", "rejected"):
                raise AssertionError(f"task {task['ID']} {state}: {task['Status'].get('Err')}")
        time.sleep(0.1)
    raise AssertionError(f"no task of service {service_id} ran within {timeout} s: {[t['Status'] for t in tasks]}")


def exec_output(api: httpx.Client, container: str, command: list[str]) -> tuple[int, str]:
    """Run ``command`` in ``container`` through ``api``; its exit code and stdout."""
    from providers.docker.execution import FrameDecoder

    created = api.post(f"{API}/containers/{container}/exec", json={"AttachStdout": True, "Cmd": command})
    if created.status_code != 201:
        raise AssertionError(f"exec create: HTTP {created.status_code} {created.text}")
    exec_id = created.json()["Id"]
    started = api.post(f"{API}/exec/{exec_id}/start", json={"Detach": False, "Tty": False})
    stdout = b"".join(data for stream, data in FrameDecoder().feed(started.content) if stream == "stdout")
    for _ in range(100):  # the stream can end a moment before the daemon records the exit
        info = api.get(f"{API}/exec/{exec_id}/json").json()
        if not info["Running"] and info["ExitCode"] is not None:
            return int(info["ExitCode"]), stdout.decode()
        time.sleep(0.02)
    raise AssertionError(f"exec {command} in {container} did not finish")


__all__ = [
    "API",
    "SwarmCluster",
    "Unavailable",
    "connect",
    "engine_client",
    "exec_output",
    "snapshot_key",
    "wait_for_task",
]

"""The cluster as rig reaches it: the manager's API, and each node's own daemon for what runs in a task.

A task's container exists only on its node: exec, files and commits go to that node's endpoint
(from ``nodes=``; the manager's own node needs none). Exec through the manager into a task on
another node fails with "No such container".
"""

from __future__ import annotations

import threading
from typing import Any

from providers.docker.client import DockerClient, daemon_message, negotiate
from providers.docker.endpoint import Endpoint
from rigcli.errors import ProviderError
from rigcli.speed.records import lazy_dataclass
from rigcli.timeouts import Bound, check_bound

# From API 1.30 the manager uses a service's image reference as given and never resolves it
# through a registry (the docker CLI's --no-resolve-image); older APIs pin it by asking one.
MIN_API_VERSION = "1.30"


@lazy_dataclass(frozen=True)
class Node:
    """A swarm node as the manager describes it."""

    id: str
    hostname: str
    address: str
    role: str
    state: str
    availability: str

    @classmethod
    def of(cls, data: dict[str, Any]) -> Node:
        return cls(
            id=str(data.get("ID") or ""),
            hostname=str((data.get("Description") or {}).get("Hostname") or ""),
            address=str((data.get("Status") or {}).get("Addr") or ""),
            role=str((data.get("Spec") or {}).get("Role") or ""),
            state=str((data.get("Status") or {}).get("State") or ""),
            availability=str((data.get("Spec") or {}).get("Availability") or ""),
        )

    def names(self) -> tuple[str, ...]:
        """What ``nodes=`` may call it: hostname, address, id."""
        return tuple(key for key in (self.hostname, self.address, self.id) if key)


class Cluster:
    """The manager's client and, made on first use, one client per node endpoint; thread-safe."""

    def __init__(self, manager: Endpoint, nodes: dict[str, Endpoint], *, bound: Bound | None = None) -> None:
        """``bound``: each read of an answer from the manager and the nodes (default RIG_READ_TIMEOUT)."""
        self.manager = DockerClient(manager, bound=bound)
        self._bound = bound
        self.node_endpoints = nodes
        self._clients: dict[str, DockerClient] = {manager.host: self.manager}
        self._nodes: dict[str, Node] = {}
        self._own_node: str | None = None
        self._lock = threading.Lock()

    @property
    def host(self) -> str:
        return self.manager.host

    def swarm(self) -> dict[str, Any]:
        """The manager's ``GET /swarm`` (a plan's question: within RIG_CHECK_TIMEOUT): the cluster's ``ID`` and
        spec; a clear error when it is no manager."""
        response = self.manager.request("GET", "/swarm", ok=(200, 406, 503), what="swarm inspect", bound=check_bound())
        if response.status_code != 200:
            raise ProviderError(
                f"The Docker daemon at {self.host} is not a swarm manager ({daemon_message(response)}); "
                "point the swarm provider's host= (or DOCKER_HOST) at a manager of the cluster"
            )
        found: dict[str, Any] = response.json()
        return found

    def check_api(self) -> None:
        """Refuse a manager too old to take an image reference as given (it would resolve it through a registry).

        Asks nothing: rig speaks API 1.41 until a daemon refuses it, and then the version negotiated.
        """
        version = self.manager.spoken_version
        if negotiate(version, MIN_API_VERSION) != MIN_API_VERSION:
            raise ProviderError(
                f"The swarm manager at {self.host} speaks Docker API {version}; the swarm provider needs "
                f"{MIN_API_VERSION}+ (Docker 17.06+), where a service's image is never resolved through a registry"
            )

    def node(self, node_id: str) -> Node:
        with self._lock:
            known = self._nodes.get(node_id)
        if known is not None:
            return known
        response = self.manager.request("GET", f"/nodes/{node_id}", ok=(200, 404), what="node inspect")
        if response.status_code == 404:
            raise ProviderError(f"Swarm node {node_id} is no longer part of the cluster at {self.host}")
        node = Node.of(response.json())
        with self._lock:
            self._nodes[node_id] = node
        return node

    def nodes(self) -> list[Node]:
        return [Node.of(item) for item in self.manager.json("GET", "/nodes", what="node list")]

    def endpoint_of(self, node: Node) -> Endpoint | None:
        """The node's own endpoint from ``nodes=``; the manager's for the manager's own node; else None."""
        for key in node.names():
            if key in self.node_endpoints:
                return self.node_endpoints[key]
        if node.id == self._own_node_id():
            return self.manager.endpoint
        return None

    def _own_node_id(self) -> str:
        if self._own_node is None:
            info = self.manager.json("GET", "/info", what="info")
            self._own_node = str((info.get("Swarm") or {}).get("NodeID") or "")
        return self._own_node

    def client_for(self, node_id: str) -> tuple[Node, DockerClient]:
        """The node a task runs on and a client on that node's own daemon."""
        node = self.node(node_id)
        endpoint = self.endpoint_of(node)
        if endpoint is None:
            configured = ", ".join(sorted(self.node_endpoints)) or "none"
            raise ProviderError(
                f"The task runs on swarm node {node.hostname} ({node.address}), which has no endpoint in the swarm "
                f"provider's nodes= (configured: {configured}); add it, e.g. nodes={{{node.hostname!r}: "
                f'"ssh://me@{node.hostname}"}}'
            )
        return node, self.client(endpoint)

    def client(self, endpoint: Endpoint) -> DockerClient:
        with self._lock:
            client = self._clients.get(endpoint.host)
            if client is None:
                client = self._clients[endpoint.host] = DockerClient(endpoint, bound=self._bound)
            return client

    def client_at(self, host: str) -> DockerClient | None:
        """The client of the manager or configured node whose endpoint is ``host``; None for any other."""
        return next((client for client in self.every_client() if client.host == host), None)

    def every_client(self) -> list[DockerClient]:
        """The manager's and every configured node's client (for cleanups that visit each node)."""
        for endpoint in self.node_endpoints.values():
            self.client(endpoint)
        with self._lock:
            return list(self._clients.values())

    def cancel(self) -> None:
        with self._lock:
            clients = list(self._clients.values())
        for client in clients:
            client.cancel()

    def close(self) -> None:
        with self._lock:
            clients = list(self._clients.values())
        for client in clients:
            client.close()


__all__ = ["MIN_API_VERSION", "Cluster", "Node"]

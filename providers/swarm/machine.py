"""A swarm machine: a service of one replica, worked on through its task's container on the task's own node."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from providers.docker.machine import ContainerMachine

if TYPE_CHECKING:
    from providers.docker.client import DockerClient
    from providers.swarm.runtime import SwarmRuntime


class SwarmMachine(ContainerMachine["SwarmRuntime"]):
    """Exec, files and commits go to the node running the task (the manager cannot reach its container)."""

    provider_id = "swarm"

    def __init__(self, runtime: SwarmRuntime, record: Mapping[str, Any]) -> None:
        super().__init__(runtime, record)
        self.service_id: str = record["service_id"]
        self.task_id: str = record.get("task_id") or ""
        self.node_id: str = record.get("node_id") or ""
        self.node: str = record.get("node") or ""
        self.source_image: str | None = record.get("source_image")
        self._node_client: DockerClient | None = None

    @property
    def _client(self) -> DockerClient:
        if self._node_client is None:
            _, self._node_client = self._runtime.controller.cluster.client_for(self.node_id)
        return self._node_client

    def _snapshot(self) -> dict[str, Any]:
        """Commit the task's container on its node and push it to the registry."""
        return self._runtime.controller.snapshot(self, self._runtime.context.effects)

    def _remove(self) -> None:
        """Remove the service (its node removes the task's container) and its record."""
        self._runtime.controller.delete_machine(self.id)

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": "swarm",
            "id": self.id,
            "service_id": self.service_id,
            "task_id": self.task_id,
            "node_id": self.node_id,
            "node": self.node,
            "container_id": self.container_id,
            "image": self.image,
            "workdir": self.workdir,
            "created_at": self.created_at,
            "source_image": self.source_image,
        }


__all__ = ["SwarmMachine"]

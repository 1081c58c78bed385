"""What a swarm provider's handlers receive: a runtime that starts machines on the cluster, and those machines.

A machine is a service of one replica; exec, files and commits go to the node running its task
(the manager cannot reach its container). Both ask their controller only what ``SwarmParts`` says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from providers.docker.client import DockerClient
from providers.docker.machine import ContainerMachine
from providers.swarm.parts import SwarmParts
from rigcli.errors import ProviderError
from rigcli.provider_kit import BaseRuntime

PROVIDER_ID = "swarm"
IMAGE_KIND = "image"


def snapshot_of(ref: Any) -> dict[str, Any]:
    """A swarm image ref's ``image`` (and ``snapshot_id``, ``digest``), or a bare image reference string."""
    if isinstance(ref, str) and ref:
        return {"image": ref}
    ours = isinstance(ref, Mapping) and ref.get("provider") == PROVIDER_ID and ref.get("kind") == IMAGE_KIND
    if ours and isinstance(ref.get("image"), str) and ref["image"]:
        return dict(ref)
    raise ProviderError(f"Not a swarm image ref: {ref!r}")


class SwarmRuntime(BaseRuntime[SwarmParts]):
    """What handlers receive: start machines on the cluster, find them again, list what exists."""

    def create_machine(self, image: str | None = None) -> SwarmMachine:
        """A new service of ``image`` (or the configured image), placed by the swarm; returns once its task runs."""
        chosen = image or self.controller.swarm_config.image
        if not chosen:
            raise ProviderError("swarm create_machine needs an image: pass image=... or configure image=")
        return self._start(self.controller.swarm_config.check_image(chosen), source_image=None)

    def from_snapshot(self, ref: Any) -> SwarmMachine:
        """A new service of a snapshot pushed to the registry: any node can run it."""
        image = snapshot_of(ref)["image"]
        return self._start(self.controller.swarm_config.check_image(image), source_image=image)

    def _start(self, image: str, *, source_image: str | None) -> SwarmMachine:
        record = self.controller.start_service(image, context=self.context, source_image=source_image)
        machine = SwarmMachine(self, record)
        self.event(
            "machine.created",
            machine=machine.id,
            service_id=machine.service_id,
            node=machine.node,
            container_id=machine.container_id,
            image=image,
            effect_id=machine.id,
        )
        return machine

    def from_id(self, machine_id: str) -> SwarmMachine:
        """The machine recorded under ``machine_id``, at the task that runs it now."""
        return SwarmMachine(self, self.controller.current(machine_id))


class SwarmMachine(ContainerMachine[SwarmRuntime]):
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
        effects = self._runtime.context.effects
        return self._runtime.controller.snapshot_task(self.id, self.node_id, self.container_id, effects)

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


__all__ = ["IMAGE_KIND", "PROVIDER_ID", "SwarmMachine", "SwarmRuntime", "snapshot_of"]

"""The swarm controller as its helpers see it: what power, lifecycle, the runtime and its machines may ask of it.

``SwarmController`` satisfies it; the helpers name this instead of the controller, which imports
them.
"""

from __future__ import annotations

from typing import Any, Protocol

from providers.docker.client import DockerClient
from providers.docker.registry import RegistryClient
from providers.swarm.cluster import Cluster
from providers.swarm.config import SwarmConfig
from rigcli.provider_api import EffectJournal, ProviderSetup, RuntimeContext
from rigcli.provider_kit import MachineController


class SwarmParts(MachineController, Protocol):
    """The cluster's and the registry's clients, the config and the records, and what makes and finds machines."""

    @property
    def setup(self) -> ProviderSetup: ...
    @property
    def swarm_config(self) -> SwarmConfig: ...
    @property
    def cluster(self) -> Cluster: ...
    @property
    def registry(self) -> RegistryClient: ...
    @property
    def manager(self) -> DockerClient: ...

    def start_service(self, image: str, *, context: RuntimeContext, source_image: str | None) -> dict[str, Any]:
        """Run a service of one replica of ``image`` and wait for its task; its record."""
        ...

    def current(self, machine_id: str) -> dict[str, Any]:
        """The stored record, at the task that runs the service now."""
        ...

    def snapshot_task(self, machine_id: str, node_id: str, container_id: str, effects: EffectJournal) -> dict[str, Any]:
        """Commit the task's container on its node and push it; the snapshot's ref."""
        ...


__all__ = ["SwarmParts"]

"""What a swarm provider's handlers receive: machines started on the cluster, found again, listed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from providers.swarm.machine import SwarmMachine
from rigcli.errors import ProviderError
from rigcli.provider_kit import BaseRuntime

if TYPE_CHECKING:
    from providers.swarm.controller import SwarmController  # noqa: F401 - named in SwarmRuntime's base, a string

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


class SwarmRuntime(BaseRuntime["SwarmController"]):
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


__all__ = ["IMAGE_KIND", "PROVIDER_ID", "SwarmRuntime", "snapshot_of"]

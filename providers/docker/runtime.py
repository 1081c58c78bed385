"""What handlers receive from the docker provider: containers started (with their options), found again,
listed, and images inspected, pulled when absent or built (``runtime_images``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from providers.docker.images import image_id_of
from providers.docker.runtime_images import ImageMethods
from rigcli.errors import ProviderError
from rigcli.provider_kit import BaseRuntime

if TYPE_CHECKING:
    from providers.docker.client import DockerClient
    from providers.docker.controller import DockerController  # noqa: F401 - named as a string in the base below
    from providers.docker.machine import DockerMachine


class DockerRuntime(ImageMethods, BaseRuntime["DockerController"]):
    """What handlers receive: start containers, find them again, list what exists."""

    @property
    def client(self) -> DockerClient:
        """The controller's httpx client, made when a machine first needs it (an exec, a file, a
        commit): making a container speaks on the controller's raw connection and needs none."""
        return self.controller.client

    def create_machine(self, image: str | None = None, *, options: Mapping[str, Any] | None = None) -> DockerMachine:
        """A new container from ``image`` (or the provider's configured image), kept running idle;
        ``options``: more of the container (``container_options``: env, user, mounts, ...)."""
        chosen = image or self.config.get("image")
        if not isinstance(chosen, str) or not chosen:
            raise ProviderError("docker create_machine needs an image: pass image=... or configure image=")
        return self._start(chosen, source_image=None, options=options)

    def from_snapshot(self, ref: Any, *, options: Mapping[str, Any] | None = None) -> DockerMachine:
        """A new container from a committed snapshot image (``options`` as for ``create_machine``)."""
        image_id = image_id_of(ref)
        return self._start(image_id, source_image=image_id, options=options)

    def _start(self, image: str, *, source_image: str | None, options: Mapping[str, Any] | None) -> DockerMachine:
        record = self.controller.start_container(
            image, workspace=self.context.workspace, effects=self.context.effects, options=options
        )
        record["source_image"] = source_image
        self.controller.setup.storage.set(f"machine:{record['id']}", record)
        from providers.docker.machine import DockerMachine

        machine = DockerMachine(self, record)
        self.event(
            "machine.created", machine=machine.id, container_id=machine.container_id, image=image, effect_id=machine.id
        )
        return machine

    def from_id(self, machine_id: str) -> DockerMachine:
        """The machine recorded under ``machine_id`` (in this or any earlier rig process)."""
        stored = self.controller.setup.storage.get(f"machine:{machine_id}")
        if stored is None or not isinstance(stored["value"], dict):
            raise ProviderError(f"Unknown docker machine {machine_id!r}")
        from providers.docker.machine import DockerMachine

        return DockerMachine(self, stored["value"])


__all__ = ["DockerRuntime"]

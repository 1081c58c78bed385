"""``rig ls`` from the provider's config alone (``SupportsDirectStatus``): no controller, no storage, no httpx.

``rig ls`` and ``rig plan`` answered from the cache hand over a definition's resolved config and ask
what the controller would have answered in a plan and a probe: its checks' fingerprint inputs (the
resolved host: which daemon, not whether it answers now), whether an image ref is still on the
daemon, and the live state of containers. Each speaks as the controller does (``resolve_endpoint``,
one ``rawhttp`` connection, ``lifecycle.probe``); anything the controller would have turned into an
error is None here, and the ordinary way answers in its words."""

from __future__ import annotations

from collections.abc import Mapping

from providers.docker.endpoint import resolve_endpoint
from providers.docker.rawhttp import RawClient
from rigcli.errors import RigError

# Not typing.TYPE_CHECKING (commands answered from the cache import no typing); mypy reads any such name as True.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from providers.docker.endpoint import Endpoint
    from providers.docker.registry_name import Registry
    from rigcli.provider_api import EffectEntry


class DirectDocker:
    """One daemon, as a definition's config reaches it; a connection opened on the first request."""

    def __init__(self, endpoint: Endpoint, registry: Registry | None = None, image: str | None = None) -> None:
        self.endpoint = endpoint
        self.image = image  # the configured image: a remembered plan holds only while the daemon has it
        self.raw = RawClient(endpoint)
        self.registry = registry

    def checks(self) -> list[dict[str, object]]:
        """What ``DockerController.checks`` gives the provider fingerprint (the host, or the registry
        snapshots are shared through), and ``error`` when the configured image is not there now (or the
        daemon does not say): a plan made while it was holds no more."""
        identity = self.endpoint.host if self.registry is None else f"registry={self.registry.name}"
        status = "ok" if self.image is None or self._has_image(self.image) else "error"
        return [{"id": "docker.endpoint", "status": status, "fingerprint": identity}]

    def _has_image(self, image: str) -> bool:
        from rigcli.timeouts import check_bound

        try:
            return self.raw.request("GET", f"/images/{image}/json", bound=check_bound()).status == 200
        except Exception:  # uncertain: the ordinary way asks again and says why
            return False

    def validate_artifact(self, ref: Mapping[str, Any]) -> bool | None:
        """``DockerController.validate_artifact``; None where it would have raised."""
        from providers.docker.images import image_id_of
        from rigcli.errors import ProviderError
        from rigcli.timeouts import check_bound

        if self.registry is not None:
            from providers.docker.prebuilds import shared_image

            shared = shared_image(ref)
            if shared is not None:
                return self._in_registry(shared)
        try:
            image_id = image_id_of(ref)
        except ProviderError:
            return False
        try:
            response = self.raw.request("GET", f"/images/{image_id}/json", bound=check_bound())
        except Exception:  # uncertain (the controller's plan fails here): the ordinary way says why
            return None
        return None if response.status not in (200, 404) else response.status == 200

    def probe(self, project_dir: str, resources: Sequence[EffectEntry]) -> dict[str, tuple[str, str]]:
        """``DockerController.probe``, as ``(state, detail)`` pairs, on a connection of its own: rig ls
        probes while it validates artifacts on ``raw``."""
        from providers.docker.live import container_states

        raw = RawClient(self.endpoint)
        try:
            return container_states(raw, project_dir, resources)
        finally:
            raw.close()

    def _in_registry(self, shared: tuple[str, str, str]) -> bool | None:
        """As the controller asks the registry (``Prebuilds.validate``); None where it would warn instead."""
        from providers.docker.manifest_check import manifest_exists
        from rigcli.timeouts import check_bound

        assert self.registry is not None
        registry, repository, digest = shared
        if registry != self.registry.name:
            return False
        try:
            return manifest_exists(self.registry, repository, digest, bound=check_bound())
        except Exception:  # the registry does not answer: the ordinary way keeps the run and warns
            return None

    def close(self) -> None:
        self.raw.close()


def status_directly(config: Mapping[str, Any]) -> DirectDocker | None:
    """The daemon ``config`` reaches, or None where the controller could not be made."""
    configured = config.get("env") or {}
    if not isinstance(configured, Mapping):
        return None  # the controller refuses such a config: let it say so
    try:
        image = config.get("image")
        image = image if isinstance(image, str) and image else None
        registry = config.get("registry")
        if not registry:
            return DirectDocker(resolve_endpoint(config), image=image)
        from providers.docker.registry_name import parse_registry

        return DirectDocker(resolve_endpoint(config), parse_registry(registry, provider="docker"), image)
    except RigError:
        return None


__all__ = ["DirectDocker", "status_directly"]

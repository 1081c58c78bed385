"""The docker provider's plan check: one bounded request says whether the daemon answers and has the
configured image, and what to do when it has not."""

from __future__ import annotations

from providers.docker.rawhttp import RawClient
from rigcli.errors import ProviderError
from rigcli.timeouts import check_bound

MISSING_IMAGE = "Docker image"  # how a missing image's check message begins


def missing_image_hint(image: str) -> str:
    """How to get ``image`` onto the daemon: pull it, unless it is one of rig's own (``rig/...``)."""
    if image.startswith("rig/"):
        # No registry has rig/ images (the examples' rig/base:busybox is built, as CI does): a
        # `docker pull` would only fail again.
        return (
            f"{image} is built locally, not pulled: for example "
            f"`printf 'FROM busybox\\n' | docker build -t {image} -`, "
            "or set the provider's image (RIG_DOCKER_IMAGE in the examples) to one you have"
        )
    return f"Run: docker pull {image}"


def daemon_problem(raw: RawClient, host: str, image: str | None) -> str | None:
    """Why the daemon at ``host`` cannot serve a run as configured (unreachable, ``image`` missing), or None.

    One request, bounded by RIG_CHECK_TIMEOUT: the configured image's inspect (any answer means
    the daemon is there), or ``/_ping`` when no image is configured."""
    path = "/_ping" if image is None else f"/images/{image}/json"
    try:  # on the controller's own connection: a plan (and rig ls) imports no httpx for it
        response = raw.request("GET", path, bound=check_bound())
    except ProviderError as exc:
        return str(exc)
    if response.status not in (200, 404):
        return f"Docker check failed: {response.message()} (HTTP {response.status})"
    if response.status == 404 and image is not None:
        return (
            f'{MISSING_IMAGE} "{image}" is not available on the daemon at {host}; '
            f"rig never pulls images. {missing_image_hint(image)}"
        )
    return None


__all__ = ["MISSING_IMAGE", "daemon_problem", "missing_image_hint"]

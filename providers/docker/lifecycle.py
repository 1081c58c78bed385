"""A container's life after fork: its live state (``rig ls``), stop and start (``rig stop``/``rig start``).

The probe (``live.py``: one request for every container of the project) speaks on the
controller's own connection (``rawhttp``: no httpx to import, and ``rig exec`` sends its exec on
the connection its probe opened); here its answers become ``LiveStatus``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from providers.docker.endpoint import container_of
from providers.docker.live import PROBE_TIMEOUT, STATES, container_states
from providers.docker.rawhttp import RawClient
from rigcli.errors import ProviderError
from rigcli.provider_api import EffectEntry, LiveStatus
from rigcli.timeouts import read_bound

if TYPE_CHECKING:
    from providers.docker.client import DockerClient

STOP_SECONDS = 10  # what `docker stop` gives the container's processes before SIGKILL


def probe(raw: RawClient, project_dir: str, resources: Sequence[EffectEntry]) -> dict[str, LiveStatus]:
    """Each container among ``resources`` as the daemon sees it (images and other kinds are left out)."""
    states = container_states(raw, project_dir, resources)
    return {effect_id: LiveStatus(state, detail) for effect_id, (state, detail) in states.items()}  # type: ignore[arg-type]


def stop(client: DockerClient, resource: EffectEntry) -> None:
    """``docker stop``: SIGTERM, then SIGKILL after STOP_SECONDS; a stopped container is fine."""
    container = container_of(client.host, resource)
    response = client.request(
        "POST",
        f"/containers/{container}/stop",
        params={"t": str(STOP_SECONDS)},
        ok=(204, 304, 404),
        bound=read_bound().plus(STOP_SECONDS),  # the daemon answers once the container stopped
        what="container stop",
    )
    if response.status_code == 404:
        raise ProviderError(f"Docker container {container[:12]} is gone")


def start(client: DockerClient, resource: EffectEntry) -> None:
    """``docker start`` (or ``unpause``, for a paused one); a running container is fine."""
    container = container_of(client.host, resource)
    found = client.request("GET", f"/containers/{container}/json", ok=(200, 404), what="container inspect")
    if found.status_code == 404:
        raise ProviderError(f"Docker container {container[:12]} is gone")
    state = found.json().get("State") or {}
    if state.get("Paused"):
        client.request("POST", f"/containers/{container}/unpause", ok=(204,), what="container unpause")
        return
    client.request("POST", f"/containers/{container}/start", ok=(204, 304), what="container start")


__all__ = ["PROBE_TIMEOUT", "STATES", "container_of", "probe", "start", "stop"]

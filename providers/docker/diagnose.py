"""What ``rig doctor`` shows for a docker provider: endpoint, transport, server version or the one-line failure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from providers.docker.client import DockerClient
from providers.docker.endpoint import resolve_endpoint
from rigcli.errors import ProviderError

DOCTOR_TIMEOUT = 5.0


def diagnose(config: Mapping[str, Any]) -> dict[str, Any]:
    """Connect once (briefly) and report; never raises."""
    try:
        endpoint = resolve_endpoint(config)
    except ProviderError as exc:
        return {"host": config.get("host"), "mode": None, "reachable": False, "error": str(exc)}
    report: dict[str, Any] = {
        "host": endpoint.host,
        "mode": endpoint.mode,
        "transport": endpoint.mode_label,
        "description": endpoint.label,
    }
    client = DockerClient(endpoint, timeout=DOCTOR_TIMEOUT)
    try:
        server = client.server_info()
    except ProviderError as exc:
        return {**report, "reachable": False, "error": str(exc)}
    finally:
        client.close()
    return {
        **report,
        "reachable": True,
        "version": server.get("Version"),
        "api_version": server.get("ApiVersion"),
        "negotiated_api_version": client.api_version,
    }


__all__ = ["DOCTOR_TIMEOUT", "diagnose"]

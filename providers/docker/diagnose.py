"""What ``rig doctor`` shows for a docker provider: endpoint, transport, server version or the one-line failure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from providers.docker.client import DockerClient
from providers.docker.endpoint import resolve_endpoint
from rigcli.errors import ProviderError
from rigcli.jsonutil import JsonValue
from rigcli.provider_api import ProviderDiagnosis

DOCTOR_TIMEOUT = 5.0


def diagnose(config: Mapping[str, Any]) -> ProviderDiagnosis:
    """Connect once (briefly) and report; never raises."""
    try:
        details = _details(config)
    except Exception as exc:  # doctor reports problems, it does not have them
        details = {"host": config.get("host"), "reachable": False, "error": f"{type(exc).__name__}: {exc}"}
    return ProviderDiagnosis(summary=summary(details), ok=details.get("reachable") is True, details=details)


def _details(config: Mapping[str, Any]) -> dict[str, JsonValue]:
    try:
        endpoint = resolve_endpoint(config)
    except ProviderError as exc:
        return {"host": config.get("host"), "mode": None, "reachable": False, "error": str(exc)}
    report: dict[str, JsonValue] = {
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


def summary(details: Mapping[str, JsonValue]) -> str:
    """``tcp://build:2376 (TLS), Docker 24.0.7, API 1.43``, or ``not reachable: <why>``."""
    where = f"{details.get('host')} ({details['transport']})" if details.get("transport") else str(details.get("host"))
    if details.get("reachable"):
        return f"{where}, Docker {details.get('version')}, API {details.get('api_version')}"
    return f"not reachable: {details.get('error')}"


__all__ = ["DOCTOR_TIMEOUT", "diagnose", "summary"]

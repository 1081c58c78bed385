"""What ``rig doctor`` shows for a docker provider: endpoint, transport, engine and version, or the one-line failure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from providers.docker.client import DockerClient
from providers.docker.endpoint import resolve_endpoint
from providers.docker.registry import diagnose_registry
from providers.docker.registry_name import parse_registry
from rigcli.errors import ProviderError
from rigcli.jsonutil import JsonValue
from rigcli.provider_api import ProviderDiagnosis
from rigcli.timeouts import check_bound


def diagnose(config: Mapping[str, Any]) -> ProviderDiagnosis:
    """Connect once (within RIG_CHECK_TIMEOUT) and report, and ask the registry snapshots are shared
    through, if there is one; never raises."""
    try:
        details = _details(config)
        if config.get("registry"):
            details["registry"] = _registry(config["registry"])
    except Exception as exc:  # doctor reports problems, it does not have them
        details = {"host": config.get("host"), "reachable": False, "error": f"{type(exc).__name__}: {exc}"}
    registry = details.get("registry")
    registry_ok = not isinstance(registry, dict) or (registry.get("reachable") is True and not registry.get("error"))
    ok = details.get("reachable") is True and registry_ok
    return ProviderDiagnosis(summary=summary(details), ok=ok, details=details)


def _registry(value: object) -> dict[str, JsonValue]:
    try:
        registry = parse_registry(value, provider="docker")
    except ProviderError as exc:
        return {"name": None, "reachable": False, "error": str(exc)}
    return diagnose_registry(registry)


def engine_of(server: Mapping[str, Any]) -> tuple[str, str | None]:
    """Which engine serves the Docker API, from its /version answer: ("Podman", "4.3.1") or ("Docker Engine", "28.2.2").

    Podman lists a "Podman Engine" component; Docker's is "Engine" (and its Platform name varies by build).
    """
    for component in server.get("Components") or []:
        if isinstance(component, Mapping) and str(component.get("Name") or "").startswith("Podman"):
            version = component.get("Version") or server.get("Version")
            return "Podman", None if version is None else str(version)
    version = server.get("Version")
    return "Docker Engine", None if version is None else str(version)


def _details(config: Mapping[str, Any]) -> dict[str, JsonValue]:
    try:
        endpoint = resolve_endpoint(config)
    except ProviderError as exc:
        return {"host": config.get("host"), "mode": None, "reachable": False, "error": str(exc)}
    report: dict[str, JsonValue] = {
        "host": endpoint.host,
        "context": endpoint.context,  # the docker context it came from, or None
        "mode": endpoint.mode,
        "transport": endpoint.mode_label,
        "description": endpoint.label,
    }
    client = DockerClient(endpoint, bound=check_bound())
    try:
        server = client.server_info()
    except ProviderError as exc:
        return {**report, "reachable": False, "error": str(exc)}
    finally:
        client.close()
    engine, engine_version = engine_of(server)
    return {
        **report,
        "reachable": True,
        "engine": engine,
        "engine_version": engine_version,
        "version": server.get("Version"),
        "api_version": server.get("ApiVersion"),
        "negotiated_api_version": client.api_version,
    }


def summary(details: Mapping[str, JsonValue]) -> str:
    """``tcp://build:2376 (TLS), Docker Engine 24.0.7, API 1.43`` (or ``Podman 4.3.1``), or ``not reachable: <why>``;
    ``... from docker context build`` when a context chose the daemon."""
    where = f"{details.get('host')} ({details['transport']})" if details.get("transport") else str(details.get("host"))
    if details.get("context"):
        where += f" from docker context {details['context']}"
    if details.get("reachable"):
        engine = f"{details.get('engine') or 'Docker'} {details.get('engine_version') or details.get('version')}"
        text = f"{where}, {engine}, API {details.get('api_version')}"
    else:
        text = f"not reachable: {details.get('error')}"
    registry = details.get("registry")
    if isinstance(registry, dict):
        if registry.get("reachable") and not registry.get("error"):
            text += f"; snapshots shared through {registry.get('url')}, which answers"
        elif registry.get("url"):
            text += f"; snapshots shared through {registry['url']}: {registry.get('error')}"
        else:
            text += f"; {registry.get('error')}"
    return text


__all__ = ["diagnose", "engine_of", "summary"]

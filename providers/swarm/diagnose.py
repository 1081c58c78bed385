"""What ``rig doctor`` shows for a swarm provider: the manager, the nodes and how rig reaches each, the registry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from providers.docker.diagnose import engine_of
from providers.docker.endpoint import resolve_endpoint
from providers.docker.registry import diagnose_registry
from providers.swarm.cluster import Cluster, Node
from providers.swarm.config import node_endpoints, parse_registry
from rigcli.errors import ProviderError
from rigcli.jsonutil import JsonValue
from rigcli.provider_api import ProviderDiagnosis
from rigcli.timeouts import check_bound


def diagnose(config: Mapping[str, Any]) -> ProviderDiagnosis:
    """Ask the manager, each node's endpoint and the registry, each within RIG_CHECK_TIMEOUT; never raises."""
    try:
        details = _details(config)
    except Exception as exc:  # doctor reports problems, it does not have them
        details = {"host": config.get("host"), "reachable": False, "error": f"{type(exc).__name__}: {exc}"}
    ok = details.get("reachable") is True and not details.get("error")
    return ProviderDiagnosis(summary=summary(details), ok=ok, details=details)


def _details(config: Mapping[str, Any]) -> dict[str, JsonValue]:
    try:
        endpoint = resolve_endpoint(config)
        nodes = node_endpoints(config)
    except ProviderError as exc:
        return {"host": config.get("host"), "reachable": False, "error": str(exc)}
    report: dict[str, JsonValue] = {"host": endpoint.host, "transport": endpoint.mode_label}
    report["registry"] = _registry(config)
    cluster = Cluster(endpoint, nodes, bound=check_bound())
    try:
        engine, version = engine_of(cluster.manager.server_info())
        report.update(reachable=True, engine=engine, version=version)
        report["cluster_id"] = str(cluster.swarm().get("ID") or "")
        report["nodes"] = [_node(cluster, node) for node in cluster.nodes()]
    except ProviderError as exc:
        report.setdefault("reachable", False)
        report["error"] = str(exc)
    finally:
        cluster.close()
    registry = report["registry"]
    if isinstance(registry, dict) and registry.get("error"):
        report["error"] = "; ".join(str(e) for e in (report.get("error"), registry["error"]) if e)
    return report


def _node(cluster: Cluster, node: Node) -> dict[str, JsonValue]:
    shown: dict[str, JsonValue] = {
        "hostname": node.hostname,
        "address": node.address,
        "role": node.role,
        "state": node.state,
        "availability": node.availability,
    }
    endpoint = cluster.endpoint_of(node)
    if endpoint is None:
        return {**shown, "endpoint": None, "reachable": None}
    try:
        cluster.client(endpoint).request("GET", "/_ping", what="ping")
        reachable = True
    except ProviderError as exc:
        reachable = False
        shown["error"] = str(exc)
    return {**shown, "endpoint": endpoint.host, "reachable": reachable}


def _registry(config: Mapping[str, Any]) -> dict[str, JsonValue]:
    try:
        registry = parse_registry(config.get("registry"))
    except ProviderError as exc:
        return {"name": None, "reachable": False, "error": str(exc)}
    return diagnose_registry(registry)


def summary(details: Mapping[str, JsonValue]) -> str:
    """``unix:///… (unix socket), swarm h830…, nodes a (manager), b (worker); registry http://…`` or the failure."""
    where = f"{details.get('host')} ({details['transport']})" if details.get("transport") else str(details.get("host"))
    if not details.get("reachable"):
        return f"not reachable: {details.get('error')}"
    if not details.get("cluster_id"):
        return f"{where}: {details.get('error')}"
    parts = [where, f"swarm {str(details.get('cluster_id') or '?')[:12]}"]
    nodes = details.get("nodes")
    if isinstance(nodes, list):
        parts.append("nodes " + ", ".join(_node_text(node) for node in nodes if isinstance(node, dict)))
    registry = details.get("registry")
    if isinstance(registry, dict):
        answers = "answers" if registry.get("reachable") and not registry.get("error") else "does not answer"
        parts.append(f"registry {registry.get('url') or registry.get('name')} {answers}")
    text = ", ".join(parts[:-1]) + "; " + parts[-1]
    error = details.get("error")
    return f"{text} ({error})" if error else text


def _node_text(node: Mapping[str, JsonValue]) -> str:
    reachable = node.get("reachable")
    reach = "no endpoint" if reachable is None else "reached" if reachable else "unreachable"
    return f"{node.get('hostname')} ({node.get('role')}, {node.get('state')}, {reach})"


__all__ = ["diagnose", "summary"]

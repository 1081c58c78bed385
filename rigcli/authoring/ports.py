"""A workspace's declared ports (``workspace(..., ports=[3000, {"port": 8080, "label": "api"}])``): checked
once, kept as plain dicts (``port``, ``label``, ``protocol``) that ``rig ls --json`` shows as they are."""

from __future__ import annotations

from collections.abc import Mapping

from rigcli.errors import ConfigError

Port = Mapping[str, object]  # {"port": int, "label": str, "protocol": str}
_KEYS = frozenset({"port", "label", "protocol"})


def parse_ports(value: object) -> tuple[Port, ...]:
    """The declared ports, each as ``{"port", "label", "protocol"}`` (a bare number: label "", http)."""
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise ConfigError("workspace ports must be a list of port numbers or {'port', 'label', 'protocol'} dicts")
    ports: list[Port] = []
    for item in value:
        spec: Mapping[str, object] = {"port": item} if not isinstance(item, Mapping) else item
        unknown = set(spec) - _KEYS
        if unknown:
            raise ConfigError(f"workspace ports: unknown key {sorted(unknown)[0]!r} (use port, label, protocol)")
        number = spec.get("port")
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= 65535:
            raise ConfigError(f"workspace ports: {number!r} is not a port number (1-65535)")
        label, protocol = spec.get("label", ""), spec.get("protocol", "http")
        if not isinstance(label, str) or not isinstance(protocol, str) or not protocol:
            raise ConfigError(f"workspace ports: port {number}'s label and protocol must be strings")
        if any(existing["port"] == number for existing in ports):
            raise ConfigError(f"workspace ports: port {number} is declared twice")
        ports.append({"port": number, "label": label, "protocol": protocol})
    return tuple(ports)


__all__ = ["Port", "parse_ports"]

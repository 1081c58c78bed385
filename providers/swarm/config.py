"""The swarm provider's config, checked once: registry, nodes, constraints, resources, image, timeouts.

The manager's endpoint (``host``, ``tls_verify``, ``cert_path``) is read by the docker provider's
``resolve_endpoint``, defaults and all; a node's endpoint is a host string that shares the manager's
TLS settings, or a mapping with its own ``host``/``tls_verify``/``cert_path``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field
from typing import Any

from providers.docker.endpoint import Endpoint, resolve_endpoint
from providers.docker.registry_name import Registry
from providers.docker.registry_name import parse_registry as registry_named
from rigcli.errors import ProviderError
from rigcli.speed.records import lazy_dataclass

DEFAULT_WORKDIR = "/workspace"
START_TIMEOUT = 120.0  # from create to a running task: a node may have a large image to pull first
SCHEDULE_TIMEOUT = 10.0  # how long a task may wait for a node that fits before the create fails
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmgtp]?)(?:i?b)?$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
_RESOURCE_KEYS = {"reservations": ("cpus", "memory"), "limits": ("cpus", "memory", "pids")}


def _fail(message: str) -> ProviderError:
    return ProviderError(f"swarm provider config {message}")


def parse_registry(value: object) -> Registry:
    """``host[:port]`` (https, or plain http on a loopback address) or ``http(s)://host[:port]``; required."""
    if value is None or value == "":
        raise _fail("registry= is required: the registry (host:port) snapshots are pushed to and nodes pull from")
    return registry_named(value, provider="swarm", plain_http_anywhere=True)


def parse_memory(value: object, where: str) -> int:
    """Compose's memory sizes: ``512M``, ``1.5g``, ``100k``, ``2GiB`` or a number of bytes (binary units)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise _fail(f'{where} must be a size such as "512M", not {value!r}')
    found = _MEMORY.match(str(value).strip())
    if found is None:
        raise _fail(f'{where} must be a size such as "512M" or "2G", not {value!r}')
    return int(float(found[1]) * _UNITS[found[2].lower()])


def parse_cpus(value: object, where: str) -> int:
    """Compose's ``cpus: "0.5"`` as Swarm's NanoCPUs."""
    try:
        cpus = float(value) if not isinstance(value, bool) and isinstance(value, (int, float, str)) else -1.0
    except ValueError:
        cpus = -1.0
    if not cpus > 0:
        raise _fail(f'{where} must be a positive number of CPUs such as "0.5", not {value!r}')
    return int(cpus * 1e9)


def parse_resources(value: object) -> dict[str, dict[str, int]]:
    """``{"reservations": {"cpus", "memory"}, "limits": {"cpus", "memory", "pids"}}`` as the API's Resources."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _fail(f"resources= must be a mapping like compose's deploy.resources, not {value!r}")
    resources: dict[str, dict[str, int]] = {}
    for section, settings in value.items():
        if section not in _RESOURCE_KEYS:
            raise _fail(f"resources= has {section!r}; use reservations and limits")
        if not isinstance(settings, Mapping):
            raise _fail(f"resources.{section} must be a mapping, not {settings!r}")
        spec: dict[str, int] = {}
        for key, setting in settings.items():
            where = f"resources.{section}.{key}"
            if key not in _RESOURCE_KEYS[section]:
                raise _fail(f"{where} is not supported (use {', '.join(_RESOURCE_KEYS[section])})")
            if key == "cpus":
                spec["NanoCPUs"] = parse_cpus(setting, where)
            elif key == "memory":
                spec["MemoryBytes"] = parse_memory(setting, where)
            else:
                if isinstance(setting, bool) or not isinstance(setting, int) or setting <= 0:
                    raise _fail(f"{where} must be a positive whole number, not {setting!r}")
                spec["Pids"] = setting
        resources[section.capitalize()] = spec
    return resources


def _strings(value: object, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise _fail(f"{key}= must be a list of strings, not {value!r}")
    return tuple(value)


def _seconds(value: object, key: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise _fail(f"{key}= must be a positive number of seconds, not {value!r}")
    return float(value)


def node_endpoints(config: Mapping[str, Any]) -> dict[str, Endpoint]:
    """``nodes=``: node hostname, address or id -> that node's own Docker endpoint."""
    nodes = config.get("nodes") or {}
    if not isinstance(nodes, Mapping):
        raise _fail(f"nodes= must map node names or addresses to Docker endpoints, not {nodes!r}")
    shared = {key: config.get(key) for key in ("tls_verify", "cert_path")}
    endpoints: dict[str, Endpoint] = {}
    for name, target in nodes.items():
        if isinstance(target, str) and target:
            settings: Mapping[str, Any] = {**shared, "host": target}
        elif isinstance(target, Mapping) and isinstance(target.get("host"), str) and target["host"]:
            settings = {**shared, **target}
        else:
            raise _fail(f"nodes[{name!r}] must be a Docker host such as ssh://me@node-b or a mapping with host=")
        endpoints[str(name)] = resolve_endpoint(settings)
    return endpoints


@lazy_dataclass(frozen=True)
class SwarmConfig:
    """Everything the provider reads from its config, checked; the manager endpoint is resolved separately."""

    registry: Registry
    image: str | None
    nodes: dict[str, Endpoint] = field(default_factory=dict)
    constraints: tuple[str, ...] = ()
    resources: dict[str, dict[str, int]] = field(default_factory=dict)
    networks: tuple[str, ...] = ()
    workdir: str = DEFAULT_WORKDIR
    start_timeout: float = START_TIMEOUT
    schedule_timeout: float = SCHEDULE_TIMEOUT

    def check_image(self, image: str) -> str:
        """``image`` if it names the configured registry: nodes pull from it and from nothing else."""
        if not self.registry.names(image):
            there = f"{self.registry.name}/{_without_registry(image)}"
            raise ProviderError(
                f'swarm image "{image}" is not in the configured registry {self.registry.name}: nodes pull what '
                f"they run, and only from that registry. Push it there and use that name: "
                f"docker tag {image} {there} && docker push {there}"
            )
        return image


def _without_registry(image: str) -> str:
    """``docker.io/library/busybox:1`` -> ``library/busybox:1`` (the first part names a registry when it has . or :)."""
    first, slash, rest = image.partition("/")
    return rest if slash and ("." in first or ":" in first or first == "localhost") else image


def parse_config(config: Mapping[str, Any]) -> SwarmConfig:
    image = config.get("image")
    if image is not None and (not isinstance(image, str) or not image):
        raise _fail(f"image= must be an image reference in the registry, not {image!r}")
    workdir = config.get("workdir") or DEFAULT_WORKDIR
    if not isinstance(workdir, str) or not workdir.startswith("/"):
        raise _fail(f"workdir= must be an absolute path, not {workdir!r}")
    parsed = SwarmConfig(
        registry=parse_registry(config.get("registry")),
        image=image,
        nodes=node_endpoints(config),
        constraints=_strings(config.get("constraints"), "constraints"),
        resources=parse_resources(config.get("resources")),
        networks=_strings(config.get("networks"), "networks"),
        workdir=workdir,
        start_timeout=_seconds(config.get("start_timeout"), "start_timeout", START_TIMEOUT),
        schedule_timeout=_seconds(config.get("schedule_timeout"), "schedule_timeout", SCHEDULE_TIMEOUT),
    )
    if image is not None:
        parsed.check_image(image)
    return parsed


__all__ = [
    "Registry",
    "SwarmConfig",
    "node_endpoints",
    "parse_config",
    "parse_cpus",
    "parse_memory",
    "parse_registry",
    "parse_resources",
]

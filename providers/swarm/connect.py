"""A swarm machine's connect primitives (``rig ssh-proxy``, ``rig forward``, ``rig cp``): docker's own, spoken
to the daemon of the node its task runs on (the manager cannot reach a container on another node)."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from providers.docker import connect as docker_connect
from providers.docker.rawhttp import RawClient
from providers.swarm.lifecycle import machine_of
from providers.swarm.parts import SwarmParts
from rigcli.provider_api import EffectEntry

if TYPE_CHECKING:
    from rigcli.provider_kit.connect import ByteStream, ExecStream, PtyRequest


class NodeRaws:
    """One kept-alive raw client per node endpoint, made on first use."""

    def __init__(self) -> None:
        self._raws: dict[str, RawClient] = {}
        self._lock = threading.Lock()

    def task(self, controller: SwarmController, resource: EffectEntry) -> tuple[RawClient, str, str]:
        """The raw client of the node running the machine's task now, its container, and its workdir."""
        record = controller.current(machine_of(resource))
        _, client = controller.cluster.client_for(str(record["node_id"]))
        with self._lock:
            raw = self._raws.get(client.endpoint.host)
            if raw is None:
                raw = self._raws[client.endpoint.host] = RawClient(client.endpoint)
        return raw, str(record["container_id"]), str(record.get("workdir") or "") or "/"

    def close(self) -> None:
        with self._lock:
            raws, self._raws = list(self._raws.values()), {}
        for raw in raws:
            raw.close()


class SwarmController(SwarmParts, Protocol):
    """The controller as these primitives see it: its parts, and each node's raw client (``NodeRaws``)."""

    @property
    def node_raws(self) -> NodeRaws: ...


def open_exec(
    controller: SwarmController,
    resource: EffectEntry,
    argv: Sequence[str] | None,
    *,
    pty: PtyRequest | None,
    env: Mapping[str, str],
    cwd: str | None,
) -> ExecStream:
    raw, container, workdir = controller.node_raws.task(controller, resource)
    full = {**{str(key): str(value) for key, value in (controller.setup.config.get("env") or {}).items()}, **env}
    return docker_connect.DockerExec(raw, container, argv, pty=pty, env=full, cwd=cwd or workdir)


def read_archive(controller: SwarmController, resource: EffectEntry, path: str) -> ByteStream:
    raw, container, _ = controller.node_raws.task(controller, resource)
    return docker_connect.read_archive(raw, container, path)


def write_archive(controller: SwarmController, resource: EffectEntry, directory: str, source: ByteStream) -> None:
    raw, container, _ = controller.node_raws.task(controller, resource)
    docker_connect.write_archive(raw, container, directory, source)


def path_kind(controller: SwarmController, resource: EffectEntry, path: str) -> str | None:
    raw, container, _ = controller.node_raws.task(controller, resource)
    return docker_connect.path_kind(raw, container, path)


__all__ = ["NodeRaws", "open_exec", "path_kind", "read_archive", "write_archive"]

"""A daemon's containers as the connect primitives (``provider_kit/connect.py``): what the controller offers,
and what ``connect_directly`` hands rig's lean connect path from a definition's config alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from providers.docker.endpoint import container_of, resolve_endpoint
from providers.docker.rawhttp import RawClient
from rigcli.errors import RigError

if TYPE_CHECKING:
    from typing import Any

    from rigcli.provider_api import EffectEntry
    from rigcli.provider_kit.connect import ByteStream, ExecStream, MachineFacts, PtyRequest


class ContainerPrimitives:
    """Exec streams, ports (through a relay program inside) and file archives of the containers of one
    daemon; ``env`` (the definition's ``env=``) is every program's environment first."""

    def __init__(self, raw: RawClient, env: Mapping[str, str]) -> None:
        self.raw = raw
        self.env = dict(env)

    def container(self, resource: EffectEntry) -> str:
        return container_of(self.raw.endpoint.host, resource)

    def open_exec(
        self,
        resource: EffectEntry,
        argv: Sequence[str] | None,
        *,
        pty: PtyRequest | None,
        env: Mapping[str, str],
        cwd: str | None,
    ) -> ExecStream:
        from providers.docker.connect import DockerExec

        return DockerExec(self.raw, self.container(resource), argv, pty=pty, env={**self.env, **env}, cwd=cwd)

    def machine_facts(self, resource: EffectEntry) -> MachineFacts:
        from rigcli.provider_kit.connect_exec import facts_by_exec

        return facts_by_exec(self, resource)

    def open_port(self, resource: EffectEntry, host: str, port: int) -> ByteStream:
        from rigcli.provider_kit.connect_exec import exec_port

        return exec_port(self, resource, host, port)  # a container has no network of the host's: a relay inside

    def read_archive(self, resource: EffectEntry, path: str) -> ByteStream:
        from providers.docker.connect import read_archive

        return read_archive(self.raw, self.container(resource), path)

    def write_archive(self, resource: EffectEntry, directory: str, source: ByteStream) -> None:
        from providers.docker.connect import write_archive

        write_archive(self.raw, self.container(resource), directory, source)

    def path_kind(self, resource: EffectEntry, path: str) -> str | None:
        from providers.docker.connect import path_kind

        return path_kind(self.raw, self.container(resource), path)

    def close(self) -> None:
        self.raw.close()


def connect_directly(config: Mapping[str, Any], resource: EffectEntry) -> ContainerPrimitives | None:
    """The primitives of the workspace's container from a definition's resolved config alone, once the daemon
    says it runs; None (nothing started) for anything else: the ordinary way then answers in its words."""
    if resource["kind"] != "container" or not isinstance(resource["resource"], Mapping):
        return None
    configured = config.get("env") or {}
    if not isinstance(configured, Mapping):
        return None
    try:
        endpoint = resolve_endpoint(config)
        container = container_of(endpoint.host, resource)
        raw = RawClient(endpoint)
    except RigError:
        return None
    try:
        answer = raw.request("GET", f"/containers/{container}/json", timeout=5.0)
        running = answer.status == 200 and bool((answer.json().get("State") or {}).get("Running"))
    except (RigError, ValueError):
        running = False
    if not running:
        raw.close()
        return None
    return ContainerPrimitives(raw, {str(key): str(value) for key, value in configured.items()})


__all__ = ["ContainerPrimitives", "connect_directly"]

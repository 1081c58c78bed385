"""A daemon's containers as the connect primitives (``provider_kit/connect.py``): what the controller offers,
and what ``connect_directly`` hands a connect command from a definition's config alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from providers.docker.endpoint import container_of, resolve_endpoint
from providers.docker.rawhttp import RawClient
from rigcli.errors import RigError
from rigcli.speed.lazy_modules import lazy_module
from rigcli.timeouts import check_bound

if TYPE_CHECKING:
    from typing import Any

    from rigcli.provider_api import EffectEntry
    from rigcli.provider_kit.connect import ByteStream, ExecStream, MachineFacts, PtyRequest

if TYPE_CHECKING:
    import providers.docker.connect as docker_connect
    import rigcli.provider_kit.connect_exec as connect_exec
else:
    docker_connect = lazy_module("providers.docker.connect")
    connect_exec = lazy_module("rigcli.provider_kit.connect_exec")


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
        from providers.docker.attach import journaled_exec

        # as rig exec does: the user, environment and directory the container's create journaled (a dev container's)
        user, defaults, workdir = journaled_exec(resource["resource"])
        full = {**self.env, **defaults, **env}
        return docker_connect.DockerExec(
            self.raw, self.container(resource), argv, pty=pty, env=full, cwd=cwd or workdir, user=user
        )

    def machine_facts(self, resource: EffectEntry) -> MachineFacts:
        return connect_exec.facts_by_exec(self, resource)

    def open_port(self, resource: EffectEntry, host: str, port: int) -> ByteStream:
        # a container has no network of the host's: a relay program inside
        return connect_exec.exec_port(self, resource, host, port)

    def read_archive(self, resource: EffectEntry, path: str) -> ByteStream:
        return docker_connect.read_archive(self.raw, self.container(resource), path)

    def write_archive(self, resource: EffectEntry, directory: str, source: ByteStream) -> None:
        docker_connect.write_archive(self.raw, self.container(resource), directory, source)

    def path_kind(self, resource: EffectEntry, path: str) -> str | None:
        return docker_connect.path_kind(self.raw, self.container(resource), path)

    def close(self) -> None:
        self.raw.close()


class ConnectsContainers:
    """A controller's connect primitives (``rig ssh-proxy``, ``forward``, ``cp``) through ``ContainerPrimitives``,
    for a controller with a daemon's raw client and the definition's ``env``."""

    env: Mapping[str, object]

    @property
    def raw(self) -> RawClient:
        raise NotImplementedError  # the controller's

    @property
    def primitives(self) -> ContainerPrimitives:
        return ContainerPrimitives(self.raw, {str(key): str(value) for key, value in self.env.items()})

    def open_exec(
        self,
        resource: EffectEntry,
        argv: Sequence[str] | None,
        *,
        pty: PtyRequest | None,
        env: Mapping[str, str],
        cwd: str | None,
    ) -> ExecStream:
        return self.primitives.open_exec(resource, argv, pty=pty, env=env, cwd=cwd)

    def machine_facts(self, resource: EffectEntry) -> MachineFacts:
        return self.primitives.machine_facts(resource)

    def open_port(self, resource: EffectEntry, host: str, port: int) -> ByteStream:
        return self.primitives.open_port(resource, host, port)

    def read_archive(self, resource: EffectEntry, path: str) -> ByteStream:
        return self.primitives.read_archive(resource, path)

    def write_archive(self, resource: EffectEntry, directory: str, source: ByteStream) -> None:
        self.primitives.write_archive(resource, directory, source)

    def path_kind(self, resource: EffectEntry, path: str) -> str | None:
        return self.primitives.path_kind(resource, path)


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
        answer = raw.request("GET", f"/containers/{container}/json", bound=check_bound())
        running = answer.status == 200 and bool((answer.json().get("State") or {}).get("Running"))
    except (RigError, ValueError):
        running = False
    if not running:
        raw.close()
        return None
    return ContainerPrimitives(raw, {str(key): str(value) for key, value in configured.items()})


__all__ = ["ConnectsContainers", "ContainerPrimitives", "connect_directly"]

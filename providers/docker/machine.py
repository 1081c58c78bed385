"""What the docker provider's handlers receive: a runtime that makes containers, and containers as machines.

``ContainerMachine`` does the container's side over whichever client reaches it: commands via
exec, files via the archive API. ``DockerMachine`` is the docker provider's (the container on the
provider's daemon, committed as its snapshot), made by ``DockerRuntime``; both ask their
controller only what ``ContainerHost`` says. The swarm provider builds its machines on the same
base, over the client of the task's own node.
"""

from __future__ import annotations

import copy
import io
import os
import posixpath
import shlex
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from providers.docker.images import image_id_of
from providers.docker.runtime_images import ImageMethods
from rigcli.errors import ProviderError
from rigcli.provider_api import Cancellation, EffectJournal, ProviderSetup, RuntimeContext
from rigcli.provider_kit import (
    AttachSpec,
    BaseMachine,
    BaseRuntime,
    CommandRecorder,
    CommandResult,
    MachineController,
    MachineFileNotFoundError,
)
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    from typing_extensions import Self

    from providers.docker.client import DockerClient
    from providers.docker.endpoint import Endpoint

if TYPE_CHECKING:
    import tarfile

    from providers.docker import execution
else:
    tarfile = lazy_module("tarfile")
    # an exec needs the httpx client (a fork, which makes and starts a container on rig's own
    # connection, does not)
    execution = lazy_module("providers.docker.execution")


RuntimeT = TypeVar("RuntimeT", bound=BaseRuntime[MachineController])


class ContainerMachine(BaseMachine[RuntimeT]):
    """Handle on one container reached through ``_client``; relative paths are relative to ``workdir``."""

    def __init__(self, runtime: RuntimeT, record: Mapping[str, Any]) -> None:
        super().__init__(runtime, record["id"])
        self.container_id: str = record["container_id"]
        self.image: str = record.get("image") or ""
        self.workdir: str = record.get("workdir") or "/"
        self.created_at: str = record.get("created_at") or ""
        # What every command gets unless it says otherwise (container_options: exec_user, exec_env).
        self.user: str | None = record.get("exec_user") or None
        self.exec_env: dict[str, str] = dict(record.get("exec_env") or {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, container={self.container_id[:12]!r})"

    @property
    def path(self) -> str:
        return self.workdir

    def resolve(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(self.workdir, str(path)))

    @property
    def _client(self) -> DockerClient:
        """The daemon the container runs on."""
        raise NotImplementedError(f"{type(self).__name__} must say which daemon its container is on")

    def _cwd(self, cwd: str | os.PathLike[str] | None) -> str:
        return self.resolve(str(cwd)) if cwd is not None else self.workdir

    def _run(
        self,
        command: str,
        *,
        env: dict[str, str],
        cwd: str,
        timeout: float | None,
        recorder: CommandRecorder,
        cancellation: Cancellation,
    ) -> CommandResult:
        # Here, not at the top: a fork makes its machine without running a command in it, and the
        # exec machinery (the httpx client's module, queue, subprocess) is not its to load.

        return execution.run_exec(
            self._client,
            self.container_id,
            command,
            env={**self.exec_env, **env},
            user=self.user,
            cwd=cwd,
            timeout=timeout,
            recorder=recorder,
            cancellation=cancellation,
            effects=self._runtime.context.effects,
        )

    def with_user(self, user: str | None) -> Self:
        """The same machine, its commands run as ``user`` (None: the container's own user)."""
        other = copy.copy(self)
        other.user = user or None
        return other

    def put_archive(self, folder: str, archive: bytes) -> None:
        """Unpack a tar archive into ``folder`` (made first when missing), as ``docker cp`` does."""
        target = self.resolve(folder)
        self.exec(f"mkdir -p {shlex.quote(target)}", name=f"mkdir {target}")
        self._client.request(
            "PUT",
            f"/containers/{self.container_id}/archive",
            params={"path": target},
            content=archive,
            headers={"Content-Type": "application/x-tar"},
            ok=(200,),
            what=f"copy into {target}",
        )

    def exists(self, path: str) -> bool:
        response = self._client.request(
            "HEAD",
            f"/containers/{self.container_id}/archive",
            params={"path": self.resolve(path)},
            ok=(200, 404),
            what="file lookup",
        )
        return bool(response.status_code == 200)

    def read_text(self, path: str) -> str:
        target = self.resolve(path)
        response = self._client.request(
            "GET",
            f"/containers/{self.container_id}/archive",
            params={"path": target},
            ok=(200, 404),
            what=f"read of {target}",
        )
        if response.status_code == 404:
            raise MachineFileNotFoundError(f"No file {path} in {self.provider_id} machine {self.id}")

        with tarfile.open(fileobj=io.BytesIO(response.content)) as archive:
            member = archive.next()
            if member is None or not member.isfile():
                raise ProviderError(f"{path} is not a regular file in {self.provider_id} machine {self.id}")
            handle = archive.extractfile(member)
            assert handle is not None
            return handle.read().decode("utf-8")

    def write_text(self, path: str, text: str) -> None:
        target = self.resolve(path)
        folder, filename = posixpath.split(target)
        data = text.encode("utf-8")
        buffer = io.BytesIO()

        with tarfile.open(fileobj=buffer, mode="w") as archive:
            info = tarfile.TarInfo(filename)
            info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
            archive.addfile(info, io.BytesIO(data))
        for attempt in (1, 2):
            response = self._client.request(
                "PUT",
                f"/containers/{self.container_id}/archive",
                params={"path": folder or "/"},
                content=buffer.getvalue(),
                headers={"Content-Type": "application/x-tar"},
                ok=(200, 404),
                what=f"write of {target}",
            )
            if response.status_code == 200:
                return
            if attempt == 1:  # the folder does not exist yet
                self.exec(f"mkdir -p {shlex.quote(folder)}", name=f"mkdir {folder}")
        raise ProviderError(f"Could not write {target} in {self.provider_id} machine {self.id}")

    def attach(self, command: str) -> AttachSpec:
        """``docker exec -it`` from the user's terminal (needs the docker CLI on PATH), on the same endpoint."""
        argv = ("docker", "exec", "-it", "-w", self.workdir, self.container_id, "sh", "-lc", command)
        endpoint = self._client.endpoint
        env = {"DOCKER_HOST": endpoint.host, "DOCKER_TLS_VERIFY": "1" if endpoint.mode == "tls" else ""}
        if endpoint.cert_path:
            env["DOCKER_CERT_PATH"] = endpoint.cert_path
        return AttachSpec(argv, cwd=None, env=env)


class ContainerHost(MachineController, Protocol):
    """What a docker runtime and its machines ask of their controller (``DockerController``)."""

    @property
    def setup(self) -> ProviderSetup: ...
    @property
    def client(self) -> DockerClient: ...
    @property
    def endpoint(self) -> Endpoint: ...
    def start_container(
        self,
        image: str,
        *,
        workspace: str | None,
        effects: EffectJournal,
        options: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]: ...
    def commit(self, machine: DockerMachine, task: RuntimeContext) -> dict[str, Any]: ...
    def commit_container(
        self,
        container_id: str,
        machine_id: str,
        effects: EffectJournal,
        *,
        made_from: str | None,
        changes: Sequence[str] = (),
        task: RuntimeContext | None = None,
    ) -> dict[str, Any]: ...
    def snapshot_image(self, ref: Mapping[str, Any]) -> str: ...
    def remove_container(self, container_id: str, machine_id: str | None) -> None: ...


class DockerRuntime(ImageMethods, BaseRuntime[ContainerHost]):
    """What handlers receive: start containers (with their options), find them again, list what exists,
    and images inspected, pulled when absent or built (``runtime_images``)."""

    @property
    def client(self) -> DockerClient:
        """The controller's httpx client, made when a machine first needs it (an exec, a file, a
        commit): making a container speaks on the controller's raw connection and needs none."""
        return self.controller.client

    def create_machine(self, image: str | None = None, *, options: Mapping[str, Any] | None = None) -> DockerMachine:
        """A new container from ``image`` (or the provider's configured image), kept running idle;
        ``options``: more of the container (``container_options``: env, user, mounts, ...)."""
        chosen = image or self.config.get("image")
        if not isinstance(chosen, str) or not chosen:
            raise ProviderError("docker create_machine needs an image: pass image=... or configure image=")
        return self._start(chosen, source_image=None, options=options)

    def from_snapshot(self, ref: Any, *, options: Mapping[str, Any] | None = None) -> DockerMachine:
        """A new container from a committed snapshot image (``options`` as for ``create_machine``); one
        pushed to the provider's registry is pulled first where the daemon lacks it."""
        image_id = image_id_of(ref)
        return self._start(self.controller.snapshot_image(ref), source_image=image_id, options=options)

    def _start(self, image: str, *, source_image: str | None, options: Mapping[str, Any] | None) -> DockerMachine:
        record = self.controller.start_container(
            image, workspace=self.context.workspace, effects=self.context.effects, options=options
        )
        record["source_image"] = source_image
        self.controller.setup.storage.set(f"machine:{record['id']}", record)
        machine = DockerMachine(self, record)
        self.event(
            "machine.created", machine=machine.id, container_id=machine.container_id, image=image, effect_id=machine.id
        )
        return machine

    def from_id(self, machine_id: str) -> DockerMachine:
        """The machine recorded under ``machine_id`` (in this or any earlier rig process)."""
        stored = self.controller.setup.storage.get(f"machine:{machine_id}")
        if stored is None or not isinstance(stored["value"], dict):
            raise ProviderError(f"Unknown docker machine {machine_id!r}")
        return DockerMachine(self, stored["value"])


class DockerMachine(ContainerMachine[DockerRuntime]):
    """The docker provider's machine: a container on the provider's daemon."""

    provider_id = "docker"

    def __init__(self, runtime: DockerRuntime, record: Mapping[str, Any]) -> None:
        super().__init__(runtime, record)
        self.source_image: str | None = record.get("source_image")

    @property
    def _client(self) -> DockerClient:
        return self._runtime.client

    def _snapshot(self) -> dict[str, Any]:
        """Commit the container to an image (pushed to the registry when the provider has one)."""
        return self._runtime.controller.commit(self, self._runtime.context)

    def snapshot_with(self, changes: list[str]) -> dict[str, Any]:
        """``snapshot_ref`` with Dockerfile ``changes`` made in the commit (``ENV K=V``, ``USER u``)."""
        context = self._runtime.context
        ref = self._runtime.controller.commit_container(
            self.container_id, self.id, context.effects, made_from=self.image, changes=changes, task=context
        )
        self._runtime.event("snapshot.created", machine=self.id, artifact=ref)
        return ref

    def _remove(self) -> None:
        """Remove the container (forced) and its record."""
        self._runtime.controller.remove_container(self.container_id, self.id)

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": "docker",
            "id": self.id,
            "container_id": self.container_id,
            "image": self.image,
            "workdir": self.workdir,
            "created_at": self.created_at,
            "source_image": self.source_image,
            "exec_user": self.user,
        }


__all__ = ["ContainerHost", "ContainerMachine", "DockerMachine", "DockerRuntime"]

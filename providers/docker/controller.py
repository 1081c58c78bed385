"""The docker provider's controller: containers as machines, committed images as snapshots (see the package)."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from providers.docker import PROVIDER_ID, lifecycle
from providers.docker.endpoint import resolve_endpoint
from providers.docker.images import IMAGE_KIND, full_image_id, image_id_of
from providers.docker.rawhttp import RawClient, Response
from rigcli.errors import ProviderError
from rigcli.jsonutil import JsonObject
from rigcli.provider_api import (
    EffectEntry,
    EffectJournal,
    LiveStatus,
    LocalHost,
    ProviderCheck,
    ProviderSetup,
    RuntimeContext,
    SupportsEffects,
    SupportsInteractive,
    SupportsLastUse,
    SupportsLiveSnapshot,
    SupportsPower,
    SupportsStatus,
)
from rigcli.provider_kit import BaseController, BaseRuntime, config_env, now_iso, stored_records

if TYPE_CHECKING:  # what only making and removing need is imported where it is used (see DockerController.client)
    from providers.docker.client import DockerClient
    from providers.docker.machine import DockerMachine
    from providers.docker.primitives import ContainerPrimitives
    from rigcli.provider_kit.connect import ByteStream, ExecStream, MachineFacts, PtyRequest

KEEPALIVE = ["sleep", "2147483647"]  # busybox sleep has no "infinity"
CHECK_TIMEOUT = 5.0  # plan asks the daemon once; one that does not answer in time is reported, not waited for
REQUEST_SECONDS = 600.0  # what the httpx client allows a request (client.py): a create or start of a busy daemon


def raw_error(response: Response, what: str) -> ProviderError:
    """``DockerClient.error``'s wording for an answer on the raw connection."""
    return ProviderError(f"Docker {what} failed: {response.message()} (HTTP {response.status})")


def missing_image_hint(image: str) -> str:
    """How to get ``image`` onto the daemon: pull it, unless it is one of rig's own (``rig/...``)."""
    if image.startswith("rig/"):
        # No registry has rig/ images (the examples' rig/base:busybox is built, as CI does): a
        # `docker pull` would only fail again.
        return (
            f"{image} is built locally, not pulled: for example "
            f"`printf 'FROM busybox\\n' | docker build -t {image} -`, "
            "or set the provider's image (RIG_DOCKER_IMAGE in the examples) to one you have"
        )
    return f"Run: docker pull {image}"


class DockerRuntime(BaseRuntime["DockerController"]):
    """What handlers receive: start containers, find them again, list what exists."""

    @property
    def client(self) -> DockerClient:
        """The controller's httpx client, made when a machine first needs it (an exec, a file, a
        commit): making a container speaks on the controller's raw connection and needs none."""
        return self.controller.client

    def create_machine(self, image: str | None = None) -> DockerMachine:
        """A new container from ``image`` (or the provider's configured image), kept running idle."""
        chosen = image or self.config.get("image")
        if not isinstance(chosen, str) or not chosen:
            raise ProviderError("docker create_machine needs an image: pass image=... or configure image=")
        return self._start(chosen, source_image=None)

    def from_snapshot(self, ref: Any) -> DockerMachine:
        """A new container from a committed snapshot image."""
        image_id = image_id_of(ref)
        return self._start(image_id, source_image=image_id)

    def _start(self, image: str, *, source_image: str | None) -> DockerMachine:
        record = self.controller.start_container(image, workspace=self.context.workspace, effects=self.context.effects)
        record["source_image"] = source_image
        self.controller.setup.storage.set(f"machine:{record['id']}", record)
        from providers.docker.machine import DockerMachine

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
        from providers.docker.machine import DockerMachine

        return DockerMachine(self, stored["value"])


class DockerController(BaseController):
    """One per run: owns the daemon connection and the records in provider storage."""

    provider_id = PROVIDER_ID

    def __init__(self, setup: ProviderSetup) -> None:
        super().__init__(setup)
        self.endpoint = resolve_endpoint(self.config)
        self._client: DockerClient | None = None
        self._raw: RawClient | None = None
        self._lock = threading.Lock()
        self.env = config_env(PROVIDER_ID, self.config)
        self._warned = False

    @property
    def client(self) -> DockerClient:
        """The httpx client, made on first use: a plan's check, a probe and an exec speak on ``raw``
        and need neither it nor its imports (subprocess; httpx on its first request)."""
        with self._lock:
            if self._client is None:
                from providers.docker.client import DockerClient

                self._client = DockerClient(self.endpoint)
                # Running commands get SIGTERM at once; the connections (ssh processes) close when they
                # have ended. One made after the run was interrupted is cancelled at once.
                self.setup.cancellation.add_callback(self._client.cancel)
            return self._client

    @property
    def raw(self) -> RawClient:
        """Requests on a connection of rig's own, kept alive (``rawhttp``): what needs no httpx uses it."""
        with self._lock:  # probes run on threads of their own
            if self._raw is None:
                self._raw = RawClient(self.endpoint)
                # As the httpx client's: a cancelled run closes its connections (ssh processes);
                # one in use closes when its request ends, and the next request connects again.
                self.setup.cancellation.add_callback(self._raw.close)
            return self._raw

    def runtime(self, context: RuntimeContext) -> DockerRuntime:
        runtime = DockerRuntime(self, context)
        warning = self.endpoint.warning
        if warning and not self._warned:
            self._warned = True
            runtime.event("docker.unauthenticated", host=self.endpoint.host, message=warning)
        return runtime

    def checks(self, mode: str, *, workflow: str, local: LocalHost) -> list[ProviderCheck]:
        """The daemon, asked once (briefly): does it answer, and has it the configured image? Its host
        joins the fingerprint of every task in scope; whether it answers now does not (see ``error``)."""
        endpoint = self.endpoint
        check: ProviderCheck = {
            "id": "docker.endpoint",
            "label": "docker daemon",
            "status": "ok",
            "value": f"{endpoint.host} ({endpoint.mode_label})",
            "message": endpoint.warning or f"{endpoint.host} over {endpoint.label}",
            # Another daemon has other images: runs made there are not valid here. Only the address
            # counts; certificates and keys are credentials, not identity.
            "fingerprint": endpoint.host,
        }
        problem = self._daemon_problem()
        if problem is not None:
            warning = f" ({endpoint.warning})" if endpoint.warning else ""
            check["status"], check["message"] = "error", problem + warning
        return [check]

    def _daemon_problem(self) -> str | None:
        """Why this daemon cannot serve a run as configured (unreachable, the image missing), or None.

        One request, bounded by CHECK_TIMEOUT: the configured image's inspect (any answer means the
        daemon is there), or ``/_ping`` when no image is configured."""
        image = self.config.get("image")
        path = f"/images/{image}/json" if isinstance(image, str) and image else "/_ping"
        try:  # on the controller's own connection: a plan (and rig ls) imports no httpx for it
            response = self.raw.request("GET", path, timeout=CHECK_TIMEOUT)
        except ProviderError as exc:
            return str(exc)
        if response.status not in (200, 404):
            return f"Docker check failed: {response.message()} (HTTP {response.status})"
        if response.status == 404 and path != "/_ping":
            return (
                f'Docker image "{image}" is not available on the daemon at {self.endpoint.host}; '
                f"rig never pulls images. {missing_image_hint(str(image))}"
            )
        return None

    def start_container(self, image: str, *, workspace: str | None, effects: EffectJournal) -> dict[str, Any]:
        from providers.docker.labels import EFFECT_LABEL, KIND_LABEL

        # os.urandom(6).hex() is secrets.token_hex(6), without secrets' import of random and its hashes.
        machine_id = f"rig-{os.urandom(6).hex()}"
        workdir = str(self.config.get("workdir") or "/workspace")
        host = self.endpoint.host
        # The container's name and rig.effect label are its effect id, journaled before the create
        # call: if the reply is lost or rig is killed, rm and gc still find it.
        effects.requested("container", {"machine_id": machine_id, "host": host}, effect_id=machine_id)
        labels = {
            "rig.project": self.setup.project_dir,
            "rig.machine": machine_id,
            EFFECT_LABEL: machine_id,
            KIND_LABEL: "machine",  # overrides what a snapshot image's labels would pass on
        }
        if workspace:
            labels["rig.workspace"] = workspace
        body = {
            "Image": image,
            "Entrypoint": KEEPALIVE[:1],
            "Cmd": KEEPALIVE[1:],
            "WorkingDir": workdir,
            "Labels": labels,
            "AttachStdout": False,
            "AttachStderr": False,
            "Tty": False,
            "HostConfig": {"NetworkMode": str(self.config.get("network") or "none"), "Init": True},
        }
        # Create and start go over the controller's own connection (rawhttp), as the docker CLI's
        # two requests do: a fork imports no httpx (~40% of its instructions) for them.
        response = self.raw.request(
            "POST", "/containers/create", params={"name": machine_id}, body=body, timeout=REQUEST_SECONDS
        )
        if response.status == 404:
            effects.deleted(machine_id)  # nothing was made
            short = image[7:19] if image.startswith("sha256:") else image
            msg = (
                f'Docker image "{short}" is not available on the daemon at {host}; '
                f"rig never pulls images. {missing_image_hint(image)}"
            )
            if image.startswith("sha256:"):
                msg = (
                    f'Docker snapshot image "{short}" no longer exists on the daemon at {host}; '
                    "run `rig apply` to rebuild it"
                )
            raise ProviderError(msg)
        if response.status != 201:
            raise raw_error(response, "container create")
        container_id = response.json()["Id"]
        effects.confirmed(machine_id, {"container_id": container_id})
        try:
            started = self.raw.request("POST", f"/containers/{container_id}/start", timeout=REQUEST_SECONDS)
            if started.status not in (204, 304):
                raise raw_error(started, "container start")
        except BaseException:
            self.remove_container(container_id, machine_id)
            raise
        return {
            "id": machine_id,
            "container_id": container_id,
            "image": image,
            "workdir": workdir,
            "created_at": now_iso(),
        }

    def remove_container(self, container_id: str, machine_id: str | None) -> None:
        from providers.docker import effects as effects_on_daemon

        effects_on_daemon.remove_container(self.client, container_id)
        if machine_id:
            self.setup.storage.delete(f"machine:{machine_id}")
            self.setup.effects.deleted(machine_id)

    def delete_machine(self, machine_id: str) -> bool:
        from providers.docker import effects as effects_on_daemon

        stored = self.setup.storage.get(f"machine:{machine_id}")
        value = stored["value"] if stored is not None else None
        # Without a record, the container name (which is the machine id) still finds it.
        container = value.get("container_id") if isinstance(value, dict) else machine_id
        removed = effects_on_daemon.remove_container(self.client, str(container))
        self.setup.storage.delete(f"machine:{machine_id}")
        self.setup.effects.deleted(machine_id)
        return stored is not None or removed

    def commit(self, machine: DockerMachine, effects: EffectJournal) -> dict[str, Any]:
        return self.commit_container(machine.container_id, machine.id, effects, made_from=machine.image)

    def commit_container(
        self, container_id: str, machine_id: str, effects: EffectJournal, *, made_from: str | None
    ) -> dict[str, Any]:
        """Commit the container (paused meanwhile, so the image is one instant of it) to a snapshot image."""
        import secrets

        from providers.docker.effects import SNAPSHOT_REPO, snapshot_changes

        tag = f"{machine_id}-{secrets.token_hex(4)}"  # the image's effect id: its tag finds it before its id is known
        effects.requested("image", {"tag": f"{SNAPSHOT_REPO}:{tag}", "host": self.client.host}, effect_id=tag)
        created = self.client.json(
            "POST",
            "/commit",
            params={
                "container": container_id,
                "repo": SNAPSHOT_REPO,
                "tag": tag,
                "changes": snapshot_changes(tag),
                "pause": "true",
            },
            json={},
            what="commit",
        )
        image_id = full_image_id(created["Id"])
        self.setup.storage.set(
            f"snapshot:{image_id}",
            {
                "image_id": image_id,
                "tag": f"{SNAPSHOT_REPO}:{tag}",
                "created_at": now_iso(),
                "source_machine": machine_id,
                "effect_id": tag,
            },
        )
        # What it was made from: gc removes a snapshot of a snapshot before the snapshot under it.
        parent = {"parent": made_from} if made_from and made_from.startswith("sha256:") else {}
        effects.confirmed(tag, {"image_id": image_id, **parent})
        return {"provider": PROVIDER_ID, "kind": IMAGE_KIND, "image_id": image_id}

    # -- rig fork --from: a container committed as it is, replacing the image it was started from ------
    machine_kinds = ("container",)

    def machine_source(self, machine_id: str) -> dict[str, Any] | None:
        stored = self.setup.storage.get(f"machine:{machine_id}")
        value = stored["value"] if stored is not None else None
        source = value.get("source_image") if isinstance(value, dict) else None
        return {"provider": PROVIDER_ID, "kind": IMAGE_KIND, "image_id": source} if isinstance(source, str) else None

    def snapshot_machine(self, machine_id: str, effects: EffectJournal) -> dict[str, Any]:
        stored = self.setup.storage.get(f"machine:{machine_id}")
        value = stored["value"] if stored is not None else None
        container = value.get("container_id") if isinstance(value, dict) else None
        image = value.get("image") if isinstance(value, dict) else None
        return self.commit_container(
            str(container or machine_id), machine_id, effects, made_from=image if isinstance(image, str) else None
        )

    # -- workspace(idle_stop=...): when a container was last used (providers/docker/idle.py) -------------
    def last_used(self, effect: EffectEntry) -> str | None:
        """The container's last sign of use; None for an image, or a container not running."""
        if effect["kind"] != "container":
            return None
        from providers.docker import idle

        return idle.last_used(self.client, effect["id"])  # its name is its effect id

    def validate_artifact(self, ref: Mapping[str, Any]) -> bool:
        """An image ref is valid while the daemon still has that image."""
        try:
            image_id = image_id_of(ref)
        except ProviderError:
            return False
        response = self.raw.request("GET", f"/images/{image_id}/json")  # no httpx for a plan
        if response.status not in (200, 404):
            raise ProviderError(f"Docker image inspect failed: {response.message()} (HTTP {response.status})")
        return response.status == 200

    def delete_snapshot(self, ref: Any) -> bool:
        image_id = image_id_of(ref)
        response = self.client.request(
            "DELETE", f"/images/{image_id}", params={"force": "true"}, ok=(200, 404), what="image removal"
        )
        stored = self.setup.storage.get(f"snapshot:{image_id}")
        effect_id = stored["value"].get("effect_id") if stored and isinstance(stored["value"], dict) else None
        if isinstance(effect_id, str):
            self.setup.effects.deleted(effect_id)
        return self.setup.storage.delete(f"snapshot:{image_id}") or response.status_code == 200

    def remove_effect(self, effect: EffectEntry) -> bool:
        """Remove a journaled (or found) container or snapshot image; False when it was already gone."""
        from providers.docker import effects as effects_on_daemon

        removed = effects_on_daemon.remove(self.client, self.setup.storage, effect)
        self.setup.effects.deleted(effect["id"])
        return removed

    def find_effects(self) -> list[EffectEntry]:
        """Containers and snapshot images on this daemon that rig made for this project (by their labels)."""
        from providers.docker import effects as effects_on_daemon

        return effects_on_daemon.find(self.client, self.setup.project_dir)

    # -- after fork: live status, stop and start, a program attached to rig's stdio ----------------------
    def probe(self, resources: Sequence[EffectEntry]) -> dict[str, LiveStatus]:
        """Each container among ``resources`` as this daemon sees it (one request for all of them)."""
        return lifecycle.probe(self.raw, self.setup.project_dir, resources)

    def stop(self, resource: EffectEntry) -> None:
        lifecycle.stop(self.client, resource)

    def start(self, resource: EffectEntry) -> None:
        lifecycle.start(self.client, resource)

    def attach(
        self,
        resource: EffectEntry,
        argv: Sequence[str] | None,
        *,
        tty: bool,
        env: Mapping[str, str],
        cwd: str | None,
    ) -> int:
        """Run ``argv`` (or a login shell) in the container on rig's stdio, like ``docker exec -i[t]``."""
        from providers.docker.attach import attach_exec

        container = lifecycle.container_of(self.endpoint.host, resource)
        full = {**{str(key): str(value) for key, value in self.env.items()}, **env}
        return attach_exec(self.raw, container, argv, tty=tty, env=full, cwd=cwd)

    # -- connect: ssh-proxy, forward, cp (providers/docker/primitives.py) --------------------------------
    @property
    def primitives(self) -> ContainerPrimitives:
        from providers.docker.primitives import ContainerPrimitives

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

    def list_machines(self) -> list[JsonObject]:
        return stored_records(self.setup.storage, "machine:", provider=PROVIDER_ID)

    def list_snapshots(self) -> list[JsonObject]:
        return stored_records(self.setup.storage, "snapshot:", provider=PROVIDER_ID, kind=IMAGE_KIND)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        if self._raw is not None:
            self._raw.close()


if TYPE_CHECKING:  # mypy checks the optional hooks against the contract
    _effects: type[SupportsEffects] = DockerController
    _status: type[SupportsStatus] = DockerController
    _power: type[SupportsPower] = DockerController
    _interactive: type[SupportsInteractive] = DockerController
    from rigcli.provider_kit.connect import SupportsExecStreams, SupportsFileArchives, SupportsPortStreams

    _live: type[SupportsLiveSnapshot] = DockerController
    _last_use: type[SupportsLastUse] = DockerController
    _exec: type[SupportsExecStreams] = DockerController
    _ports: type[SupportsPortStreams] = DockerController
    _files: type[SupportsFileArchives] = DockerController


def __getattr__(name: str) -> Any:
    if name == "DockerMachine":  # loaded with the first machine: a plan, a probe and an exec need none
        from providers.docker.machine import DockerMachine

        return DockerMachine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "IMAGE_KIND",
    "KEEPALIVE",
    "PROVIDER_ID",
    "DockerController",
    "DockerMachine",
    "DockerRuntime",
    "image_id_of",
    "missing_image_hint",
]

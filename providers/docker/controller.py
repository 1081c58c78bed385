"""The docker provider's controller: containers as machines, committed images as snapshots (see the package)."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from providers.docker import lifecycle
from providers.docker.container_options import apply_options, asked
from providers.docker.daemon_check import MISSING_IMAGE, daemon_problem, missing_image_hint
from providers.docker.endpoint import resolve_endpoint
from providers.docker.images import IMAGE_KIND, image_id_of
from providers.docker.labels import PROVIDER_ID
from providers.docker.primitives import ConnectsContainers
from providers.docker.rawhttp import RawClient, Response
from rigcli.errors import ProviderError, UnreachableError
from rigcli.jsonutil import JsonObject
from rigcli.provider_api import (
    EffectEntry,
    EffectJournal,
    LiveStatus,
    LocalHost,
    MachineChange,
    ProviderCheck,
    ProviderSetup,
    RuntimeContext,
    SupportsChanges,
    SupportsEffects,
    SupportsInteractive,
    SupportsLastUse,
    SupportsLiveSnapshot,
    SupportsPower,
    SupportsStatus,
)
from rigcli.provider_kit import BaseController, config_env, now_iso, stored_records
from rigcli.speed.lazy_modules import lazy_module
from rigcli.timeouts import check_bound

if TYPE_CHECKING:  # what only making and removing need is imported where it is used (see DockerController.client)
    from providers.docker.client import DockerClient
    from providers.docker.machine import DockerMachine, DockerRuntime

if TYPE_CHECKING:
    import secrets

    from providers.docker import changes, prebuilds, registry_name
else:
    secrets = lazy_module("secrets")
    changes = lazy_module("providers.docker.changes")  # rig fork --replace alone asks for it
    prebuilds = lazy_module("providers.docker.prebuilds")  # only a provider with a registry
    registry_name = lazy_module("providers.docker.registry_name")


KEEPALIVE = ["sleep", "2147483647"]  # busybox sleep has no "infinity"


def raw_error(response: Response, what: str) -> ProviderError:
    """``DockerClient.error``'s wording for an answer on the raw connection."""
    return ProviderError(f"Docker {what} failed: {response.message()} (HTTP {response.status})")


class DockerController(ConnectsContainers, BaseController):
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
        registry = self.config.get("registry")  # snapshots shared through it (prebuilds.py); "" is none
        self.prebuilds: prebuilds.Prebuilds | None = None
        if registry:
            self.prebuilds = prebuilds.Prebuilds(registry_name.parse_registry(registry, provider=PROVIDER_ID), self)

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
        from providers.docker.machine import DockerRuntime  # a plan, a probe and an exec make no machine

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
            # counts; certificates and keys are credentials, not identity. With a registry, the
            # snapshots are wherever it is: any daemon that pulls from it serves the same runs.
            "fingerprint": endpoint.host if self.prebuilds is None else f"registry={self.prebuilds.registry.name}",
        }
        if self.prebuilds is not None:
            check["message"] += f"; snapshots shared through {self.prebuilds.registry.url}"
        image = self.config.get("image")
        image = image if isinstance(image, str) and image else None
        problem = None if mode == "offline" else daemon_problem(self.raw, self.endpoint.host, image)
        if problem is not None:
            warning = f" ({endpoint.warning})" if endpoint.warning else ""
            check["status"], check["message"] = "error", problem + warning
        if problem is not None and problem.startswith(MISSING_IMAGE):
            check["label"], check["value"] = "docker image", image  # the daemon answered: the image is the problem
        return [check]

    def start_container(
        self,
        image: str,
        *,
        workspace: str | None,
        effects: EffectJournal,
        options: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        from providers.docker.labels import EFFECT_LABEL, KIND_LABEL

        wanted, defaults = asked(options)
        # os.urandom(6).hex() is secrets.token_hex(6), without secrets' import of random and its hashes.
        machine_id = f"rig-{os.urandom(6).hex()}"
        workdir = str(wanted.get("workdir") or self.config.get("workdir") or "/workspace")
        host = self.endpoint.host
        # The container's name and rig.effect label are its effect id, journaled before the create
        # call: if the reply is lost or rig is killed, rm and gc still find it. What commands in it
        # get by default (its user and environment) goes with it: rig exec reads it from there.
        journaled: dict[str, Any] = {"machine_id": machine_id, "host": host}
        if defaults:
            journaled["exec"] = {**defaults, "workdir": workdir}
        effects.requested("container", journaled, effect_id=machine_id)
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
        if wanted:
            apply_options(body, wanted)
        # Create and start go over the controller's own connection (rawhttp), as the docker CLI's
        # two requests do: a fork imports no httpx (~40% of its instructions) for them.
        response = self.raw.request("POST", "/containers/create", params={"name": machine_id}, body=body)
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
            started = self.raw.request("POST", f"/containers/{container_id}/start")
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
            **{f"exec_{key}": value for key, value in defaults.items()},
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

    def commit(self, machine: DockerMachine, task: RuntimeContext) -> dict[str, Any]:
        """A task's (or hook's) snapshot of its machine."""
        return self.commit_container(machine.container_id, machine.id, task.effects, made_from=machine.image, task=task)

    def commit_container(
        self,
        container_id: str,
        machine_id: str,
        effects: EffectJournal,
        *,
        made_from: str | None,
        changes: Sequence[str] = (),
        task: RuntimeContext | None = None,
    ) -> dict[str, Any]:
        """Commit the container (paused meanwhile, so the image is one instant of it) to a snapshot image;
        with a registry, a ``task``'s snapshot is pushed there too and named by its digest (``commits``)."""
        from providers.docker.commits import commit_container

        return commit_container(
            self, container_id, machine_id, effects, made_from=made_from, changes=changes, task=task
        )

    def snapshot_image(self, ref: Mapping[str, Any]) -> str:
        """What a machine made from snapshot ``ref`` starts from: the image id, or with a registry its copy
        there by digest (pulled from it where this daemon lacks it)."""
        if self.prebuilds is not None and prebuilds.shared_image(ref) is not None:
            return self.prebuilds.image_for(ref)
        return image_id_of(ref)

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

    def machine_changes(self, machine_id: str) -> list[MachineChange]:
        """The container's diff against its image (``changes.py``): what ``rig fork --replace`` would lose."""
        return changes.container_changes(self.client, machine_id)  # its name is its effect id

    # -- workspace(idle_stop=...): when a container was last used (providers/docker/idle.py) -------------
    def last_used(self, effect: EffectEntry) -> str | None:
        """The container's last sign of use; None for an image, or a container not running."""
        if effect["kind"] != "container":
            return None
        from providers.docker import idle

        return idle.last_used(self.client, effect["id"])  # its name is its effect id

    def validate_artifact(self, ref: Mapping[str, Any]) -> bool:
        """An image ref is valid while the daemon still has that image; a daemon that does not answer
        within RIG_CHECK_TIMEOUT is an UnreachableError (uncertain, never "gone")."""
        if self.prebuilds is not None and prebuilds.shared_image(ref) is not None:
            return self.prebuilds.validate(ref)  # the registry's copy, wherever the daemon is
        try:
            image_id = image_id_of(ref)
        except ProviderError:
            return False
        response = self.raw.request("GET", f"/images/{image_id}/json", bound=check_bound())  # no httpx for a plan
        if response.status not in (200, 404):
            raise ProviderError(f"Docker image inspect failed: {response.message()} (HTTP {response.status})")
        return response.status == 200

    def delete_snapshot(self, ref: Any) -> bool:
        image_id = image_id_of(ref)
        shared = prebuilds.shared_image(ref) if self.prebuilds is not None else None
        pushed = self.prebuilds is not None and shared is not None and self.prebuilds.delete(shared)
        response = self.client.request(
            "DELETE", f"/images/{image_id}", params={"force": "true"}, ok=(200, 404), what="image removal"
        )
        stored = self.setup.storage.get(f"snapshot:{image_id}")
        effect_id = stored["value"].get("effect_id") if stored and isinstance(stored["value"], dict) else None
        if isinstance(effect_id, str):
            self.setup.effects.deleted(effect_id)
        return self.setup.storage.delete(f"snapshot:{image_id}") or response.status_code == 200 or pushed

    def remove_effect(self, effect: EffectEntry) -> bool:
        """Remove a journaled (or found) container or snapshot image (a pushed one from the registry, and
        this daemon's copies); False when it was already gone."""
        from providers.docker import effects as effects_on_daemon

        if effect["kind"] == IMAGE_KIND and effect["resource"].get("registry"):
            if self.prebuilds is None:
                raise UnreachableError(
                    f"image {effect['id']} was pushed to a registry; configure registry= to remove it"
                )
            removed = self.prebuilds.remove(effect)
        else:
            removed = effects_on_daemon.remove(self.client, self.setup.storage, effect)
        self.setup.effects.deleted(effect["id"])
        return removed

    def find_effects(self) -> list[EffectEntry]:
        """Containers and snapshot images on this daemon that rig made for this project (by their labels),
        and with a registry the snapshots rig pushed there for its workflows: one entry each."""
        from providers.docker import effects as effects_on_daemon

        found = effects_on_daemon.find(self.client, self.setup.project_dir)
        if self.prebuilds is None:
            return found
        shared = {entry["id"]: entry for entry in self.prebuilds.find()}
        for entry in found:  # the local copy of a pushed snapshot: one effect, named both ways
            if entry["id"] in shared:
                entry["resource"] = {**shared.pop(entry["id"])["resource"], **entry["resource"]}
        return [*found, *shared.values()]

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
        from providers.docker.attach import attach_exec, journaled_exec

        container = lifecycle.container_of(self.endpoint.host, resource)
        user, defaults, workdir = journaled_exec(resource["resource"])
        full = {**{str(key): str(value) for key, value in self.env.items()}, **defaults, **env}
        return attach_exec(
            self.raw, container, argv, tty=tty, env=full, cwd=cwd or workdir, user=user, effects=self.setup.effects
        )

    def list_machines(self) -> list[JsonObject]:
        return stored_records(self.setup.storage, "machine:", provider=PROVIDER_ID)

    def list_snapshots(self) -> list[JsonObject]:
        return stored_records(self.setup.storage, "snapshot:", provider=PROVIDER_ID, kind=IMAGE_KIND)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        if self._raw is not None:
            self._raw.close()
        if self.prebuilds is not None:
            self.prebuilds.close()


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
    _changes: type[SupportsChanges] = DockerController


__all__ = [
    "IMAGE_KIND",
    "KEEPALIVE",
    "PROVIDER_ID",
    "DockerController",
    "image_id_of",
    "missing_image_hint",
    "raw_error",
]

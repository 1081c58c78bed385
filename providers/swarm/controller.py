"""The swarm provider's controller: one per run, owning the cluster's and the registry's clients and the records.

Machines are services journaled under the name they carry before they are made; snapshots are
commits on the task's node pushed to the registry under the tag they carry (see ``services`` and
``snapshots``).
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from providers.docker.changes import container_changes
from providers.docker.client import DockerClient
from providers.docker.endpoint import resolve_endpoint
from providers.docker.registry import RegistryClient
from providers.swarm import connect, lifecycle, power, services, snapshots
from providers.swarm.cluster import Cluster
from providers.swarm.config import SwarmConfig, parse_config
from providers.swarm.connect import NodeRaws
from providers.swarm.runtime import IMAGE_KIND, PROVIDER_ID, SwarmRuntime, snapshot_of
from rigcli.errors import ProviderError
from rigcli.jsonutil import JsonObject
from rigcli.provider_api import (
    EXEC_EFFECT,
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
)
from rigcli.provider_kit import BaseController, now_iso, stored_records
from rigcli.provider_kit.connect_exec import exec_port, facts_by_exec
from rigcli.timeouts import check_bound

if TYPE_CHECKING:
    from rigcli.provider_kit.connect import ByteStream, ExecStream, MachineFacts, PtyRequest


class SwarmController(BaseController):
    """One per run: the cluster's clients, the registry's, and the records in provider storage."""

    provider_id = PROVIDER_ID

    def __init__(self, setup: ProviderSetup) -> None:
        super().__init__(setup)
        self.swarm_config: SwarmConfig = parse_config(setup.config)
        self.cluster = Cluster(resolve_endpoint(setup.config), self.swarm_config.nodes)
        self.registry = RegistryClient(self.swarm_config.registry)
        setup.cancellation.add_callback(self.cluster.cancel)
        self.node_raws = NodeRaws()  # connect: each node's raw client, for the tasks it runs

    @property
    def manager(self) -> DockerClient:
        return self.cluster.manager

    def runtime(self, context: RuntimeContext) -> SwarmRuntime:
        return SwarmRuntime(self, context)

    def checks(self, mode: str, *, workflow: str, local: LocalHost) -> list[ProviderCheck]:
        """The cluster and registry: their identity joins the fingerprint of every task in scope. Offline,
        the cluster id is the one this manager gave last (kept in host storage); asked otherwise."""
        key = f"cluster:{self.cluster.host}"
        kept = self.setup.host_storage.get(key)
        if mode == "offline" and kept is not None:
            cluster_id = str(kept["value"])
        else:
            cluster_id = str(self.cluster.swarm().get("ID") or "")
            self.cluster.check_api()  # after a first request: by then an older daemon has said which API it speaks
            if kept is None or kept["value"] != cluster_id:
                self.setup.host_storage.set(key, cluster_id)
        registry = self.swarm_config.registry.name
        check: ProviderCheck = {
            "id": "swarm.cluster",
            "label": "swarm cluster",
            "status": "ok",
            "value": f"{cluster_id} via {self.cluster.host}, registry {registry}",
            "message": f"swarm {cluster_id} (manager {self.cluster.host}), snapshots in {registry}",
            # Another cluster, or another registry, has none of these snapshots. Which manager
            # answers does not matter: any manager of the same cluster sees the same services.
            "fingerprint": f"cluster={cluster_id} registry={registry}",
        }
        return [check]

    # -- machines ------------------------------------------------------------------------------------

    def start_service(self, image: str, *, context: RuntimeContext, source_image: str | None) -> dict[str, Any]:
        effects, config = context.effects, self.swarm_config
        machine_id = f"rig-{secrets.token_hex(6)}"
        # The service's name and rig.effect label are its effect id, journaled before the create
        # call: if the reply is lost or rig is killed, rm and gc still find it.
        effects.requested("service", {"machine_id": machine_id, "manager": self.cluster.host}, effect_id=machine_id)
        labels = services.labels_for(self.setup.project_dir, machine_id, context.workspace)
        spec = services.service_spec(machine_id, image, labels, config)
        response = self.manager.request("POST", "/services/create", json=spec, ok=tuple(range(200, 600)))
        if response.status_code != 201:
            effects.deleted(machine_id)  # the manager answered no: nothing was made
            raise self.manager.error(response, "service create")
        service_id = str(response.json()["ID"])
        effects.confirmed(machine_id, {"service_id": service_id})
        try:
            task = services.wait_for_task(
                self.manager,
                service_id,
                start_timeout=config.start_timeout,
                schedule_timeout=config.schedule_timeout,
                cancellation=context.cancellation,
            )
            node, client = self.cluster.client_for(task["NodeID"])
        except BaseException as exc:
            self._discard(machine_id, service_id)
            if isinstance(exc, services.TaskFailed):
                why = services.start_failure(machine_id, image, source_image, str(exc), self.swarm_config.registry.name)
                raise ProviderError(why) from None
            raise
        record = {
            "id": machine_id,
            "service_id": service_id,
            "task_id": task["ID"],
            "node_id": node.id,
            "node": node.hostname,
            "node_host": client.host,
            "container_id": task["Status"]["ContainerStatus"]["ContainerID"],
            "image": image,
            "workdir": config.workdir,
            "created_at": now_iso(),
            "source_image": source_image,
        }
        self.setup.storage.set(f"machine:{machine_id}", record)
        return record

    def _discard(self, machine_id: str, service_id: str) -> None:
        """Remove a service that will not serve; if that fails too, the journal keeps it for rm and gc."""
        with contextlib.suppress(ProviderError):
            services.remove_service(self.manager, service_id)
            self.setup.effects.deleted(machine_id)

    def current(self, machine_id: str) -> dict[str, Any]:
        """The stored record, at the task that runs the service now (a start runs a new one)."""
        stored = self.setup.storage.get(f"machine:{machine_id}")
        if stored is None or not isinstance(stored["value"], dict):
            raise ProviderError(f"Unknown swarm machine {machine_id!r}")
        record = dict(stored["value"])
        task = services.running_task(self.manager, str(record["service_id"]))
        if task is None:
            raise ProviderError(f"Swarm machine {machine_id} is not running (its service has no running task)")
        if task["ID"] != record.get("task_id"):
            node, client = self.cluster.client_for(task["NodeID"])
            container = task["Status"]["ContainerStatus"]["ContainerID"]
            record.update(task_id=task["ID"], node_id=node.id, node=node.hostname, node_host=client.host)
            record["container_id"] = container
            self.setup.storage.set(f"machine:{machine_id}", record)
        return record

    def delete_machine(self, machine_id: str) -> bool:
        stored = self.setup.storage.get(f"machine:{machine_id}")
        value = stored["value"] if stored is not None else None
        saved = not isinstance(value, dict) or value.get("stopping") or value.get("saved_digest")
        if saved:
            # Before the service: if rig dies between the two, the service (journaled) is still there to retry.
            power.remove_saved(self, machine_id)
        # Without a record, the service's name (which is the machine id) still finds it.
        target = value.get("service_id") if isinstance(value, dict) else machine_id
        removed = services.remove_service(self.manager, str(target or machine_id))
        if saved and isinstance(value, dict):
            # Its running task used the saved image on its node, so that copy stayed; the task is leaving
            # now. A stop killed after its push never wrote saved_digest, but its image may be running too.
            power.remove_saved(self, machine_id)
        self.setup.storage.delete(f"machine:{machine_id}")
        self.setup.effects.deleted(machine_id)
        return stored is not None or removed

    def stop_machine(self, machine_id: str) -> None:
        """Keep the machine's files in the registry and scale its service to 0 (``rig stop``)."""
        power.stop(self, machine_id)

    def start_machine(self, machine_id: str) -> None:
        """Scale the service back to 1 and wait for its task (``rig start``)."""
        power.start(self, machine_id, self.setup.cancellation)

    # -- after fork, by journaled service: live state, stop and start, a program on rig's stdio ----------

    def live_states(self, resources: Sequence[EffectEntry]) -> dict[str, tuple[lifecycle.Live, str]]:
        """Each machine among ``resources`` as the manager sees it now (``rig ls``): two requests for all."""
        return lifecycle.probe(self, resources)

    def probe(self, resources: Sequence[EffectEntry]) -> dict[str, LiveStatus]:
        return {key: LiveStatus(state, detail) for key, (state, detail) in self.live_states(resources).items()}

    def stop(self, resource: EffectEntry) -> None:
        self.stop_machine(lifecycle.machine_of(resource))

    def start(self, resource: EffectEntry) -> None:
        self.start_machine(lifecycle.machine_of(resource))

    def attach(
        self,
        resource: EffectEntry,
        argv: Sequence[str] | None,
        *,
        tty: bool,
        env: Mapping[str, str],
        cwd: str | None,
    ) -> int:
        """Run ``argv`` (or a login shell) in the task's container through its own node (``rig shell``/``exec``)."""
        return lifecycle.attach(self, lifecycle.machine_of(resource), argv, tty=tty, env=env, cwd=cwd)

    # -- connect: ssh-proxy, forward, cp, through the task's node (providers/swarm/connect.py) ---------------
    def open_exec(
        self,
        resource: EffectEntry,
        argv: Sequence[str] | None,
        *,
        pty: PtyRequest | None,
        env: Mapping[str, str],
        cwd: str | None,
    ) -> ExecStream:
        return connect.open_exec(self, resource, argv, pty=pty, env=env, cwd=cwd)

    def machine_facts(self, resource: EffectEntry) -> MachineFacts:
        return facts_by_exec(self, resource)

    def open_port(self, resource: EffectEntry, host: str, port: int) -> ByteStream:
        return exec_port(self, resource, host, port)  # a relay program inside the task, as on docker

    def read_archive(self, resource: EffectEntry, path: str) -> ByteStream:
        return connect.read_archive(self, resource, path)

    def write_archive(self, resource: EffectEntry, directory: str, source: ByteStream) -> None:
        connect.write_archive(self, resource, directory, source)

    def path_kind(self, resource: EffectEntry, path: str) -> str | None:
        return connect.path_kind(self, resource, path)

    # -- snapshots -----------------------------------------------------------------------------------

    def snapshot_task(self, machine_id: str, node_id: str, container_id: str, effects: EffectJournal) -> dict[str, Any]:
        """Commit the task's container on its node (paused meanwhile: one instant of it) and push it."""
        registry = self.swarm_config.registry
        node, client = self.cluster.client_for(node_id)
        tag = snapshots.new_tag(self.setup.project_dir, machine_id)
        resource = {"snapshot_id": tag, "registry": registry.name, "node_host": client.host}
        effects.requested(IMAGE_KIND, resource, effect_id=tag)
        image_id = snapshots.commit(client, container_id, registry, tag)
        digest = snapshots.push(client, registry, tag)
        self.setup.storage.set(
            f"snapshot:{tag}",
            {
                "snapshot_id": tag,
                "image": snapshots.image_reference(registry, digest),
                "digest": digest,
                "created_at": now_iso(),
                "source_machine": machine_id,
                "node": node.hostname,
            },
        )
        effects.confirmed(tag, {"digest": digest, "image_id": image_id})
        image = snapshots.image_reference(registry, digest)
        return {"provider": PROVIDER_ID, "kind": IMAGE_KIND, "image": image, "snapshot_id": tag, "digest": digest}

    # rig fork NEW --from WS: the machine's running task committed and pushed as it is now, in place of the
    # snapshot it was made from (the provider kit routes snapshot_source/snapshot_resource of these kinds here).
    machine_kinds = ("service",)

    def machine_source(self, machine_id: str) -> dict[str, Any] | None:
        """The snapshot ref the machine was made from (its image, which names it by digest); None if none."""
        stored = self.setup.storage.get(f"machine:{machine_id}")
        source = (
            stored["value"].get("source_image") if stored is not None and isinstance(stored["value"], dict) else None
        )
        return {"provider": PROVIDER_ID, "kind": IMAGE_KIND, "image": source} if isinstance(source, str) else None

    def snapshot_machine(self, machine_id: str, effects: EffectJournal) -> dict[str, Any]:
        record = self.current(machine_id)  # the task that runs it now, wherever the swarm put it
        return self.snapshot_task(machine_id, str(record["node_id"]), str(record["container_id"]), effects)

    def machine_changes(self, machine_id: str) -> list[MachineChange]:
        """The running task's container against its image, asked of its own node (``rig fork --replace``);
        a stopped machine is a ProviderError: rig cannot tell what its saved files hold."""
        record = self.current(machine_id)
        _, client = self.cluster.client_for(str(record["node_id"]))
        return container_changes(client, str(record["container_id"]))

    def validate_artifact(self, ref: Mapping[str, Any]) -> bool:
        """A snapshot is valid while the registry has its manifest (nodes pull it from there)."""
        try:
            image = snapshot_of(ref)["image"]
        except ProviderError:
            return False
        registry = self.swarm_config.registry
        if not registry.names(image):
            return False  # in another registry: this cluster's nodes do not pull from it
        name = image[len(registry.name) + 1 :]
        repository, separator, reference = name.partition("@")
        if not separator:
            repository, _, reference = name.rpartition(":")
        return self.registry.exists(repository, reference, bound=check_bound())  # uncertain raises, never False

    def delete_snapshot(self, ref: Any) -> bool:
        snapshot = snapshot_of(ref)
        tag = snapshot.get("snapshot_id")
        if not isinstance(tag, str) or not tag:
            raise ProviderError(f"swarm delete_snapshot needs a snapshot rig made, not {ref!r}")
        removed = self._delete_snapshot(tag, snapshot.get("digest"))
        stored = self.setup.storage.delete(f"snapshot:{tag}")
        return stored or removed

    def _delete_snapshot(self, tag: str, digest: object) -> bool:
        nodes = self.cluster.every_client()
        removed = snapshots.delete(self.registry, self.manager, nodes, tag, digest if isinstance(digest, str) else None)
        self.setup.storage.delete(f"snapshot:{tag}")
        self.setup.effects.deleted(tag)
        return removed

    # -- the effects journal -------------------------------------------------------------------------

    def remove_effect(self, effect: EffectEntry) -> bool:
        """Remove a journaled (or found) service or registry snapshot; False when it was already gone."""
        resource = effect["resource"]
        if effect["kind"] == "service":
            return self.delete_machine(str(resource.get("machine_id") or effect["id"]))
        if effect["kind"] == IMAGE_KIND:
            return self._delete_snapshot(str(resource.get("snapshot_id") or effect["id"]), resource.get("digest"))
        if effect["kind"] == EXEC_EFFECT:  # a command in a task's container whose rig is gone
            return lifecycle.end_exec(self, effect)
        raise ProviderError(f"swarm cannot remove a {effect['kind']!r} effect")

    def find_effects(self) -> list[EffectEntry]:
        """The project's services on the cluster and its snapshots in the registry (and copies on the nodes), by
        rig's labels."""
        project, registry = self.setup.project_dir, self.swarm_config.registry
        machines = services.find_services(self.manager, project)
        found = {entry["id"]: entry for entry in snapshots.find_copies(self.cluster.every_client(), registry, project)}
        found.update((entry["id"], entry) for entry in snapshots.find(self.registry, project))
        found.update((entry["id"], entry) for entry in power.orphans(self, {entry["id"] for entry in machines}))
        return [*machines, *found.values()]

    def list_machines(self) -> list[JsonObject]:
        return stored_records(self.setup.storage, "machine:", provider=PROVIDER_ID)

    def list_snapshots(self) -> list[JsonObject]:
        return stored_records(self.setup.storage, "snapshot:", provider=PROVIDER_ID, kind=IMAGE_KIND)

    def close(self) -> None:
        self.node_raws.close()
        self.cluster.close()
        self.registry.close()


if TYPE_CHECKING:  # mypy checks the optional hook against the contract
    from rigcli.provider_kit.connect import SupportsExecStreams, SupportsFileArchives, SupportsPortStreams

    _effects: type[SupportsEffects] = SwarmController
    _exec: type[SupportsExecStreams] = SwarmController
    _ports: type[SupportsPortStreams] = SwarmController
    _files: type[SupportsFileArchives] = SwarmController
    _changes: type[SupportsChanges] = SwarmController

__all__ = ["SwarmController"]

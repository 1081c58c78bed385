"""Stopping and starting a swarm machine while keeping its files: scale to 0 and back to 1, through the registry.

A task's container goes when its service is scaled to 0, so a stop first commits it on its node and
pushes it as ``<registry>/rig/snapshot:<project key>-<machine>-stopped`` (labelled ``rig.kind=stopped``,
so it is never taken for a snapshot), and points the service at that image; a start then runs it
on whichever node the swarm picks. The tag is named after the machine, so it needs no journal row
of its own: removing the machine removes it, and ``rig gc`` finds one whose machine is gone.
"""

from __future__ import annotations

import json
import re
from typing import Any

from providers.docker.effects import EFFECT_LABEL, KIND_LABEL
from providers.swarm import services, snapshots
from providers.swarm.parts import SwarmParts
from rigcli.errors import ProviderError
from rigcli.jsonutil import JsonValue
from rigcli.provider_api import Cancellation, EffectEntry

STOPPED = "stopped"  # the rig.kind of a stopped machine's saved image
_SAVED = re.compile(r"^[0-9a-f]{8}-(?P<machine>rig-[0-9a-f]{12})-stopped$")


def saved_tag(project_dir: str, machine_id: str) -> str:
    return f"{snapshots.project_key(project_dir)}-{machine_id}-{STOPPED}"


def _service(controller: SwarmParts, machine_id: str) -> dict[str, Any]:
    stored = controller.setup.storage.get(f"machine:{machine_id}")
    value = stored["value"] if stored is not None and isinstance(stored["value"], dict) else {}
    target = str(value.get("service_id") or machine_id)
    response = controller.manager.request("GET", f"/services/{target}", ok=(200, 404), what="service inspect")
    if response.status_code == 404:
        raise ProviderError(f"Swarm machine {machine_id} is gone: its service no longer exists")
    found: dict[str, Any] = response.json()
    return found


def _update(controller: SwarmParts, service: dict[str, Any], *, replicas: int, image: str | None = None) -> None:
    """One service update at the version read: the replicas, the image, and for a start a new task for certain
    (with restart condition none, a slot whose old task is still shutting down is otherwise left empty)."""
    spec = dict(service["Spec"])
    template = dict(spec["TaskTemplate"])
    if image is not None:
        template["ContainerSpec"] = {**template["ContainerSpec"], "Image": image}
    if replicas:
        template["ForceUpdate"] = int(template.get("ForceUpdate") or 0) + 1
    spec["TaskTemplate"] = template
    spec["Mode"] = {"Replicated": {"Replicas": replicas}}
    controller.manager.request(
        "POST",
        f"/services/{service['ID']}/update",
        params={"version": (service.get("Version") or {}).get("Index")},
        json=spec,
        what="service update",
    )


def stop(controller: SwarmParts, machine_id: str) -> None:
    """Save the task's container to the registry and scale the service to 0; a stopped machine stays stopped."""
    service = _service(controller, machine_id)
    replicas = ((service["Spec"].get("Mode") or {}).get("Replicated") or {}).get("Replicas")
    task = services.running_task(controller.manager, service["ID"])
    if task is None:
        if replicas:
            _update(controller, service, replicas=0)  # its container ended: nothing running to save
        return
    registry, project = controller.swarm_config.registry, controller.setup.project_dir
    tag = saved_tag(project, machine_id)
    _remember(controller, machine_id, stopping=True)  # the machine's removal then looks for the tag too
    _, node = controller.cluster.client_for(task["NodeID"])
    container = task["Status"]["ContainerStatus"]["ContainerID"]
    snapshots.commit(node, container, registry, tag, kind=STOPPED)
    digest = snapshots.push(node, registry, tag)
    _update(controller, service, replicas=0, image=snapshots.image_reference(registry, digest))
    previous = _record(controller, machine_id).get("saved_digest")
    _remember(controller, machine_id, saved_digest=digest, stopping=False)
    if isinstance(previous, str) and previous != digest:
        controller.registry.delete(snapshots.REPOSITORY, previous)  # the last stop's image: nothing runs it now


def start(controller: SwarmParts, machine_id: str, cancellation: Cancellation) -> None:
    """Scale the service back to 1 and wait for its task (from the image the stop saved) to run."""
    service = _service(controller, machine_id)
    if services.running_task(controller.manager, service["ID"]) is not None:
        return
    earlier = frozenset(str(task["ID"]) for task in services.tasks_of(controller.manager, service["ID"]))
    _update(controller, service, replicas=1)
    config = controller.swarm_config
    try:
        services.wait_for_task(
            controller.manager,
            service["ID"],
            start_timeout=config.start_timeout,
            schedule_timeout=config.schedule_timeout,
            cancellation=cancellation,
            earlier=earlier,
        )
    except services.TaskFailed as exc:
        raise ProviderError(f"Swarm machine {machine_id} did not start: {exc}") from None
    if _record(controller, machine_id):
        controller.current(machine_id)  # the record follows the new task


def remove_saved(controller: SwarmParts, machine_id: str) -> None:
    """Remove a machine's saved image (a stop's), from the registry and the nodes; fine when there is none."""
    tag = saved_tag(controller.setup.project_dir, machine_id)
    snapshots.delete(controller.registry, controller.manager, controller.cluster.every_client(), tag, None)


def orphans(controller: SwarmParts, machines: set[str]) -> list[EffectEntry]:
    """Saved images in the registry or on the nodes whose machine is not among ``machines`` (the services that
    exist)."""
    prefix = f"{snapshots.project_key(controller.setup.project_dir)}-"
    found: list[EffectEntry] = []
    for tag in controller.registry.tags(snapshots.REPOSITORY):
        named = _SAVED.match(tag)
        if not tag.startswith(prefix) or named is None or named["machine"] in machines:
            continue
        labels = controller.registry.labels(snapshots.REPOSITORY, tag) or {}
        if labels.get("rig.project") != controller.setup.project_dir or labels.get(EFFECT_LABEL) != tag:
            continue
        if labels.get(KIND_LABEL) == STOPPED:
            resource: dict[str, JsonValue] = {"snapshot_id": tag, "registry": controller.registry.registry.name}
            found.append({"id": tag, "kind": "image", "resource": resource})
    return found + _orphan_copies(controller, machines, {entry["id"] for entry in found})


def _orphan_copies(controller: SwarmParts, machines: set[str], known: set[str]) -> list[EffectEntry]:
    """Nodes' copies of saved images whose machine is gone (a copy a running task used outlives its tag)."""
    project = controller.setup.project_dir
    filters = json.dumps({"label": [f"rig.project={project}", f"{KIND_LABEL}={STOPPED}"]})
    found: dict[str, EffectEntry] = {}
    for node in controller.cluster.every_client():
        try:
            images = node.json("GET", "/images/json", params={"filters": filters}, what="image list")
        except ProviderError:
            continue  # a node is a cache of the registry: one that does not answer is looked at next time
        for image in images:
            tag = str((image.get("Labels") or {}).get(EFFECT_LABEL) or "")
            named = _SAVED.match(tag)
            if (
                named is None
                or named["machine"] in machines
                or tag in known
                or tag != saved_tag(project, named["machine"])
            ):
                continue
            resource: dict[str, JsonValue] = {"snapshot_id": tag, "registry": controller.registry.registry.name}
            found[tag] = {"id": tag, "kind": "image", "resource": resource}
    return list(found.values())


def _record(controller: SwarmParts, machine_id: str) -> dict[str, Any]:
    stored = controller.setup.storage.get(f"machine:{machine_id}")
    return dict(stored["value"]) if stored is not None and isinstance(stored["value"], dict) else {}


def _remember(controller: SwarmParts, machine_id: str, **fields: JsonValue) -> None:
    record = _record(controller, machine_id)
    if record:
        controller.setup.storage.set(f"machine:{machine_id}", {**record, **fields})


__all__ = ["STOPPED", "orphans", "remove_saved", "saved_tag", "start", "stop"]

"""Machines as Swarm services of one replica: the spec rig asks for, waiting for its task, finding and removing them."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from providers.docker.client import DockerClient
from providers.docker.effects import EFFECT_LABEL, KIND_LABEL
from providers.swarm.config import SwarmConfig
from rigcli.errors import InterruptedRunError, ProviderError
from rigcli.jsonutil import JsonValue
from rigcli.provider_api import Cancellation, EffectEntry

KEEPALIVE = ["sleep", "2147483647"]  # busybox sleep has no "infinity"
# A task in one of these will never run: the service is over, whatever the manager does next.
ENDED = ("complete", "shutdown", "failed", "rejected", "remove", "orphaned")
# A task usually runs within a second: look often until then (one cheap request), then back off.
_POLL_FAST, _POLL_SLOW, _FAST_FOR = 0.05, 0.25, 2.0


class TaskFailed(ProviderError):
    """The service's task did not reach running: the scheduler's or the node's reason is the message."""


def labels_for(project_dir: str, machine_id: str, workspace: str | None) -> dict[str, str]:
    labels = {"rig.project": project_dir, "rig.machine": machine_id, EFFECT_LABEL: machine_id, KIND_LABEL: "machine"}
    if workspace:
        labels["rig.workspace"] = workspace
    return labels


def service_spec(name: str, image: str, labels: Mapping[str, str], config: SwarmConfig) -> dict[str, Any]:
    """One replica of ``image`` kept idle, named and labelled by its effect id, placed as the config says.

    ``dnsrr``: no virtual IP (IPVS is not available everywhere, and a machine publishes nothing).
    No restart: a machine whose container ended is stopped, not silently replaced by a fresh one.
    """
    template: dict[str, Any] = {
        "ContainerSpec": {
            "Image": image,
            "Command": KEEPALIVE[:1],
            "Args": KEEPALIVE[1:],
            "Dir": config.workdir,
            "Labels": dict(labels),  # on the task's container too: it is found on its node by them
            "Init": True,
            "StopGracePeriod": 0,
        },
        "Placement": {"Constraints": list(config.constraints)},
        "RestartPolicy": {"Condition": "none"},
    }
    if config.resources:
        template["Resources"] = config.resources
    if config.networks:
        template["Networks"] = [{"Target": network} for network in config.networks]
    return {
        "Name": name,
        "Labels": dict(labels),
        "TaskTemplate": template,
        "Mode": {"Replicated": {"Replicas": 1}},
        "EndpointSpec": {"Mode": "dnsrr"},
    }


def tasks_of(manager: DockerClient, service: str) -> list[dict[str, Any]]:
    """The service's tasks, newest first."""
    filters = json.dumps({"service": [service]})
    tasks: list[dict[str, Any]] = manager.json("GET", "/tasks", params={"filters": filters}, what="task list")
    return sorted(tasks, key=lambda task: (task.get("Version") or {}).get("Index", 0), reverse=True)


def running_task(manager: DockerClient, service: str) -> dict[str, Any] | None:
    """The service's task that runs now (with its container) and is meant to go on running, if one does."""
    for task in tasks_of(manager, service):
        status = task.get("Status") or {}
        if task.get("DesiredState") != "running":
            continue  # being shut down (the service was scaled to 0, or updated)
        if status.get("State") == "running" and (status.get("ContainerStatus") or {}).get("ContainerID"):
            return task
    return None


def _reason(task: Mapping[str, Any]) -> str:
    status = task.get("Status") or {}
    return str(status.get("Err") or status.get("Message") or status.get("State") or "no reason given")


def wait_for_task(
    manager: DockerClient,
    service: str,
    *,
    start_timeout: float,
    schedule_timeout: float,
    cancellation: Cancellation,
    earlier: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The service's task once it runs; TaskFailed with the task's error when it ends, or cannot be placed
    within ``schedule_timeout``, or does not run within ``start_timeout``. Tasks in ``earlier`` (there before
    a start) are not it."""
    started = time.monotonic()
    newest: dict[str, Any] | None = None
    while True:
        if cancellation.is_set():
            raise InterruptedRunError(f"Stopped waiting for swarm service {service}: the run was interrupted")
        tasks = [task for task in tasks_of(manager, service) if task.get("ID") not in earlier]
        newest = tasks[0] if tasks else None
        if newest is not None:
            state = (newest.get("Status") or {}).get("State")
            if state == "running" and (newest["Status"].get("ContainerStatus") or {}).get("ContainerID"):
                return newest
            if state in ENDED:
                raise TaskFailed(f"its task {state}: {_reason(newest)}")
            unplaced = state == "pending" and (newest.get("Status") or {}).get("Err")
            if unplaced and time.monotonic() - started > schedule_timeout:
                raise TaskFailed(f"no node can run it: {_reason(newest)} (waited {schedule_timeout:g} s)")
        if time.monotonic() - started > start_timeout:
            where = (
                f"its task is {(newest.get('Status') or {}).get('State')}: {_reason(newest)}" if newest else "no task"
            )
            raise TaskFailed(f"it did not start within {start_timeout:g} s ({where})")
        cancellation.wait(_POLL_FAST if time.monotonic() - started < _FAST_FOR else _POLL_SLOW)


def start_failure(machine_id: str, image: str, source_image: str | None, why: str, registry: str) -> str:
    """Why a machine did not start, with what to do when its node could not pull its image."""
    hint = ""
    if "No such image" in why or "not found" in why or "manifest unknown" in why:
        hint = (
            f"; the snapshot is no longer in the registry {registry}: run `rig apply` to rebuild it"
            if source_image
            else f"; is it in the registry {registry}? nodes pull only from there: docker push {image}"
        )
    return f"Swarm machine {machine_id} ({image}) did not start: {why}{hint}"


def remove_service(manager: DockerClient, target: str) -> bool:
    """Remove a service by id or name; False when it was already gone. Its nodes then remove its task's container."""
    response = manager.request("DELETE", f"/services/{target}", ok=(200, 404), what="service removal")
    return bool(response.status_code == 200)


def scale(manager: DockerClient, target: str, replicas: int) -> None:
    """Set the service's replicas (0 stops the machine, 1 starts it again), at the version read."""
    service = manager.json("GET", f"/services/{target}", what="service inspect")
    spec = dict(service["Spec"])
    spec["Mode"] = {"Replicated": {"Replicas": replicas}}
    version = (service.get("Version") or {}).get("Index")
    manager.request(
        "POST", f"/services/{service['ID']}/update", params={"version": version}, json=spec, what="service update"
    )


def find_services(manager: DockerClient, project_dir: str) -> list[EffectEntry]:
    """The project's services rig made: those named by their own ``rig.effect`` label."""
    filters = json.dumps({"label": [f"rig.project={project_dir}"]})
    found: list[EffectEntry] = []
    for service in manager.json("GET", "/services", params={"filters": filters}, what="service list"):
        spec = service.get("Spec") or {}
        name, labels = spec.get("Name"), spec.get("Labels") or {}
        if name and labels.get(EFFECT_LABEL) == name and labels.get(KIND_LABEL) == "machine":
            resource: dict[str, JsonValue] = {
                "machine_id": str(name),
                "service_id": str(service["ID"]),
                "manager": manager.host,
            }
            found.append({"id": str(name), "kind": "service", "resource": resource})
    return found


__all__ = [
    "KEEPALIVE",
    "TaskFailed",
    "find_services",
    "labels_for",
    "remove_service",
    "running_task",
    "scale",
    "service_spec",
    "start_failure",
    "tasks_of",
    "wait_for_task",
]

"""A swarm machine's life after fork: its live state, and a program run in its task's container on rig's stdio.

The probe asks the manager twice whatever the number of machines (the services by name, then
their tasks), and once more per node it has not met yet to name where each one runs. A service
the manager does not know is ``missing``; one scaled to 0 (``rig stop``) or whose task ended is
``stopped``; a manager that does not answer makes every machine ``unknown``, with why.

A program is run by the docker CLI (``docker exec -i``, ``-t`` on a terminal) against the task's
own node (``provider_kit.run_attached``: signals forwarded as for any host program): the manager
cannot reach a container on another node. Values of ``env`` go to the CLI
through its environment (``-e NAME``), never on its command line, where ``ps`` would show them.
A handler's exec whose rig was killed is ended on the node it ran on (``end_exec``).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from providers.docker.execution import end_session
from providers.docker.live import probe_bound
from providers.swarm.parts import SwarmParts
from rigcli.errors import ProviderError, UnreachableError
from rigcli.provider_api import EffectEntry
from rigcli.provider_kit import run_attached

Live = Literal["running", "stopped", "missing", "unknown"]
# bash when the image has it (a login shell, as `docker exec -it … bash -l` would give), else sh.
LOGIN_SHELL = ("sh", "-c", "if command -v bash >/dev/null 2>&1; then exec bash -l; fi; exec sh -l")


def machine_of(resource: EffectEntry) -> str:
    """The machine id a journaled (or found) service stands for: its effect id is the service's name."""
    return str(resource["resource"].get("machine_id") or resource["id"])


def probe(controller: SwarmParts, resources: Sequence[EffectEntry]) -> dict[str, tuple[Live, str]]:
    """Each service among ``resources`` as the manager sees it now, by effect id (snapshots are left out)."""
    wanted = {resource["id"]: machine_of(resource) for resource in resources if resource["kind"] == "service"}
    if not wanted:
        return {}
    manager, bound = controller.manager, probe_bound()  # rig ls waits no longer than that anyway
    try:
        filters = json.dumps({"name": sorted(set(wanted.values()))})  # a prefix match: exact names are kept below
        listed = manager.json("GET", "/services", params={"filters": filters}, bound=bound, what="service list")
        by_name = {str(item["Spec"]["Name"]): item for item in listed if item["Spec"]["Name"] in wanted.values()}
        tasks: list[dict[str, Any]] = []
        if by_name:
            filters = json.dumps({"service": sorted(str(item["ID"]) for item in by_name.values())})
            tasks = manager.json("GET", "/tasks", params={"filters": filters}, bound=bound, what="task list")
        answers = {
            effect_id: _state(controller, by_name.get(name), [task for task in tasks if _of(task, by_name.get(name))])
            for effect_id, name in wanted.items()
        }
    except ProviderError as exc:
        return {effect_id: ("unknown", str(exc)) for effect_id in wanted}
    return answers


def _of(task: Mapping[str, Any], service: Mapping[str, Any] | None) -> bool:
    return service is not None and task.get("ServiceID") == service["ID"]


def _state(controller: SwarmParts, service: Mapping[str, Any] | None, tasks: list[dict[str, Any]]) -> tuple[Live, str]:
    if service is None:
        return "missing", "its service is gone"
    replicas = ((service["Spec"].get("Mode") or {}).get("Replicated") or {}).get("Replicas")
    if replicas == 0:
        return "stopped", "scaled to 0"
    tasks = sorted(tasks, key=lambda task: (task.get("Version") or {}).get("Index", 0), reverse=True)
    for task in tasks:
        status = task.get("Status") or {}
        if task.get("DesiredState") == "running" and status.get("State") == "running":
            return "running", f"on {controller.cluster.node(str(task['NodeID'])).hostname}"
    if not tasks:
        return "stopped", "no task yet"
    status = tasks[0].get("Status") or {}
    state = str(status.get("State") or "unknown")
    reason = str(status.get("Err") or status.get("Message") or "").strip()
    return "stopped", f"task {state}: {reason}" if reason and reason != state else f"task {state}"


def exec_command(
    controller: SwarmParts,
    machine_id: str,
    argv: Sequence[str] | None,
    *,
    tty: bool,
    env: Mapping[str, str],
    cwd: str | None,
) -> tuple[list[str], dict[str, str]]:
    """The docker CLI's command line and environment that run ``argv`` in the machine's running task."""
    if argv is not None and not argv:
        raise ProviderError("No program to run: give one, or none for a login shell")
    docker = shutil.which("docker")
    if docker is None:
        raise ProviderError("A program in a swarm machine is run by the docker CLI, which is not on PATH")
    record = controller.current(machine_id)  # the task that runs it now, on whichever node
    _, client = controller.cluster.client_for(str(record["node_id"]))
    endpoint = client.endpoint
    values = {
        **{str(key): str(value) for key, value in (controller.setup.config.get("env") or {}).items()},
        **env,
    }
    command = [docker, "exec", "-i", *(["-t"] if tty else []), "-w", cwd or str(record["workdir"])]
    for name in values:
        command += ["-e", name]  # the value comes from the CLI's own environment
    command += [str(record["container_id"]), *(argv if argv is not None else LOGIN_SHELL)]
    cli_env = {**os.environ, **values, "DOCKER_HOST": endpoint.host}
    cli_env.pop("DOCKER_CONTEXT", None)  # the CLI warns when both are set; the node's DOCKER_HOST is meant
    cli_env["DOCKER_TLS_VERIFY"] = "1" if endpoint.mode == "tls" else ""
    if endpoint.cert_path:
        cli_env["DOCKER_CERT_PATH"] = endpoint.cert_path
    return command, cli_env


def attach(
    controller: SwarmParts,
    machine_id: str,
    argv: Sequence[str] | None,
    *,
    tty: bool,
    env: Mapping[str, str],
    cwd: str | None,
) -> int:
    """Run the program on rig's own stdin, stdout and stderr; its exit code, a death by signal N as 128 + N."""
    command, cli_env = exec_command(controller, machine_id, argv, tty=tty, env=env, cwd=cwd)
    return run_attached(command, cwd=None, env=cli_env)


def end_exec(controller: SwarmParts, effect: EffectEntry) -> bool:
    """End what is left of a killed rig's exec on the node it ran on (the journaled ``host``): True when
    its container was there to look in, False when it is gone (so is the session)."""
    host = str(effect["resource"].get("host") or "")
    client = controller.cluster.client_at(host)
    if client is None:  # a node no longer configured: the answer is unknown, never "gone"
        raise UnreachableError(f"exec {effect['id']} ran on the swarm node at {host}, which nodes= no longer names")
    return end_session(client, str(effect["resource"].get("container_id") or ""), effect["id"])


__all__ = ["LOGIN_SHELL", "attach", "end_exec", "exec_command", "machine_of", "probe"]

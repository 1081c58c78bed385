"""Reaching a workspace's machine for people's own tools (``rig ssh-proxy``, ``rig forward``, ``rig cp``).

``Connections.target`` finds the workspace, starts it when it is stopped (as ``rig exec --start``
does; the caller says so), refuses a ``local`` workspace made on another host (its directory is on
that host), and hands back its first running machine with the controller that serves it and the
primitives (``provider_kit/connect.py``) the command will use: a missing one is refused in one line
naming the provider and the primitive.
"""

from __future__ import annotations

from collections.abc import Sequence

from rigcli.engine.connect_target import ConnectTarget
from rigcli.engine.lifecycle import Lifecycle
from rigcli.engine.lifecycle import _unusable as unusable
from rigcli.engine.liveness import controllers_by_provider, controllers_for, probe_resources, resources_of, summarize
from rigcli.engine.project import Project
from rigcli.engine.workspaces import Workspaces
from rigcli.errors import RigError, UnsupportedError
from rigcli.provider_api import ProviderController
from rigcli.provider_kit.connect import PRIMITIVES


class Connections:
    """Finds the machine a connect command reaches."""

    def __init__(self, project: Project, workspaces: Workspaces, lifecycle: Lifecycle) -> None:
        self.project = project
        self.workspaces = workspaces
        self.lifecycle = lifecycle

    async def target(
        self, name: str, workflow: str | None, primitives: Sequence[str], *, start: bool = True
    ) -> ConnectTarget:
        selected, record = self.workspaces.find_workspace(name, workflow)
        resources = resources_of(record)
        if any(item.provider_id == "local" for item in resources):
            _refuse_other_host(name, record.owner or "")
        answers = await probe_resources(self.project, [selected.name], resources)
        live = summarize(record, answers)
        started = False
        if live.state == "stopped" and start:
            live = await self.lifecycle.set_power(name, selected.name, stop=False)
            answers = await probe_resources(self.project, [selected.name], resources)
            started = True
        problem = unusable(name, live)
        if problem is not None:
            raise problem
        machines = [item for item in resources if item.entry["id"] in answers]
        running = [item for item in machines if answers[item.entry["id"]].status.state != "stopped"]
        if not running:
            raise RigError(f"Workspace {name} has no machine to reach ({live.detail})")
        machine = running[0]
        candidates: list[ProviderController] = []
        answered = answers[machine.entry["id"]].controller
        if answered is not None:
            candidates.append(answered)
        known = await controllers_by_provider(self.project, [selected.name])
        candidates += await controllers_for(self.project, known, machine.provider_id)
        for wanted in primitives:
            protocol = PRIMITIVES[wanted]
            if not any(isinstance(item, protocol) for item in candidates):
                raise UnsupportedError(
                    f"Workspace {name} uses the {machine.provider_id} provider, which has no {wanted} "
                    f"({protocol.__name__}) for this"
                )
        controller = next(
            item for item in candidates if all(isinstance(item, PRIMITIVES[wanted]) for wanted in primitives)
        )
        definition = selected.root.workspace_definition
        ports = definition.ports if definition is not None else ()
        return ConnectTarget(name, selected.name, machine.provider_id, machine.entry, controller, started, ports)


def _refuse_other_host(name: str, owner: str) -> None:
    from rigcli.state.process import this_host

    _, _, host = owner.rpartition("@")
    if host and host != this_host():
        raise RigError(
            f"Workspace {name} is a local workspace on host {host}; connect to it from there (this is {this_host()})"
        )


__all__ = ["ConnectTarget", "Connections"]

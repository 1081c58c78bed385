"""A workspace of a dev container configuration: its container made from the prepared image at fork
(``postCreateCommand``, then ``postStartCommand``), ``postStartCommand`` again at every ``rig start``,
and ``postAttachCommand`` at each ``rig shell`` (or ``rig ssh``) session. Commands run as the remote
user, in the workspace folder, with ``remoteEnv``; so do ``rig exec`` and ``rig shell`` themselves, from
what the container's create journaled (the docker provider's ``exec_user``/``exec_env``)."""

from __future__ import annotations

import logging
from typing import Any

from rigcli.devcontainer.host_requirements import warn_host_requirements
from rigcli.devcontainer.lifecycle import run_in_machine
from rigcli.devcontainer.tasks import container_env, remote_environment
from rigcli.devcontainer.variables import container_env_resolver
from rigcli.jsonutil import JsonValue


def create_workspace(spec: dict[str, Any], workflow: Any, box: Any, log: logging.Logger) -> dict[str, JsonValue]:
    ctx = dict(workflow.ctx)
    env, user = remote_environment(spec, ctx)
    options = {**spec["options"], "exec_user": user, "exec_env": env, "workdir": spec["folder"]}
    if not spec["override_command"]:  # the image's own program, as it was before rig's tasks ran
        options["entrypoint"], options["cmd"] = ctx["base"]["entrypoint"], ctx["base"]["cmd"]
    machine = box.from_snapshot(ctx["image"], options=options)
    warn_host_requirements(spec.get("host_requirements"), box, log)
    made = {"machine": machine.id, "container": machine.container_id, "folder": spec["folder"], "user": user}
    _run(spec, "postCreateCommand", machine, box, ctx)
    _run(spec, "postStartCommand", machine, box, ctx)
    return made


def start_workspace(spec: dict[str, Any], workflow: Any, workspace: Any, box: Any) -> None:
    """After ``rig start``: ``postStartCommand``."""
    _run(spec, "postStartCommand", box.from_id(workspace.ctx["machine"]), box, dict(workflow.ctx))


def attach_workspace(spec: dict[str, Any], workflow: Any, workspace: Any, box: Any) -> None:
    """Before a ``rig shell`` (or ``rig ssh``) session: ``postAttachCommand``."""
    _run(spec, "postAttachCommand", box.from_id(workspace.ctx["machine"]), box, dict(workflow.ctx))


def _run(spec: dict[str, Any], key: str, machine: Any, box: Any, ctx: dict[str, Any]) -> None:
    forms = [form for form in spec["hooks"].get(key, []) if form]
    if not forms:
        return
    env, _ = remote_environment(spec, ctx)
    resolve = container_env_resolver(container_env(spec, ctx), spec["config_file"])
    for form in forms:  # the machine runs them as the remote user, with remoteEnv, by default
        run_in_machine(machine, key, resolve(form), env=env, cwd=spec["folder"])


__all__ = ["attach_workspace", "create_workspace", "start_workspace"]

"""``devcontainer_workflow(path)``: a dev container configuration as an ordinary rig workflow.

Tasks, in order: ``initialize``, ``image``, ``feature:ID`` per feature, ``source``, ``onCreate``,
``updateContent``; each a cached task like any other, on the docker provider (scope name ``box``),
so a fork starts from their result. The workspace's hooks run ``postCreateCommand`` and
``postStartCommand`` at fork, ``postStartCommand`` at ``rig start`` and ``postAttachCommand`` at
``rig shell``. The node returned is a normal workflow: a project extends it with more tasks,
operations and workspace operations in its own ``rig_config.py``.
"""

from __future__ import annotations

import os
import sys
from functools import partial
from typing import Any

from rigcli.authoring.nodes import SequenceNode
from rigcli.authoring.project import workflow
from rigcli.authoring.values import define_provider
from rigcli.devcontainer.config import DevContainer, load_devcontainer
from rigcli.devcontainer.files import context_files, project_files, tree_digest
from rigcli.devcontainer.tasks import feature_task, hook_task, image_task, initialize_task, source_task
from rigcli.devcontainer.workspace import attach_workspace, create_workspace, start_workspace
from rigcli.errors import ConfigError
from rigcli.speed.parameters import plain_parameters

# Part of every task's cache key: a rig whose tasks do something else must not reuse older runs.
IMPLEMENTATION = "devcontainer-2"
PROVIDER = "box"


def devcontainer_workflow(path: str = ".devcontainer/devcontainer.json") -> SequenceNode:
    """The workflow of the configuration at ``path`` (relative to the directory of the calling
    ``rig_config.py``); refusals are raised here, as the config loads."""
    project_dir = _caller_dir()
    loaded = load_devcontainer(path, project_dir)
    keys = loaded.keys
    network = str(loaded.options.get("network") or "default")
    users = {"container_user": keys.container_user, "remote_user": keys.remote_user}
    app = workflow(loaded.workflow, providers={PROVIDER: define_provider("docker", network=network)})
    node = app.sequence(loaded.workflow)
    node = _task(node, "initialize", initialize_task, {"command": keys.initialize_command, "folder": project_dir})
    node = _task(node, "image", image_task, _image_spec(loaded))
    for feature in loaded.features:
        spec = {"feature": dict(feature), "network": network, **users}
        node = _task(node, f"feature:{feature['id']}", feature_task, spec)
    source = {"folder": loaded.workspace_folder, "project_dir": project_dir, "network": network, **users}
    source["digest"] = tree_digest(project_dir, _without_config(loaded, project_dir, project_files(project_dir)))
    node = _task(node, "source", source_task, source)
    base = _run_spec(loaded)
    for name, key in (("onCreate", "onCreateCommand"), ("updateContent", "updateContentCommand")):
        node = _task(node, name, hook_task, {**base, "key": key, "forms": _forms(loaded, key)})
    hooks = {key: _forms(loaded, key) for key in ("postCreateCommand", "postStartCommand", "postAttachCommand")}
    workspace = {**base, "hooks": hooks, "override_command": keys.override_command}
    workspace["host_requirements"] = _host_requirements(loaded)
    return node.workspace(
        create=partial(create_workspace, workspace),
        on_start=partial(start_workspace, workspace),
        on_attach=partial(attach_workspace, workspace),
        **_ports_argument(node, declared_ports(loaded)),
    )


def declared_ports(loaded: DevContainer) -> list[dict[str, Any]]:
    """``forwardPorts`` with their ``portsAttributes``, as rig's ports: ``{"port", "label", "protocol"}``
    (a port given as ``host:port`` keeps its number; label "" and protocol "http" unless said)."""
    found: list[dict[str, Any]] = []
    for item in loaded.keys.forward_ports:
        number = int(str(item).rsplit(":", 1)[-1]) if str(item).rsplit(":", 1)[-1].isdigit() else None
        if number is None:
            raise ConfigError(f"{loaded.config_file}: forwardPorts entry {item!r} is not a port number")
        attributes = loaded.keys.ports_attributes.get(str(item)) or loaded.keys.ports_attributes.get(str(number))
        attributes = attributes if isinstance(attributes, dict) else {}
        label, protocol = str(attributes.get("label") or ""), str(attributes.get("protocol") or "http")
        found.append({"port": number, "label": label, "protocol": protocol})
    return found


def _ports_argument(node: SequenceNode, ports: list[dict[str, Any]]) -> dict[str, Any]:
    """``ports=`` for ``workspace(...)`` where this rig's DSL takes it (the workspace's declared ports)."""

    parameters = plain_parameters(type(node).workspace) or ()
    return {"ports": ports} if ports and any(name == "ports" for name, _, _ in parameters) else {}


def _task(node: SequenceNode, name: str, handler: Any, spec: dict[str, Any]) -> SequenceNode:
    return node.task(name, partial(handler, spec), version=IMPLEMENTATION)


def _image_spec(loaded: DevContainer) -> dict[str, Any]:
    keys = loaded.keys
    spec: dict[str, Any] = {"host_requirements": _host_requirements(loaded)}
    if keys.image:
        spec["image"] = keys.image
        return spec
    assert keys.dockerfile is not None
    context_dir = os.path.normpath(os.path.join(loaded.config_dir, keys.build_context))
    dockerfile = os.path.normpath(os.path.join(loaded.config_dir, keys.dockerfile))
    if not os.path.isfile(dockerfile):
        raise ConfigError(f"{loaded.config_file}: build.dockerfile {keys.dockerfile} does not exist ({dockerfile})")
    files = _without_config(loaded, context_dir, context_files(context_dir))
    inside = os.path.relpath(dockerfile, context_dir)
    digest = tree_digest(context_dir, files) + tree_digest(os.path.dirname(dockerfile), [os.path.basename(dockerfile)])
    if inside.startswith(".."):
        raise ConfigError(
            f"{loaded.config_file}: the Dockerfile {dockerfile} is outside the build context {context_dir}"
        )
    build = keys.build or {}
    spec["build"] = {
        "context_dir": context_dir,
        "dockerfile": inside.replace(os.sep, "/"),
        "args": dict(build.get("args") or {}),
        "target": build.get("target"),
        "digest": digest,
    }
    return spec


def _without_config(loaded: DevContainer, root: str, files: list[str]) -> list[str]:
    """``files`` less the configuration itself: its keys are in the tasks' keys already, and an edit to
    a per-workspace hook must not make the image or the source pending (the file is still copied)."""
    own = os.path.relpath(loaded.config_file, root).replace(os.sep, "/")
    return [path for path in files if path != own]


def _run_spec(loaded: DevContainer) -> dict[str, Any]:
    keys = loaded.keys
    return {
        "options": dict(loaded.options),
        "remote_env": dict(keys.remote_env),
        "remote_user": keys.remote_user,
        "container_user": keys.container_user,
        "folder": loaded.workspace_folder,
        "config_file": loaded.config_file,
    }


def _forms(loaded: DevContainer, key: str) -> list[Any]:
    """The hook's commands: each feature's (in install order), then the configuration's own."""
    found = [feature["hooks"][key] for feature in loaded.features if feature["hooks"].get(key)]
    own = loaded.keys.hook(key)
    return [*found, own] if own else found


def _host_requirements(loaded: DevContainer) -> dict[str, Any] | None:
    return loaded.keys.host_requirements


def _caller_dir() -> str:
    """The directory of the ``rig_config.py`` that called (its ``__file__``), else the working directory."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame = frame.f_back  # type: ignore[assignment]
    file = frame.f_globals.get("__file__") if frame is not None else None
    return os.path.dirname(os.path.realpath(file)) if isinstance(file, str) else os.getcwd()


__all__ = ["IMPLEMENTATION", "declared_ports", "devcontainer_workflow"]

"""The rig_config.py files `rig init` writes: the local provider (the default, it runs offline straight
away) or docker (`--template docker`, a local image, never pulled)."""

from __future__ import annotations

from rigcli.layout import STATE_DIR

STARTER_CONFIG = '''\
"""This project's rig workflow.

`rig apply` prepares a machine once and caches the result; `rig fork NAME` copies the prepared
machine into a workspace in seconds; `rig exec NAME -- ls -la` runs a command in it and `rig shell NAME`
opens a shell there (rig's own commands: each exits with the program's exit code). `rig op NAME show`
runs this project's own operation, below.

The `local` provider keeps machines as plain directories under .rig/ with NO isolation: commands
run as you, on this host. Use define_provider("docker", ...) when you want containers.
"""

import shlex

from pydantic import BaseModel

from rigcli import Arg, define_provider, workflow

app = workflow("dev", providers={"box": define_provider("local")})


def prepare(step, box):
    machine = box.create_machine()
    try:
        machine.exec("mkdir -p src && echo 'hello from rig' > src/README", name="prepare")
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()  # the snapshot holds the files; the build machine would only take up space


def create(workflow, workspace, box):
    machine = box.from_snapshot(workflow.ctx["base"])
    return {"machine": machine.id, "path": machine.path}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])  # safe to retry: a machine already gone is fine


class ShowInput(BaseModel):
    path: str = Arg("src/README", position=0, description="file to print, relative to the workspace")


def show(workspace, box, input):
    result = box.from_id(workspace.ctx["machine"]).exec(f"cat {shlex.quote(input.path)}", name="show")
    return {"path": input.path, "text": result.stdout}


workflows = (
    app.sequence("dev")
    .task("prepare", prepare)
    .workspace(create=create, remove=remove)
    .workspace_operation("show", run=show, input=ShowInput, description="Print a file of the workspace")
)
'''

# The docker template's image: one already on the daemon; rig never pulls.
DOCKER_IMAGE = "busybox"

STARTER_DOCKER_CONFIG = f'''\
"""This project's rig workflow, in containers.

`rig apply` prepares a container once and commits it as an image; `rig fork NAME` starts a
container per workspace from it; `rig exec NAME -- ls -la` runs a command in it and `rig shell NAME`
opens a shell there (rig's own commands: each exits with the program's exit code). `rig op NAME show`
runs this project's own operation, below.

The image is a LOCAL one: rig never pulls. It is RIG_DOCKER_IMAGE, or {DOCKER_IMAGE}: have it on
your daemon first (`docker pull {DOCKER_IMAGE}`, or `docker images` to pick one you have).
Containers get no network unless you pass network=... to define_provider.
"""

import shlex

from pydantic import BaseModel

from rigcli import Arg, define_provider, env, workflow

app = workflow("dev", providers={{"box": define_provider("docker", image=env("RIG_DOCKER_IMAGE", "{DOCKER_IMAGE}"))}})


def prepare(step, box):
    machine = box.create_machine()
    try:
        machine.exec("mkdir -p src && echo 'hello from rig' > src/README", name="prepare")
        return {{"ctx": {{"base": machine.snapshot_ref()}}}}
    finally:
        machine.delete()  # the committed image holds the files


def create(workflow, workspace, box):
    machine = box.from_snapshot(workflow.ctx["base"])
    return {{"machine": machine.id}}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])  # safe to retry: a container already gone is fine


class ShowInput(BaseModel):
    path: str = Arg("src/README", position=0, description="file to print, relative to the workspace")


def show(workspace, box, input):
    result = box.from_id(workspace.ctx["machine"]).exec(f"cat {{shlex.quote(input.path)}}", name="show")
    return {{"path": input.path, "text": result.stdout}}


workflows = (
    app.sequence("dev")
    .task("prepare", prepare)
    .workspace(create=create, remove=remove)
    .workspace_operation("show", run=show, input=ShowInput, description="Print a file of the workspace")
)
'''

# `rig init --template NAME`: the config it writes, and what init says about it.
TEMPLATES = {
    "local": (STARTER_CONFIG, "local provider: machines are directories under .rig/, no isolation"),
    "docker": (
        STARTER_DOCKER_CONFIG,
        f"docker provider: uses the LOCAL image {DOCKER_IMAGE} (or $RIG_DOCKER_IMAGE) and never pulls it; "
        f"run `docker pull {DOCKER_IMAGE}` first if `docker images` does not list it",
    ),
}

GITIGNORE_RULE = f"{STATE_DIR}/"

__all__ = ["DOCKER_IMAGE", "GITIGNORE_RULE", "STARTER_CONFIG", "STARTER_DOCKER_CONFIG", "TEMPLATES"]

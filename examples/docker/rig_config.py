"""The quickstart story in containers: prepare an image, commit it, fork a container per workspace.

Needs a running Docker daemon (DOCKER_HOST is honoured) and the image named by RIG_DOCKER_IMAGE
(default rig/base:busybox, which no registry has: build it first, see README.md). rig never pulls.
"""

from __future__ import annotations

from rigcli import define_provider, env, workflow

GREET_TOOL = """#!/bin/sh
# A stand-in for the tooling a real project installs (linters, CLIs, SDKs).
echo "hello, ${1:-world}"
"""

HELLO_SH = """#!/bin/sh
greet() { echo "hello, $1"; }
"""

TEST_SH = """#!/bin/sh
. ./hello.sh
[ "$(greet rig)" = "hello, rig" ] || { echo "greet is broken" >&2; exit 1; }
echo "tests passed"
"""

app = workflow(
    "containers",
    providers={
        "box": define_provider("docker", image=env("RIG_DOCKER_IMAGE", "rig/base:busybox")),
    },
)


def install_tooling(box):
    """Lay down the tools every workspace needs, then commit the container as an image."""
    machine = box.create_machine()
    try:
        machine.write_text("/usr/local/bin/greet", GREET_TOOL)
        machine.exec("chmod +x /usr/local/bin/greet && greet tooling", name="check greet tool")
        return {"ctx": {"tooling": machine.snapshot_ref()}}
    finally:
        machine.delete()


def install_project(step, box):
    """Start from the tooling image, add the project, run its checks, commit the result."""
    machine = box.from_snapshot(step.ctx["tooling"])
    try:
        machine.write_text("app/hello.sh", HELLO_SH)
        machine.write_text("app/test.sh", TEST_SH)
        machine.exec("cd app && sh test.sh", name="run project checks")
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create_workspace(workflow, box):
    machine = box.from_snapshot(workflow.ctx["base"])
    return {"machine": machine.id, "container": machine.container_id, "path": machine.path}


def remove_workspace(workspace, box):
    # Safe to run twice: a container that is already gone is not an error.
    box.delete_machine(workspace.ctx["machine"])


def workspace_path(workspace):
    return workspace.ctx["path"]


def workspace_status(workspace, box):
    machine = box.from_id(workspace.ctx["machine"])
    result = machine.exec('greet "$(hostname)" && cd app && sh test.sh', name="status")
    return {"machine": machine.id, "output": result.stdout}


workflows = (
    app.sequence("root")
    .task("tooling", install_tooling)
    .task("project", install_project)
    .workspace(create=create_workspace, remove=remove_workspace)
    .workspace_operation("path", run=workspace_path, title="Print the workspace directory in the container")
    .workspace_operation("status", run=workspace_status, title="Run the project checks in the container")
)

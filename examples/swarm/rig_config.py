"""Machines on a Docker Swarm: the build runs as a service somewhere on the cluster, its snapshot goes to
the registry, and each workspace is a service on whichever node has room.

Point it at the cluster with environment variables (README.md): RIG_SWARM_REGISTRY (required: the
registry every node pulls from), RIG_SWARM_HOST (a manager; default DOCKER_HOST), RIG_SWARM_NODES
(JSON: node name or address -> that node's own Docker endpoint, for exec on the node that runs a
task), RIG_SWARM_CONSTRAINTS (comma-separated placement constraints) and RIG_SWARM_IMAGE (default
<registry>/rig/base:busybox). rig never pulls from anywhere but the registry.
"""

from __future__ import annotations

import json
import os

from rigcli import define_provider, env, workflow

TOOL = """#!/bin/sh
# A stand-in for the toolchain a real project installs once and forks many times.
echo "toolchain ready on $(hostname)"
"""

CHECK = """#!/bin/sh
[ "$(cat /workspace/app/VERSION)" = 1 ] || { echo "the project is not there" >&2; exit 1; }
echo "checks passed"
"""


def _image() -> str | None:
    registry = os.environ.get("RIG_SWARM_REGISTRY", "")
    return os.environ.get("RIG_SWARM_IMAGE") or (f"{registry}/rig/base:busybox" if registry else None)


def _nodes() -> dict[str, str]:
    return json.loads(os.environ.get("RIG_SWARM_NODES") or "{}")


def _constraints() -> list[str]:
    return [item.strip() for item in os.environ.get("RIG_SWARM_CONSTRAINTS", "").split(",") if item.strip()]


app = workflow(
    "cluster",
    providers={
        "box": define_provider(
            "swarm",
            host=env("RIG_SWARM_HOST", ""),
            registry=env("RIG_SWARM_REGISTRY", ""),
            nodes=_nodes,
            constraints=_constraints,
            image=_image,
            resources={"reservations": {"memory": "16M"}},
        ),
    },
)


def toolchain(box):
    """A build machine on the cluster: install the tool, snapshot it (committed on its node, pushed)."""
    machine = box.create_machine()
    try:
        machine.write_text("/usr/local/bin/toolchain", TOOL)
        machine.exec("chmod +x /usr/local/bin/toolchain && toolchain", name="install toolchain")
        return {"ctx": {"toolchain": machine.snapshot_ref()}}
    finally:
        machine.delete()


def project(step, box):
    """From the toolchain snapshot, on whichever node the swarm picks: add the project, check it, snapshot."""
    machine = box.from_snapshot(step.ctx["toolchain"])
    try:
        machine.write_text("app/VERSION", "1\n")
        machine.write_text("app/check.sh", CHECK)
        machine.exec("sh app/check.sh", name="project checks")
        return {"ctx": {**step.ctx, "base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create_workspace(workflow, box):
    machine = box.from_snapshot(workflow.ctx["base"])
    return {"machine": machine.id, "service": machine.service_id, "node": machine.node}


def remove_workspace(workspace, box):
    box.delete_machine(workspace.ctx["machine"])  # safe twice: a service already gone is fine


def where(workspace, box):
    """Which node runs the workspace, and the toolchain's answer from inside its container there."""
    machine = box.from_id(workspace.ctx["machine"])
    result = machine.exec("toolchain && sh app/check.sh", name="where")
    return {"node": machine.node, "container": machine.container_id, "output": result.stdout}


workflows = (
    app.sequence("root")
    .task("toolchain", toolchain)
    .task("project", project)
    .workspace(create=create_workspace, remove=remove_workspace)
    .workspace_operation("where", run=where, title="Show the node and run the toolchain in the workspace")
)

"""Machines on a shared build host: rig runs here, the containers run on another host's Docker daemon.

Point the provider at the daemon the way you point the docker CLI at it. BUILD_HOST and
BUILD_TLS_VERIFY below win when set; left empty, DOCKER_HOST and DOCKER_TLS_VERIFY apply, and
without those the local socket. The TLS certificates come from DOCKER_CERT_PATH (default
~/.docker) rather than from this file: provider config is part of every task's cache key, and
certificates are credentials, not identity, so renewing them must not rebuild anything. rig
never pulls: the image must already be on that daemon.
"""

from __future__ import annotations

from rigcli import define_provider, env, workflow

app = workflow(
    "build-host",
    providers={
        "box": define_provider(
            "docker",
            image=env("RIG_DOCKER_IMAGE", "rig/base:busybox"),
            host=env("BUILD_HOST", ""),  # ssh://me@build-box, tcp://build-box:2376 or unix:///path
            tls_verify=env("BUILD_TLS_VERIFY", ""),  # "1" for tcp:// with mutual TLS
        ),
    },
)


def prepare(box):
    """Install a stand-in toolchain in a container on the build host and commit it there as an image."""
    machine = box.create_machine()
    try:
        # Uploaded through the Engine API: nothing has to be shared between this machine and the build host.
        machine.write_text("/usr/local/bin/toolchain", '#!/bin/sh\necho "toolchain ready on $(hostname)"\n')
        machine.exec("chmod +x /usr/local/bin/toolchain && toolchain", name="install toolchain")
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create_workspace(workflow, box):
    machine = box.from_snapshot(workflow.ctx["base"])
    return {"machine": machine.id, "container": machine.container_id}


def remove_workspace(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


def where(workspace, box):
    """Which daemon the workspace lives on, and its toolchain's answer from inside the container."""
    machine = box.from_id(workspace.ctx["machine"])
    result = machine.exec("toolchain", name="toolchain")
    return {"daemon": box.client.host, "container": machine.container_id, "output": result.stdout}


workflows = (
    app.sequence("root")
    .task("prepare", prepare)
    .workspace(create=create_workspace, remove=remove_workspace)
    .workspace_operation("where", run=where, title="Show the daemon and run the toolchain in the container")
)

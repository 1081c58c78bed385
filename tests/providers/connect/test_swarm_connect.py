"""A swarm workspace whose task runs on the worker node, reached through that node's daemon: the real ssh
(exec, exit status, stdin, scp), `rig cp` both ways, and `rig forward` to a server inside the task."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from swarm_cluster import SwarmCluster

from tests.providers.connect.conftest import Reached, _reach
from tests.providers.connect.test_forward import Forwarding, curl, free_port

CONFIG = """
import json
import os

from rigcli import define_provider, env, workflow

app = workflow(
    "cluster",
    providers={
        "box": define_provider(
            "swarm",
            host=env("RIG_SWARM_HOST", ""),
            registry=env("RIG_SWARM_REGISTRY", ""),
            nodes=lambda: json.loads(os.environ["RIG_SWARM_NODES"]),
            constraints=["node.role==worker"],
            image=env("RIG_SWARM_IMAGE", ""),
        )
    },
)


def build(step, box):
    machine = box.create_machine()
    try:
        machine.exec("echo hello > /greeting.txt")
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create(workflow, box):
    return {"machine": box.from_snapshot(workflow.ctx["base"]).id}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


workflows = app.sequence("cluster").task("build", build).workspace(create=create, remove=remove, ports=[8080])
"""


@pytest.fixture(scope="module")
def on_worker(tmp_path_factory: pytest.TempPathFactory, swarm: SwarmCluster) -> Iterator[Reached]:
    env = {
        "RIG_SWARM_HOST": swarm.manager,
        "RIG_SWARM_REGISTRY": swarm.registry,
        "RIG_SWARM_NODES": json.dumps(swarm.nodes),
        "RIG_SWARM_IMAGE": swarm.image,
    }
    tmp = tmp_path_factory.mktemp("swarm")
    try:
        for reached in _reach(tmp, "swarm", CONFIG, dict(env)):
            reached.declared = 8080
            yield reached
    finally:
        swarm.clean(tmp / "proj")


def test_ssh_exec_stdin_and_scp_through_the_workers_daemon(on_worker: Reached, tmp_path: Path) -> None:
    reached = on_worker
    done = reached.ssh(reached.alias, "cat /greeting.txt; echo err >&2; exit 6")
    assert (done.returncode, done.stdout) == (6, b"hello\n"), done.stderr
    data = os.urandom(300_000)
    assert reached.ssh(reached.alias, "cat", input=data).stdout == data
    source = tmp_path / "up.bin"
    source.write_bytes(data)
    up = subprocess.run(
        reached.ssh_argv(str(source), f"{reached.alias}:/tmp/up.bin", tool="scp"), env=reached.env, timeout=60
    )
    assert up.returncode == 0
    assert reached.ssh(reached.alias, "md5sum < /tmp/up.bin").stdout.split()[0].decode() == _md5(data)


def _md5(data: bytes) -> str:
    import hashlib

    return hashlib.md5(data).hexdigest()


def test_cp_both_ways(on_worker: Reached, tmp_path: Path) -> None:
    reached = on_worker
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "run.sh").write_text("#!/bin/sh\n")
    (tree / "sub" / "run.sh").chmod(0o750)
    (tree / "link").symlink_to("sub/run.sh")
    done = reached.rig("cp", str(tree), "dev:/tmp")
    assert done.returncode == 0, done.stderr
    assert reached.ssh(reached.alias, "stat -c '%a' /tmp/tree/sub/run.sh; readlink /tmp/tree/link").stdout == (
        b"750\nsub/run.sh\n"
    )
    back = reached.rig("cp", "dev:/tmp/tree", str(tmp_path / "back"))
    assert back.returncode == 0, back.stderr
    assert os.readlink(tmp_path / "back" / "link") == "sub/run.sh"
    assert (tmp_path / "back" / "sub" / "run.sh").stat().st_mode & 0o777 == 0o750
    assert reached.rig("cp", "dev:/greeting.txt", str(tmp_path / "g.txt")).returncode == 0
    assert (tmp_path / "g.txt").read_text() == "hello\n"


def test_forward_to_a_server_in_the_task(on_worker: Reached) -> None:
    reached = on_worker
    assert reached.ssh(reached.alias, "httpd -p 127.0.0.1:8080 -h /").returncode == 0
    local = free_port()
    forwarding = Forwarding(reached, f"{local}:8080", "--json")
    try:
        (line,) = forwarding.lines(1)
        assert json.loads(line)["url"] == f"http://127.0.0.1:{local}"
        assert curl(f"http://127.0.0.1:{local}/greeting.txt").stdout == b"hello\n"
    finally:
        code, err = forwarding.stop()
        reached.ssh(reached.alias, "kill $(pidof httpd)")
    assert code == 143, err
    listed = json.loads(reached.rig("ls", "--json").stdout)["workflows"][0]["workspaces"][0]
    assert (listed["ssh"], listed["ports"]) == ("dev.proj.rig", [{"port": 8080, "label": "", "protocol": "http"}])

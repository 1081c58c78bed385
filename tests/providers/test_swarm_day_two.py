"""A swarm workspace after fork, through the installed ``rig``, with its task on the worker node: live
status as the cluster changes it, stop and start, operations on a stopped workspace, exec and a real
terminal through the task's own node, and the exec of a killed rig ended by the next command or gc."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import closing, suppress
from pathlib import Path
from typing import Any

import pexpect
import pytest
from e2e_support import RIG, Rig, rig_env
from swarm_cluster import API, SwarmCluster, exec_output

from tests.helpers import wait_for

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
            constraints=lambda: [item for item in os.environ.get("RIG_SWARM_CONSTRAINTS", "").split(",") if item],
            image=env("RIG_SWARM_IMAGE", ""),
        )
    },
)


def build(step, box):
    machine = box.create_machine()
    try:
        machine.write_text("app/VERSION", "1\\n")
        return {"ctx": {"base": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create(workflow, box):
    machine = box.from_snapshot(workflow.ctx["base"])
    return {"machine": machine.id, "service": machine.service_id, "node": machine.node}


def remove(workspace, box):
    box.delete_machine(workspace.ctx["machine"])


def quick(workspace, box):
    return box.from_id(workspace.ctx["machine"]).exec("cat app/VERSION", name="quick").stdout.strip()


def long(workspace, box):
    box.from_id(workspace.ctx["machine"]).exec("exec sleep 300", name="long")


workflows = (
    app.sequence("cluster")
    .task("build", build)
    .workspace(create=create, remove=remove)
    .workspace_operation("quick", run=quick)
    .workspace_operation("long", run=long)
)
"""


class OnWorker:
    """The project, forked as ``dev`` with every service constrained to the swarm's worker node."""

    def __init__(self, rig: Rig, swarm: SwarmCluster, worker: str) -> None:
        self.rig, self.swarm, self.worker = rig, swarm, worker

    def live(self) -> dict[str, str]:
        (workspace,) = self.rig.json("ls")["workflows"][0]["workspaces"]
        assert isinstance(workspace["live"], dict)
        return workspace["live"]

    def service(self) -> dict[str, Any]:
        (workspace,) = self.rig.json("ls", "--no-probe")["workflows"][0]["workspaces"]
        response = self.swarm.api.get(f"{API}/services/{workspace['ctx']['service']}")
        assert response.status_code == 200, response.text
        return dict(response.json())

    def task_container(self) -> str:
        """The container of the service's running task on the worker (the manager cannot see it)."""
        filters = json.dumps({"service": [self.service()["ID"]], "desired-state": ["running"]})
        tasks = self.swarm.api.get(f"{API}/tasks", params={"filters": filters}).json()
        running = [task for task in tasks if task["Status"]["State"] == "running"]
        assert len(running) == 1, tasks
        return str(running[0]["Status"]["ContainerStatus"]["ContainerID"])

    def run_in_task(self, command: str) -> tuple[int, str]:
        return exec_output(self.swarm.node_api(self.worker), self.task_container(), ["sh", "-c", command])

    def long_commands(self) -> list[str]:
        """Processes in the task's container running the operation's ``sleep 300``."""
        _, listing = self.run_in_task(
            "for p in /proc/[0-9]*; do printf '%s ' ${p#/proc/}; tr '\\0' ' ' < $p/cmdline; echo; done"
        )
        return [line.strip() for line in listing.splitlines() if line.strip().endswith("sleep 300")]


def forked(tmp_path: Path, swarm: SwarmCluster, constraints: str) -> Iterator[Rig]:
    """The project forked as ``dev`` (``constraints`` on every service); what it made removed after."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "rig_config.py").write_text(CONFIG)
    env = rig_env(
        tmp_path,
        RIG_SWARM_HOST=swarm.manager,
        RIG_SWARM_REGISTRY=swarm.registry,
        RIG_SWARM_NODES=json.dumps(swarm.nodes),
        RIG_SWARM_IMAGE=swarm.image,
        RIG_SWARM_CONSTRAINTS=constraints,
    )
    rig = Rig(project, env)
    try:
        rig.json("fork", "dev")
        yield rig
    finally:
        swarm.clean(project)


@pytest.fixture
def on_worker(tmp_path: Path, swarm: SwarmCluster) -> Iterator[OnWorker]:
    worker = next(hostname for hostname, role in swarm.node_roles().items() if role == "worker")
    for rig in forked(tmp_path, swarm, "node.role==worker"):
        yield OnWorker(rig, swarm, worker)


@pytest.fixture
def anywhere(tmp_path: Path, swarm: SwarmCluster) -> Iterator[Rig]:
    yield from forked(tmp_path, swarm, "")


def test_ls_stop_start_and_a_service_removed_by_hand_then_rm_needs_no_force(on_worker: OnWorker) -> None:
    rig, worker = on_worker.rig, on_worker.worker
    assert on_worker.live() == {"state": "running", "detail": f"on {worker}"}
    assert rig.run("ls").stdout.splitlines()[-1].split()[-1] == "running"  # the table shows a detail when not running
    assert rig.run("exec", "dev", "--", "sh", "-c", "echo kept > app/NOTE").returncode == 0

    done = rig.run("stop", "dev")
    assert done.stderr == "stopped dev\n"
    assert on_worker.service()["Spec"]["Mode"]["Replicated"]["Replicas"] == 0
    assert on_worker.live() == {"state": "stopped", "detail": "scaled to 0"}
    assert rig.run("ls").stdout.splitlines()[-1].endswith("stopped (scaled to 0)")
    for argv in (["op", "dev", "quick"], ["exec", "dev", "--", "true"]):
        refused = rig.run(*argv, check=False)
        assert refused.returncode == 1, refused
        (line,) = refused.stderr.splitlines()
        assert line == "error: Workspace dev is stopped (scaled to 0); run rig start dev, or pass --start"

    assert rig.run("start", "dev").stderr == "started dev\n"
    assert on_worker.live() == {"state": "running", "detail": f"on {worker}"}
    kept = rig.run("exec", "dev", "--", "cat", "app/NOTE", "app/VERSION")
    assert kept.stdout == "kept\n1\n"  # the stopped machine's files came back with its new task

    rig.run("stop", "--all")
    assert on_worker.live()["state"] == "stopped"
    assert rig.json("op", "dev", "quick", "--start") == "1"
    assert on_worker.live() == {"state": "running", "detail": f"on {worker}"}

    service = on_worker.service()
    assert on_worker.swarm.api.delete(f"{API}/services/{service['ID']}").status_code == 200
    assert on_worker.live() == {"state": "missing", "detail": "its service is gone"}
    refused = rig.run("op", "dev", "quick", check=False)
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[-1] == (
        "error: Workspace dev is missing: its service is gone; rig rm dev forgets it"
    )
    assert rig.run("rm", "dev", "--yes", check=False).returncode == 0
    assert rig.json("ls")["workflows"][0]["workspaces"] == []


def test_exec_passes_the_exit_code_and_streams_of_a_task_on_the_worker(on_worker: OnWorker) -> None:
    rig = on_worker.rig
    assert rig.run("exec", "dev", "--", "sh", "-c", "exit 3", check=False).returncode == 3
    both = rig.run("exec", "dev", "--", "sh", "-c", "echo out; echo err >&2; hostname")
    container = on_worker.task_container()
    assert (both.stdout, both.stderr) == (f"out\n{container[:12]}\n", "err\n")
    assert rig.run("exec", "dev", "--", "sh", "-c", "kill -INT $$", check=False).returncode == 130
    piped = subprocess.run(
        [RIG, "exec", "dev", "--", "wc", "-l"],
        cwd=rig.project,
        env=rig.env,
        input="".join(f"line {number}\n" for number in range(5000)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (piped.returncode, piped.stdout.strip()) == (0, "5000")


def test_shell_in_a_terminal_runs_in_the_task_on_the_worker_and_exits_with_its_code(on_worker: OnWorker) -> None:
    rig = on_worker.rig
    container = on_worker.task_container()
    child = pexpect.spawn(
        RIG, ["shell", "dev"], cwd=str(rig.project), env={**rig.env, "TERM": "xterm"}, dimensions=(31, 97), timeout=60
    )
    try:
        child.sendline("export PS1='in-task$ '")
        child.expect_exact("in-task$ ")
        # The docker CLI (`docker exec -t`, which runs the shell on the task's node) sizes the pty
        # just after the shell starts, as it does for `docker exec -it` by hand: a command typed at
        # once may still find no size (busybox: "stty: standard input"). Ask until the size lands.
        for _ in range(50):
            child.sendline("stty size")
            if child.expect_exact(["31 97\r\n", "stty: standard input\r\n"]) == 0:
                break
            time.sleep(0.1)
        child.expect_exact("in-task$ ")
        child.sendline("stty size; hostname; cat app/VERSION")
        child.expect_exact(f"31 97\r\n{container[:12]}\r\n1\r\n")
        child.sendline("exit 7")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 7


def _exec_sessions(project: Path) -> list[str]:
    with closing(sqlite3.connect(project / ".rig" / "state.sqlite")) as db:
        query = "SELECT id FROM effects WHERE kind = 'exec' AND status != 'deleted'"
        return [str(row[0]) for row in db.execute(query)]


def _kill_long_operation(on_worker: OnWorker) -> None:
    """Start `rig op dev long`, wait until its command runs in the task's container, SIGKILL rig's group."""
    process = subprocess.Popen(
        [RIG, "op", "dev", "long"],
        cwd=on_worker.rig.project,
        env=on_worker.rig.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(lambda: bool(on_worker.long_commands()), "the operation's command in the task's container", 120)
        os.killpg(process.pid, signal.SIGKILL)
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    assert on_worker.long_commands(), "the command died with rig: the test would prove nothing"
    assert len(_exec_sessions(on_worker.rig.project)) == 1  # journaled before it started, left by the killed rig


def test_gc_ends_the_exec_of_a_killed_rig_on_the_worker_and_keeps_the_workspace(on_worker: OnWorker) -> None:
    container = on_worker.task_container()
    _kill_long_operation(on_worker)

    collected = on_worker.rig.json("gc")

    assert [item["kind"] for item in collected["removed"]] == ["exec"]
    assert on_worker.long_commands() == []
    assert on_worker.task_container() == container  # the workspace's machine stays
    assert _exec_sessions(on_worker.rig.project) == []


def test_the_next_command_ends_the_exec_of_a_killed_rig_on_the_worker(on_worker: OnWorker) -> None:
    _kill_long_operation(on_worker)

    assert on_worker.rig.json("op", "dev", "quick") == "1"
    assert on_worker.long_commands() == []
    assert _exec_sessions(on_worker.rig.project) == []


def test_fork_count_reaches_both_nodes_from_copies_a_live_workspace_and_replace_remakes_one(
    anywhere: Rig, swarm: SwarmCluster
) -> None:
    rig = anywhere
    rig.run("exec", "dev", "--", "sh", "-c", "echo live > app/NOTE")

    rig.run("fork", "ws", "--count", "6")  # as many as issue 20 asks to spread
    names = [f"ws-{number}" for number in range(1, 7)]
    listed = {ws["name"]: ws for ws in rig.json("ls")["workflows"][0]["workspaces"]}
    assert set(listed) == {"dev", *names}
    assert {listed[name]["live"]["state"] for name in names} == {"running"}
    reached = {listed[name]["live"]["detail"] for name in names}
    assert reached == {f"on {hostname}" for hostname in swarm.nodes}, f"6 forks did not reach both nodes: {reached}"
    assert {rig.run("exec", name, "--", "cat", "app/VERSION").stdout for name in names} == {"1\n"}

    rig.run("fork", "copy", "--from", "dev")
    assert rig.run("exec", "copy", "--", "cat", "app/NOTE").stdout == "live\n"  # the live machine's files
    live = {ws["name"]: ws["live"]["state"] for ws in rig.json("ls")["workflows"][0]["workspaces"]}
    assert live["dev"] == live["copy"] == "running"  # the source runs on after its snapshot
    assert rig.run("exec", "dev", "--", "cat", "app/NOTE").stdout == "live\n"

    before = {ws["name"]: ws["ctx"]["service"] for ws in rig.json("ls")["workflows"][0]["workspaces"]}
    refused = rig.run("fork", "dev", "--replace", check=False)  # it would lose what was written in it
    assert refused.returncode == 1 and "app/NOTE" in refused.stderr, refused.stderr
    rig.run("fork", "dev", "--replace", "--yes")
    (dev,) = [ws for ws in rig.json("ls")["workflows"][0]["workspaces"] if ws["name"] == "dev"]
    assert dev["ctx"]["service"] != before["dev"] and dev["live"]["state"] == "running"
    assert swarm.api.get(f"{API}/services/{before['dev']}").status_code == 404  # the old one removed last
    assert rig.run("exec", "dev", "--", "ls", "app").stdout == "VERSION\n"  # remade from the snapshot

    for name in ("copy", *names, "dev"):
        assert rig.json("rm", name, "--yes")["name"] == name
    rig.json("cache", "clear", "--yes")
    rig.json("gc")
    assert swarm.wait_gone(rig.project) == []  # services, task containers and registry tags, --from's too


def _stop_saved_on_node(on_worker: OnWorker) -> bool:
    labels = json.dumps({"label": [f"rig.project={on_worker.rig.project}", "rig.kind=stopped"]})
    return bool(on_worker.swarm.node_api(on_worker.worker).get(f"{API}/images/json", params={"filters": labels}).json())


def _stop_pushed(on_worker: OnWorker) -> bool:
    return any(tag.endswith("-stopped") for tag in on_worker.swarm.registry_tags("rig/snapshot"))


def _scaled_to_zero(on_worker: OnWorker) -> bool:
    return on_worker.service()["Spec"]["Mode"]["Replicated"]["Replicas"] == 0


def test_stop_killed_at_each_step_is_finished_by_stop_and_start_and_leaves_nothing_after_rm_and_gc(
    on_worker: OnWorker,
) -> None:
    rig, swarm = on_worker.rig, on_worker.swarm
    landed: set[str] = set()
    # A fast machine can finish the stop before a step is seen: each step is tried again (each try
    # checked whole) until a kill lands inside the stop, at most three times.
    for marker in [step for step in (_stop_saved_on_node, _stop_pushed, _scaled_to_zero) for _ in range(3)]:
        if marker.__name__ in landed:
            continue
        rig.run("exec", "dev", "--", "sh", "-c", "echo kept > app/NOTE")
        process = subprocess.Popen(
            [RIG, "stop", "dev"],
            cwd=rig.project,
            env=rig.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        held: sqlite3.Connection | None = None
        try:
            if marker is not _stop_saved_on_node:
                # Once the container is saved, the state's write lock is taken: the stop goes on
                # pushing and scaling, then waits at its next journal write, so the later steps are
                # seen while it still runs, however fast the machine.
                saved = lambda running=process: _stop_saved_on_node(on_worker) or running.poll() is not None  # noqa: E731
                wait_for(saved, "the stop's save or its end", 120)
                held = sqlite3.connect(rig.project / ".rig" / "state.sqlite", timeout=30, isolation_level=None)
                held.execute("BEGIN IMMEDIATE")
            reached = lambda seen=marker, running=process: seen(on_worker) or running.poll() is not None  # noqa: E731
            wait_for(reached, f"{marker.__name__} or the stop's end", 120)
            if process.poll() is None:
                landed.add(marker.__name__)
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        finally:
            process.wait(timeout=30)
            if held is not None:
                held.execute("ROLLBACK")
                held.close()

        assert on_worker.live()["state"] in ("running", "stopped"), marker.__name__
        assert rig.run("stop", "dev").returncode == 0
        assert on_worker.live() == {"state": "stopped", "detail": "scaled to 0"}
        assert rig.run("start", "dev").stderr == "started dev\n"
        assert rig.run("exec", "dev", "--", "cat", "app/NOTE").stdout == "kept\n", marker.__name__

        rig.run("rm", "dev", "--yes")
        rig.json("cache", "clear", "--yes")  # the build's snapshot too: then nothing of the project is left
        rig.json("gc")
        assert swarm.wait_gone(rig.project) == [], marker.__name__  # service, task containers, saved tags
        assert swarm.node_images(rig.project) == {hostname: [] for hostname in swarm.nodes}, marker.__name__
        rig.json("fork", "dev")
    assert len(landed) >= 2, f"kills landed inside the stop only at {sorted(landed)} of its three steps"


def test_gc_removes_a_nodes_copy_of_a_saved_image_whose_service_and_tag_are_gone(on_worker: OnWorker) -> None:
    rig, swarm = on_worker.rig, on_worker.swarm
    rig.run("stop", "dev")
    rig.run("start", "dev")  # its new task runs from the saved image: the worker has a copy
    assert _stop_saved_on_node(on_worker)
    (saved,) = [tag for tag in swarm.registry_tags("rig/snapshot") if tag.endswith("-stopped")]
    # What a rig killed inside rm (or an older rig) leaves: no service, no tag, only the node's copy.
    assert swarm.api.delete(f"{API}/services/{on_worker.service()['ID']}").status_code == 200
    assert swarm.delete_registry_tag("rig/snapshot", saved)

    collected = rig.json("gc")

    assert [item["id"] for item in collected["removed"]] == [saved]
    assert not _stop_saved_on_node(on_worker)

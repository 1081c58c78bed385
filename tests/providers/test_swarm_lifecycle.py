"""A swarm machine after fork, by its journaled service: live state, stop and start, a program on rig's stdio."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import pexpect
import pytest
from provider_helpers import Harness
from swarm_cluster import API, SwarmCluster

from rigcli.provider_api import EffectEntry
from tests.helpers import wait_for

WORKER = "node.role==worker"


def service_entry(controller: Any, machine_id: str) -> EffectEntry:
    """The machine's effect as rm and gc find it (the shape the journal holds)."""
    [entry] = [entry for entry in controller.find_effects() if entry["id"] == machine_id]
    assert entry["kind"] == "service"
    return entry


def worker_name(swarm: SwarmCluster) -> str:
    return next(name for name, role in swarm.node_roles().items() if role == "worker")


def needs_docker_cli() -> None:
    if shutil.which("docker") is None:
        pytest.skip("the docker CLI runs programs in swarm machines, and it is not on PATH")


def test_live_states_say_running_where_stopped_or_gone_and_leave_snapshots_out(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness]
) -> None:
    box = swarm_on(constraints=[WORKER])
    controller, runtime = box.controller, box.runtime
    running, stopping, going = (runtime.create_machine() for _ in range(3))
    entries = [service_entry(controller, machine.id) for machine in (running, stopping, going)]
    snapshot = {"id": "a-snapshot", "kind": "image", "resource": {"snapshot_id": "a-snapshot"}}
    controller.stop(entries[1])
    assert swarm.api.delete(f"{API}/services/{going.id}").status_code == 200  # removed behind rig's back

    states = controller.live_states([*entries, snapshot])
    assert states == {
        running.id: ("running", f"on {worker_name(swarm)}"),
        stopping.id: ("stopped", "scaled to 0"),
        going.id: ("missing", "its service is gone"),
    }
    controller.start(entries[1])
    assert controller.live_states(entries[1:2]) == {stopping.id: ("running", f"on {worker_name(swarm)}")}
    assert controller.live_states([snapshot]) == {}


def test_a_machine_whose_program_ended_is_stopped_with_its_tasks_reason(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness]
) -> None:
    box = swarm_on()
    machine = box.runtime.create_machine()
    entry = service_entry(box.controller, machine.id)
    machine.exec("kill -TERM 1", check=False)  # the init ends the container's program: no restart (condition none)

    wait_for(lambda: box.controller.live_states([entry])[machine.id][0] == "stopped", "the machine stopped")
    state, detail = box.controller.live_states([entry])[machine.id]
    assert state == "stopped" and detail.startswith("task "), (
        detail
    )  # "task failed: task: non-zero exit (143)" or "task complete"


def test_live_states_are_unknown_with_why_when_the_manager_does_not_answer(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness], tmp_path: Any
) -> None:
    box = swarm_on(host=f"unix://{tmp_path}/no-manager.sock")
    entries: list[EffectEntry] = [
        {"id": name, "kind": "service", "resource": {"machine_id": name}} for name in ("rig-000000000001", "rig-2")
    ]
    states = box.controller.live_states(entries)
    assert set(states) == {"rig-000000000001", "rig-2"}
    for state, detail in states.values():
        assert state == "unknown"
        assert "no-manager.sock" in detail


def test_a_program_runs_in_the_tasks_container_through_its_own_node_with_its_exit_code(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness], capfd: pytest.CaptureFixture[str]
) -> None:
    needs_docker_cli()
    box = swarm_on(constraints=[WORKER], env={"FROM_CONFIG": "config"})
    controller, machine = box.controller, box.runtime.create_machine()
    entry = service_entry(controller, machine.id)
    script = 'echo "$GREETING $FROM_CONFIG from $(hostname) in $(pwd)"; echo to-stderr >&2; exit 7'
    capfd.readouterr()

    code = controller.attach(entry, ["sh", "-c", script], tty=False, env={"GREETING": "hello"}, cwd="/tmp")
    assert code == 7
    out, err = capfd.readouterr()
    assert f"hello config from {machine.container_id[:12]} in /tmp\n" in out
    assert "to-stderr" in err and "to-stderr" not in out

    # After a stop and a start the machine is another task's container, perhaps on another node: found anew.
    controller.stop(entry)
    controller.start(entry)
    assert controller.attach(entry, ["hostname"], tty=False, env={}, cwd=None) == 0
    moved = box.runtime.from_id(machine.id)
    assert moved.container_id != machine.container_id
    assert f"{moved.container_id[:12]}\n" in capfd.readouterr().out


def test_stdin_reaches_the_program_and_env_values_stay_off_the_command_line(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness]
) -> None:
    needs_docker_cli()
    from providers.swarm.lifecycle import exec_command

    box = swarm_on(constraints=[WORKER])
    machine = box.runtime.create_machine()
    command, env = exec_command(
        box.controller,
        machine.id,
        ["sh", "-c", 'tr a-z A-Z; echo "$TOKEN"'],
        tty=False,
        env={"TOKEN": "s3cret"},
        cwd=None,
    )
    assert not any("s3cret" in part for part in command)
    assert env["DOCKER_HOST"] == swarm.nodes[machine.node]  # the worker's own daemon, not the manager
    done = subprocess.run(command, env=env, input=b"piped in\n", capture_output=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, b"PIPED IN\ns3cret\n"), done.stderr


def test_a_login_shell_on_a_terminal_in_a_task_on_the_worker(
    swarm: SwarmCluster, swarm_on: Callable[..., Harness]
) -> None:
    needs_docker_cli()
    from providers.swarm.lifecycle import exec_command

    box = swarm_on(constraints=[WORKER])
    machine = box.runtime.create_machine()
    command, env = exec_command(box.controller, machine.id, None, tty=True, env={}, cwd=None)
    child = pexpect.spawn(command[0], command[1:], env=env, timeout=30)
    child.sendline("tty; hostname; exit 5")
    child.expect(pexpect.EOF)
    child.close()
    output = child.before.decode()
    assert "/dev/pts/" in output
    assert machine.container_id[:12] in output
    assert child.exitstatus == 5


def test_probe_answers_live_statuses(swarm: SwarmCluster, swarm_on: Callable[..., Harness]) -> None:
    from rigcli.provider_api import LiveStatus, SupportsInteractive, SupportsPower, SupportsStatus

    box = swarm_on(constraints=[WORKER])
    machine = box.runtime.create_machine()
    entry = service_entry(box.controller, machine.id)
    assert isinstance(box.controller, SupportsStatus | SupportsPower | SupportsInteractive)
    assert box.controller.probe([entry]) == {machine.id: LiveStatus("running", f"on {worker_name(swarm)}")}

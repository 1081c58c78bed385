"""exec on local and docker machines: results, streaming, bounded memory, and killing whole process trees."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from docker_endpoints import ENDPOINTS
from provider_helpers import Harness, PeakRss, process_dead

from rigcli.authoring.values import SecretValue
from rigcli.errors import InterruptedRunError, ProviderError
from rigcli.provider_kit.commands import OUTPUT_LIMIT, CommandFailedError

FIFTY_MB = 50 * 1024 * 1024


@pytest.fixture(params=["local", *(f"docker-{endpoint}" for endpoint in ENDPOINTS)])
def box(request: pytest.FixtureRequest) -> Harness:
    if request.param == "local":
        local: Harness = request.getfixturevalue("local")
        return local
    docker: Harness = request.getfixturevalue("docker_on")(request.param.removeprefix("docker-"))
    return docker


def grandchild_dead(machine: Any, pid: int) -> bool:
    if machine.provider_id == "local":
        return process_dead(pid)
    # Inside the container: the pid is only meaningful there; docker-init reaps orphans.
    probe = machine.exec(f"[ -e /proc/{pid} ] && cut -d' ' -f3 /proc/{pid}/stat || echo gone", check=False)
    return probe.stdout.strip() in ("gone", "Z")


def test_results_carry_exit_code_stdout_and_stderr(box: Harness) -> None:
    machine = box.runtime.create_machine()
    result = machine.exec("echo out; echo err >&2; exit 7", check=False)
    assert (result.exit_code, result.ok) == (7, False)
    assert result.stdout == "out\n"
    assert result.stderr == "err\n"
    assert machine.exec("true").ok


def test_env_and_cwd_are_honoured_and_relative_to_the_machine(box: Harness) -> None:
    machine = box.runtime.create_machine()
    machine.write_text("sub/marker.txt", "here\n")
    result = machine.exec('echo "$GREETING"; pwd; cat marker.txt', env={"GREETING": "hello there"}, cwd="sub")
    greeting, cwd, marker = result.stdout.splitlines()
    assert greeting == "hello there"
    assert cwd == f"{machine.path}/sub"
    assert marker == "here"


def test_a_failing_command_names_itself_and_its_exit_code(box: Harness) -> None:
    machine = box.runtime.create_machine()
    with pytest.raises(CommandFailedError, match=r'Command "install deps" failed with exit code 3: no network'):
        machine.exec("echo no network >&2; exit 3", name="install deps")
    with pytest.raises(ProviderError, match=r'Command "exit 4" failed with exit code 4') as raised:
        machine.exec("exit 4")
    assert raised.value.result.exit_code == 4  # type: ignore[attr-defined]


def test_events_stream_in_order_and_keep_each_streams_interleaving(box: Harness) -> None:
    machine = box.runtime.create_machine()
    script = "for i in 1 2 3; do echo out$i; echo err$i >&2; done; printf tail"
    result = machine.exec(script, name="interleave")
    commands = [event for event in box.events if event["type"].startswith("command.")]
    assert commands[0]["type"] == "command.started" and commands[-1]["type"] == "command.completed"
    assert {event["command_id"] for event in commands} == {commands[0]["command_id"]}
    assert all(event["name"] == "interleave" for event in commands)
    assert commands[0]["command"] == script
    outputs = [event for event in commands if event["type"] == "command.output"]
    assert "".join(e["data"] for e in outputs if e["stream"] == "stdout") == "out1\nout2\nout3\ntail"
    assert "".join(e["data"] for e in outputs if e["stream"] == "stderr") == "err1\nerr2\nerr3\n"
    assert commands[-1]["exit_code"] == 0 and commands[-1]["truncated_bytes"] == 0
    assert result.stdout == "out1\nout2\nout3\ntail"


def test_output_is_streamed_while_the_command_runs(box: Harness, tmp_path: Any) -> None:
    # The command waits for a file that only the event listener creates, after it has seen
    # "ready": this finishes only if output arrives before the command exits.
    machine = box.runtime.create_machine()
    seen: list[str] = []

    def listener(event: dict[str, Any]) -> None:
        if event["type"] == "command.output" and "ready" in event["data"] and not seen:
            seen.append(event["data"])
            machine.write_text("go", "")

    unsubscribe = box.bus.subscribe(listener)
    try:
        result = machine.exec("echo ready; while [ ! -e go ]; do sleep 0.05; done; echo done", timeout=60)
    finally:
        unsubscribe()
    assert seen and result.stdout == "ready\ndone\n"


def test_a_bulk_writer_is_read_a_few_pages_at_a_time_not_page_by_page(local: Harness) -> None:
    # 2,000 pages written a quarter of a millisecond apart: a reader that woke for each page would
    # emit ~2,000 chunks (and pay an event, the renderers and the run buffer for each). Output and
    # order are unchanged.
    machine = local.runtime.create_machine()
    script = (
        "python3 -c 'import os, time\n"
        "for _ in range(2000):\n"
        '    os.write(1, b"x" * 4095 + b"\\n"); time.sleep(0.00025)\''
    )
    result = machine.exec(script, timeout=60)
    outputs = [event for event in local.events if event["type"] == "command.output"]
    assert result.stdout[-8192:] == ("x" * 4095 + "\n") * 2
    assert "".join(event["data"] for event in outputs) == ("x" * 4095 + "\n") * 2000
    assert len(outputs) <= 1000, len(outputs)


def test_fifty_megabytes_of_output_keep_memory_bounded(box: Harness, make_harness: Any) -> None:
    meter = PeakRss()
    harness = make_harness(box.plugin, dict(box.setup.config), emit=meter)
    machine = harness.runtime.create_machine()
    result = machine.exec(f"yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c {FIFTY_MB}")
    assert meter.streamed == FIFTY_MB
    assert len(result.stdout) == OUTPUT_LIMIT
    assert result.stdout_truncated_bytes == FIFTY_MB - OUTPUT_LIMIT
    assert meter.completed["truncated_bytes"] == FIFTY_MB - OUTPUT_LIMIT
    assert meter.growth < 40 * 1024 * 1024, f"RSS grew by {meter.growth / 1e6:.1f} MB"


def test_a_timeout_kills_the_whole_process_tree(box: Harness) -> None:
    machine = box.runtime.create_machine()
    command = "sleep 300 & echo $! > grandchild.pid; wait"
    result = machine.exec(command, timeout=1, check=False)
    assert result.timed_out and not result.ok
    assert box.of_type("command.completed")[-1]["timed_out"] is True
    pid = int(machine.read_text("grandchild.pid"))
    assert grandchild_dead(machine, pid)
    with pytest.raises(CommandFailedError, match=r'Command "slow" timed out after 0.5s'):
        machine.exec("sleep 300", name="slow", timeout=0.5)


def test_a_grandchild_that_ignores_sigterm_is_killed_too(box: Harness) -> None:
    machine = box.runtime.create_machine()
    command = "sh -c 'trap \"\" TERM; sleep 300' & echo $! > stubborn.pid; wait"
    result = machine.exec(command, timeout=1, check=False)
    assert result.timed_out
    assert grandchild_dead(machine, int(machine.read_text("stubborn.pid")))


def test_cancellation_from_another_thread_kills_the_whole_process_tree(box: Harness, make_harness: Any) -> None:
    machine = box.runtime.create_machine()
    started = threading.Event()
    box.bus.subscribe(lambda event: event["type"] == "command.output" and "started" in event["data"] and started.set())
    canceller = threading.Thread(target=lambda: started.wait(60) and box.cancellation.cancel())
    canceller.start()
    with pytest.raises(InterruptedRunError, match="interrupted"):
        machine.exec("sleep 300 & echo $! > grandchild.pid; echo started; wait", timeout=120)
    canceller.join()
    assert box.of_type("command.completed")[-1]["cancelled"] is True
    with pytest.raises(InterruptedRunError, match="Not starting"):
        machine.exec("true")
    # This run is cancelled for good; look at the machine from a fresh one, as a new rig process would.
    checker = make_harness(box.plugin, dict(box.setup.config)).runtime.from_id(machine.id)
    assert grandchild_dead(checker, int(checker.read_text("grandchild.pid")))


def test_a_command_ended_by_an_earlier_cancel_callback_still_counts_as_interrupted(box: Harness) -> None:
    # cancel() runs its callbacks in order; the docker client's own (registered at setup) ends the
    # exec before the exec's callback runs. Held here between the two, the race CI once lost is certain.
    machine = box.runtime.create_machine()
    started = threading.Event()
    box.bus.subscribe(lambda event: event["type"] == "command.output" and "started" in event["data"] and started.set())
    box.cancellation.add_callback(lambda: time.sleep(2))
    canceller = threading.Thread(target=lambda: started.wait(60) and box.cancellation.cancel())
    canceller.start()
    with pytest.raises(InterruptedRunError, match="interrupted"):
        machine.exec("echo started; sleep 300", timeout=120)
    canceller.join()
    assert box.of_type("command.completed")[-1]["cancelled"] is True


def test_keyboard_interrupt_kills_the_process_tree_and_propagates(box: Harness) -> None:
    machine = box.runtime.create_machine()

    def interrupt(event: dict[str, Any]) -> None:
        if event["type"] == "command.output" and "started" in event["data"]:
            raise KeyboardInterrupt

    box.bus.subscribe(interrupt)
    with pytest.raises(KeyboardInterrupt):
        machine.exec("sleep 300 & echo $! > grandchild.pid; echo started; wait", timeout=120)
    assert grandchild_dead(machine, int(machine.read_text("grandchild.pid")))


def test_probe_never_raises(box: Harness) -> None:
    machine = box.runtime.create_machine()
    assert machine.probe("exit 9").exit_code == 9
    assert machine.probe("test -d .").ok


def test_secret_values_never_reach_events(box: Harness) -> None:
    machine = box.runtime.create_machine()
    machine.exec('echo "token=$TOKEN"', env={"TOKEN": SecretValue("hunter2-secret")})
    streamed = "".join(event["data"] for event in box.of_type("command.output"))
    assert streamed == "token=***\n"

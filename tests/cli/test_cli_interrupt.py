"""Graceful interrupt: the first SIGINT/SIGTERM stops running commands, journals the node, exits 130/143."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.cli_support import RIG, env_with_rig, write_project
from tests.helpers import alive, runs

CONFIG = """
from rigcli import define_provider, workflow

app = workflow("interrupt", providers={{"box": define_provider("local")}})

def run_command(box):
    machine = box.create_machine()
    machine.exec("sleep 600 & echo $! > {pidfile}; wait", name="long command")

def sleep_in_python(step):
    import time
    time.sleep(600)

workflows = app.sequence("root").parallel(
    command=app.sequence("command").task("run", run_command),
    python=app.sequence("python").task("sleep", sleep_in_python),
)
"""


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_first_signal_kills_running_commands_and_records_interrupted_runs(
    tmp_path: Path, signum: signal.Signals, code: int
) -> None:
    pidfile = tmp_path / "grandchild.pid"
    project = write_project(tmp_path / "project", CONFIG.format(pidfile=pidfile))
    process = subprocess.Popen(
        [RIG, "apply"], cwd=project, env=env_with_rig(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 30
        while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        grandchild = int(pidfile.read_text())
        assert alive(grandchild)
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == code, stderr
    assert stdout == ""
    assert [line for line in stderr.splitlines() if line.startswith("error: ")] == ["error: interrupted"]
    deadline = time.monotonic() + 10
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild), "a command started by the interrupted run survived it"
    assert runs(project / ".rig" / "state.sqlite") == [("command.run", "interrupted"), ("python.sleep", "interrupted")]


# A fork's create hook is sync: it runs on a thread while the runner waits, with no event loop.
FORK_CONFIG = """
import subprocess

from rigcli import define_provider, workflow

app = workflow("interrupt", providers={{"box": define_provider("local")}})


def prepare(step):
    return {{"ctx": {{}}}}


def create(workflow, box):
    machine = box.create_machine()
    machine.exec("sleep 600 & echo $! > {command_pid}; wait", name="long command")


def create_with_a_child(workflow):
    child = subprocess.Popen(["sleep", "600"])
    with open({child_pid!r}, "w") as out:
        out.write(str(child.pid))
    child.wait()


workflows = app.sequence("root").task("prepare", prepare).workspace(create={hook})
"""


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("hook", ["create", "create_with_a_child"])
def test_a_signal_during_a_create_hook_stops_what_it_started_and_fails_the_workspace(
    tmp_path: Path, signum: signal.Signals, code: int, hook: str
) -> None:
    pidfile = tmp_path / "started.pid"
    config = FORK_CONFIG.format(command_pid=pidfile, child_pid=str(pidfile), hook=hook)
    project = write_project(tmp_path / "project", config)
    process = subprocess.Popen(
        [RIG, "fork", "ws"], cwd=project, env=env_with_rig(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 30
        while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        started = int(pidfile.read_text())
        assert alive(started)
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == code, stderr
    assert stdout == ""
    assert [line for line in stderr.splitlines() if line.startswith("error: ")] == ["error: interrupted"]
    deadline = time.monotonic() + 10
    while alive(started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(started), "a process started by the interrupted create hook survived it"
    listed = subprocess.run(
        [RIG, "--json", "ls"], cwd=project, env=env_with_rig(), capture_output=True, text=True, timeout=60
    )
    [workflow] = json.loads(listed.stdout)["workflows"]
    assert [(item["name"], item["status"]) for item in workflow["workspaces"]] == [("ws", "failed")]
    removed = subprocess.run(
        [RIG, "rm", "ws", "--yes"], cwd=project, env=env_with_rig(), capture_output=True, text=True, timeout=60
    )
    assert removed.returncode == 0, removed.stderr


# The second fork of "ws" (--replace) makes its new machine slowly: the signal lands while it does.
REPLACE_CONFIG = """
import os

from rigcli import define_provider, workflow

app = workflow("interrupt", providers={{"box": define_provider("local")}})


def prepare(step):
    return {{"ctx": {{}}}}


def create(workflow, box):
    machine = box.create_machine()
    if os.path.exists({slow!r}):
        machine.exec("sleep 600 & echo $! > {command_pid}; wait", name="long command")
    return {{"machine": machine.id}}


workflows = app.sequence("root").task("prepare", prepare).workspace(create=create)
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_while_a_replacement_is_made_is_an_interrupt_and_keeps_the_old_workspace(
    tmp_path: Path, signum: signal.Signals
) -> None:
    pidfile, slow = tmp_path / "started.pid", tmp_path / "slow"
    project = write_project(tmp_path / "project", REPLACE_CONFIG.format(command_pid=pidfile, slow=str(slow)))
    made = subprocess.run(
        [RIG, "--json", "fork", "ws"], cwd=project, env=env_with_rig(), capture_output=True, text=True, timeout=60
    )
    assert made.returncode == 0, made.stderr
    old_machine = json.loads(made.stdout)["ctx"]["machine"]
    slow.touch()
    process = subprocess.Popen(
        [RIG, "fork", "ws", "--replace"],
        cwd=project,
        env=env_with_rig(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        started = int(pidfile.read_text())
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 128 + signum, stderr
    assert stdout == ""
    assert [line for line in stderr.splitlines() if line.startswith("error: ")] == ["error: interrupted"], stderr
    deadline = time.monotonic() + 10
    while alive(started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(started), "a process started by the interrupted replacement survived it"
    listed = subprocess.run(
        [RIG, "--json", "ls", "--no-probe"], cwd=project, env=env_with_rig(), capture_output=True, text=True, timeout=60
    )
    [workflow] = json.loads(listed.stdout)["workflows"]
    assert [(item["name"], item["status"], item["ctx"]) for item in workflow["workspaces"]] == [
        ("ws", "ready", {"machine": old_machine})
    ]
    machines = sorted(path.name for path in (project / ".rig" / "machines").iterdir())
    assert machines == [old_machine], "the half-made replacement's machine was left behind"

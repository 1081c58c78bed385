"""No child survives rig: what a run starts on the host dies with it, however rig ends."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.cli_support import RIG, env_with_rig, write_project
from tests.helpers import alive

# Four ways a task starts processes on the host, each leaving a grandchild that records its pid:
# a provider command, subprocess inside a handler (inherited and explicit environment), and
# local.run. Every one then waits, so the run is busy when the signal comes.
CONFIG = """
import os
import subprocess
import time

from rigcli import define_provider, workflow

PIDS = os.environ["RIG_TEST_PIDS"]
LEAVE = "sleep 600 & echo $! > {pids}/{name}; wait"

app = workflow("children", providers={"box": define_provider("local")})


def command(box):
    box.create_machine().exec(LEAVE.format(pids=PIDS, name="command"), name="long command")


def handler_subprocess(step):
    background = subprocess.Popen(["sleep", "600"])  # never waited for
    with open(os.path.join(PIDS, "popen"), "w") as handle:
        handle.write(str(background.pid))
    subprocess.run(["sh", "-c", LEAVE.format(pids=PIDS, name="subprocess")])


def explicit_env(step):
    env = {"PATH": os.environ["PATH"]}  # no variable of rig's survives into this one
    subprocess.run(["sh", "-c", LEAVE.format(pids=PIDS, name="explicit-env")], env=env)


def host(local):
    local.run(["sh", "-c", LEAVE.format(pids=PIDS, name="local-run")])


workflows = app.sequence("root").parallel(
    command=app.sequence("command").task("run", command),
    handler=app.sequence("handler").task("run", handler_subprocess),
    env=app.sequence("env").task("run", explicit_env),
    host=app.sequence("host").task("run", host),
)
"""
NAMES = ("command", "popen", "subprocess", "explicit-env", "local-run")

BACKGROUND = """
import os
import subprocess

from rigcli import workflow


def start(step):
    child = subprocess.Popen(["sh", "-c", "sleep 600 & echo $! > {pids}/grandchild; wait"])
    with open(os.path.join("{pids}", "child"), "w") as handle:
        handle.write(str(child.pid))
    while not os.path.exists(os.path.join("{pids}", "grandchild")):
        pass
    return {{"ctx": {{"started": True}}}}


workflows = workflow("bg").sequence("bg").task("start", start, cache_ttl=0)
"""


def _pids(directory: Path, names: tuple[str, ...], timeout: float = 30) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    found: dict[str, int] = {}
    while len(found) < len(names):
        for name in names:
            text = (directory / name).read_text().strip() if (directory / name).exists() else ""
            if text:
                found[name] = int(text)
        assert time.monotonic() < deadline, f"only {sorted(found)} started"
        time.sleep(0.02)
    return found


def _survivors(pids: dict[str, int], timeout: float = 8) -> list[str]:
    deadline = time.monotonic() + timeout
    while any(alive(pid) for pid in pids.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return sorted(name for name, pid in pids.items() if alive(pid))


def _kill(pids: dict[str, int]) -> None:
    for pid in pids.values():
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(
    ("signum", "code"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGKILL, -9)],
)
def test_no_process_a_run_started_survives_rig(tmp_path: Path, signum: signal.Signals, code: int) -> None:
    pids_dir = tmp_path / "pids"
    pids_dir.mkdir()
    project = write_project(tmp_path / "project", CONFIG)
    env = env_with_rig({"RIG_TEST_PIDS": str(pids_dir), "RIG_TRUST_HOST_COMMANDS": "1", "RIG_RENDER": "0"})
    # Files, not pipes: a child that outlives rig would hold a pipe open and hang the test.
    with (tmp_path / "out").open("wb") as out, (tmp_path / "err").open("wb") as err:
        process = subprocess.Popen(
            [RIG, "apply"], cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err
        )
    pids: dict[str, int] = {}
    try:
        pids = _pids(pids_dir, NAMES)
        assert all(alive(pid) for pid in pids.values())
        process.send_signal(signum)
        assert process.wait(timeout=30) == code, (tmp_path / "err").read_text()
        survivors = _survivors(pids)
        if signum == signal.SIGKILL:
            # Only a process that dropped rig's environment can escape a SIGKILLed rig (see
            # rigcli/children.py); it is still stopped by every exit rig gets to see.
            survivors = [name for name in survivors if name != "explicit-env"]
        stderr = (tmp_path / "err").read_text()
        assert survivors == [], f"survived rig: {survivors}\n{stderr}"
        if signum != signal.SIGKILL:
            assert "Traceback" not in stderr
            with sqlite3.connect(project / ".rig" / "state.sqlite") as db:
                statuses = {status for (status,) in db.execute("SELECT status FROM workflow_node_runs")}
            assert statuses == {"interrupted"}
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        _kill(pids)


def test_a_process_a_task_left_running_dies_when_rig_exits(tmp_path: Path) -> None:
    pids_dir = tmp_path / "pids"
    pids_dir.mkdir()
    project = write_project(tmp_path / "project", BACKGROUND.format(pids=pids_dir))
    pids: dict[str, int] = {}
    try:
        with (tmp_path / "err").open("wb") as err:
            completed = subprocess.run(
                [RIG, "apply"], cwd=project, env=env_with_rig({"RIG_RENDER": "0"}), stdout=err, stderr=err, timeout=60
            )
        assert completed.returncode == 0, (tmp_path / "err").read_text()
        pids = _pids(pids_dir, ("child", "grandchild"), timeout=1)
        assert _survivors(pids) == []
    finally:
        _kill(pids)


def test_closing_the_terminal_ends_rig_like_sighup(tmp_path: Path) -> None:
    """The terminal window closes (or ssh drops): the kernel hangs up, the live view cannot draw."""
    import pexpect

    pids_dir = tmp_path / "pids"
    pids_dir.mkdir()
    project = write_project(tmp_path / "project", CONFIG)
    env = env_with_rig({"RIG_TEST_PIDS": str(pids_dir), "RIG_TRUST_HOST_COMMANDS": "1", "TERM": "xterm-256color"})
    for name in ("RIG_RENDER", "NO_COLOR"):
        env.pop(name, None)
    child = pexpect.spawn(RIG, ["apply"], cwd=str(project), env=env, dimensions=(40, 120), timeout=30)
    pids: dict[str, int] = {}
    try:
        pids = _pids(pids_dir, NAMES)
        # The terminal is gone: SIGHUP for rig, EIO for whatever it writes. Closed through pexpect's
        # own file object, which then forgets the fd (its number is soon someone else's).
        child.ptyproc.fileobj.close()
        child.ptyproc.fd = child.child_fd = -1
        child.ptyproc.closed = child.closed = True
        _, status = os.waitpid(child.pid, 0)
        child.terminated = True  # reaped here, not by pexpect
        assert os.waitstatus_to_exitcode(status) == 129
        assert _survivors(pids) == []
        with sqlite3.connect(project / ".rig" / "state.sqlite") as db:
            statuses = {status for (status,) in db.execute("SELECT status FROM workflow_node_runs")}
        assert statuses == {"interrupted"}
    finally:
        if not child.terminated:
            child.kill(signal.SIGKILL)
            os.waitpid(child.pid, 0)
            child.terminated = True
        _kill(pids)

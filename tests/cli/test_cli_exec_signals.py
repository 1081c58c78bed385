"""SIGINT, SIGTERM or SIGHUP sent to `rig exec`'s own pid (not its process group, as `kill PID`
from another terminal or a supervisor does): the command's whole process group gets it, rig waits
for it, a bounded time, and exits 128 + the signal; nothing the command started is left running.

The command is a shell waiting for a foreground child: signalled alone, a shell dies of SIGTERM
and leaves its child running, and waits for its child on SIGINT (so nothing ends).
"""

from __future__ import annotations

import os
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from tests.cli.cli_support import RIG, env_with_rig, write_project
from tests.helpers import alive, wait_for

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]

CONFIG = """
from rigcli import define_provider, workflow

app = workflow("signals", providers={"box": define_provider("local")})


def prepare(step, box):
    machine = box.create_machine()
    try:
        return {"ctx": {"snapshot": machine.snapshot_ref()}}
    finally:
        machine.delete()


def create(workflow, box):
    return {"machine": box.from_snapshot(workflow.ctx["snapshot"]).id}


workflows = app.sequence("signals").task("prepare", prepare).workspace(create=create)
"""

BOUND = 20.0  # rig's wait for the command, and the kill after it, come well within this


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("exec-signals")
    directory = write_project(root / "project", CONFIG)
    env = env_with_rig({"RIG_HOME": str(root / "home"), "RIG_HOST_STORAGE_DIR": str(root / "home" / "providers")})
    for argv in (["apply"], ["fork", "ws"]):
        done = subprocess.run([RIG, *argv], cwd=directory, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    return directory, env


def _pid(path: Path) -> int | None:
    try:
        return int(path.read_text())
    except (OSError, ValueError):
        return None


def _script(outer: Path, inner: Path, trap: str = "") -> str:
    """A shell (pid in ``outer``) waiting for a foreground shell that became ``sleep`` (pid in ``inner``)."""
    return textwrap.dedent(
        f"""\
        {trap}
        echo $$ > {outer}.tmp && mv {outer}.tmp {outer}
        sh -c 'echo $$ > {inner}.tmp && mv {inner}.tmp {inner}; exec sleep 300'
        echo after
        """
    )


def _signal_rig(
    project: tuple[Path, dict[str, str]], tmp_path: Path, signum: int, *, cache: bool, trap: str = ""
) -> tuple[int | None, str, float, list[int]]:
    """rig's exit code (None: still running after BOUND), its stderr, the seconds it took after the
    signal, and the command's processes still running then."""
    directory, env = project
    outer, inner = tmp_path / "outer", tmp_path / "inner"
    process = subprocess.Popen(
        [RIG, "exec", "ws", "--", "sh", "-c", _script(outer, inner, trap)],
        cwd=directory,
        env={**env, **({} if cache else {"RIG_CACHE": "off"})},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # rig's group is not the test's: only rig's pid is signalled
    )
    pids: list[int] = []
    try:
        wait_for(lambda: _pid(outer) is not None and _pid(inner) is not None, "the command to start", timeout=60)
        pids = [pid for pid in (_pid(outer), _pid(inner)) if pid is not None]
        sent = time.monotonic()
        process.send_signal(signum)
        try:
            _, stderr = process.communicate(timeout=BOUND)
        except subprocess.TimeoutExpired:
            return None, "", BOUND, [pid for pid in pids if alive(pid)]
        took = time.monotonic() - sent
        return process.returncode, stderr, took, [pid for pid in pids if alive(pid)]
    finally:
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("cache", [True, False], ids=["lean", "engine"])
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: s.name)
def test_a_signal_to_rigs_pid_ends_the_commands_whole_group_and_rig_exits_128_plus_it(
    project: tuple[Path, dict[str, str]], tmp_path: Path, signum: signal.Signals, cache: bool
) -> None:
    code, stderr, took, running = _signal_rig(project, tmp_path, signum, cache=cache)
    assert running == [], f"left running: {running}"
    assert code == 128 + signum, stderr
    assert took < 10, took
    assert "after" not in stderr


@pytest.mark.timeout(120)
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: s.name)
def test_a_command_that_ignores_the_signal_is_killed_after_a_bounded_wait(
    project: tuple[Path, dict[str, str]], tmp_path: Path, signum: signal.Signals
) -> None:
    trap = "trap '' INT TERM HUP"  # inherited by the sleep: nothing in the group ends by itself
    code, stderr, took, running = _signal_rig(project, tmp_path, signum, cache=True, trap=trap)
    assert running == [], f"left running: {running}"
    assert code == 128 + signum, stderr
    assert took < BOUND, took

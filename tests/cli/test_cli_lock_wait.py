"""Waiting for the state lock: a signal ends the wait at once and starts nothing; a dead holder is taken over aloud."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.cli_support import RIG, env_with_rig, run_rig, write_project
from tests.helpers import runs, wait_for

CONFIG = """
import os
import time
from pathlib import Path

from rigcli import sequence, workflow


def wait(step):
    Path(os.environ["RIG_TEST_MARKERS"], f"started-{os.getpid()}").touch()
    print("waiting", flush=True)
    time.sleep(float(os.environ.get("RIG_TEST_SLEEP", "0")))
    return {"ctx": {"waited": True}}


app = workflow("slow")
if os.environ.get("RIG_TEST_GLOBAL") == "1":  # the task's run lives in a global fragment's store
    workflows = app.sequence("slow").add(sequence("shared").task("wait", wait, cache_ttl=0).global_())
else:
    workflows = app.sequence("slow").task("wait", wait, cache_ttl=0)
"""


def _env(markers: Path, sleep: float, *, global_: bool = False) -> dict[str, str]:
    return env_with_rig(
        {
            "RIG_TEST_MARKERS": str(markers),
            "RIG_TEST_SLEEP": str(sleep),
            "RIG_TEST_GLOBAL": "1" if global_ else "0",
            "RIG_HOME": str(markers.parent / "rig-home"),
            "RIG_RENDER": "0",
        }
    )


def _start(project: Path, env: dict[str, str], stderr: Path) -> subprocess.Popen[bytes]:
    with stderr.open("wb") as sink:
        return subprocess.Popen([RIG, "apply"], cwd=project, env=env, stdout=subprocess.PIPE, stderr=sink)


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    directory = tmp_path / "markers"
    directory.mkdir()
    return directory


# The project's lock is taken before any handler runs; a global fragment's lock only when its
# first task is about to run, with the event loop already going.
@pytest.mark.parametrize("scope", ["project", "fragment"])
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_ends_the_wait_for_the_lock_at_once_and_starts_no_node(
    tmp_path: Path, markers: Path, scope: str, signum: signal.Signals, code: int
) -> None:
    global_ = scope == "fragment"
    holder_project = write_project(tmp_path / "project", CONFIG)
    waiter_project = write_project(tmp_path / "other", CONFIG) if global_ else holder_project
    holder = _start(holder_project, _env(markers, 60, global_=global_), tmp_path / "holder.err")
    waiter: subprocess.Popen[bytes] | None = None
    try:
        wait_for(lambda: len(list(markers.iterdir())) == 1, "the holder's task to start")
        waiter = _start(waiter_project, _env(markers, 0, global_=global_), tmp_path / "waiter.err")
        wait_for(lambda: "waiting for the state lock" in (tmp_path / "waiter.err").read_text(), "the waiter to wait")
        waiter.send_signal(signum)
        try:
            stdout, _ = waiter.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            pytest.fail("a signal did not end the wait for the state lock")
        stderr = (tmp_path / "waiter.err").read_text()
        assert waiter.returncode == code, stderr
        assert stdout == b""
        assert [line for line in stderr.splitlines() if line.startswith("error: ")] == ["error: interrupted"]
        assert "Traceback" not in stderr
        holder.send_signal(signal.SIGINT)  # the lock is free again: nothing of the waiter may start now
        assert holder.wait(timeout=30) == 130
        time.sleep(0.3)
        assert [marker.name for marker in markers.iterdir()] == [f"started-{holder.pid}"]
        if global_:
            [fragment] = (markers.parent / "rig-home" / "fragments").glob("*/state.sqlite")
            assert runs(fragment) == [("shared.wait", "interrupted")]
        else:
            assert runs(holder_project / ".rig" / "state.sqlite") == [("wait", "interrupted")]
    finally:
        for process in (holder, waiter):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()


def test_the_lock_of_a_killed_holder_is_taken_over_with_a_notice(tmp_path: Path, markers: Path) -> None:
    project = write_project(tmp_path / "project", CONFIG)
    holder = _start(project, _env(markers, 60), tmp_path / "holder.err")
    try:
        wait_for(lambda: any(markers.iterdir()), "the holder's task to start")
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
    taken = run_rig("--json", "apply", cwd=project, env=_env(markers, 0), subprocess=True)
    assert taken.returncode == 0, taken
    assert json.loads(taken.stdout)["context"] == {"waited": True}
    notices = [line for line in taken.stderr.splitlines() if "took over the state lock" in line]
    assert len(notices) == 1, taken.stderr
    assert f"rig apply (pid {holder.pid} on " in notices[0]
    assert "no longer running" in notices[0]

"""ChildGuard: what starts after arm() is stopped by close(), except what was started detached."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from rigcli.children import TOKEN_VARIABLE, ChildGuard, detached_env, supported

pytestmark = pytest.mark.skipif(not supported(), reason="needs /proc (Linux)")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def test_close_stops_children_and_grandchildren_but_not_detached_ones() -> None:
    before = subprocess.Popen(["sleep", "60"])  # not ours: started before arm()
    time.sleep(0.05)  # start times count in clock ticks (10 ms); a few apart
    guard = ChildGuard(grace=1)
    guard.arm()
    started: list[subprocess.Popen[bytes]] = [before]
    try:
        assert os.environ[TOKEN_VARIABLE] == guard.token
        inherited = subprocess.Popen(["sh", "-c", "sleep 60 & echo $!; wait"], stdout=subprocess.PIPE)
        explicit = subprocess.Popen(["sleep", "60"], env={"PATH": os.environ["PATH"]})
        detached = subprocess.Popen(["sleep", "60"], env=detached_env(), start_new_session=True)
        started += [inherited, explicit, detached]
        assert inherited.stdout is not None
        grandchild = int(inherited.stdout.readline())
        ours = set(guard.children())
        assert {inherited.pid, grandchild, explicit.pid} <= ours
        assert not ours & {before.pid, detached.pid}
        guard.close()
        assert TOKEN_VARIABLE not in os.environ
        deadline = time.monotonic() + 5
        while any(_alive(pid) for pid in (inherited.pid, grandchild, explicit.pid)) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not any(_alive(pid) for pid in (inherited.pid, grandchild, explicit.pid))
        assert _alive(before.pid) and _alive(detached.pid)
    finally:
        guard.close()
        for process in started:
            process.kill()
            process.wait()

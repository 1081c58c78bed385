"""ChildGuard: what starts after arm() is stopped by close(), except what was started detached."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from rigcli.children import TOKEN_VARIABLE, ChildGuard, detached_env, supported
from tests.helpers import alive

pytestmark = pytest.mark.skipif(not supported(), reason="needs /proc (Linux)")


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
        while any(alive(pid) for pid in (inherited.pid, grandchild, explicit.pid)) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not any(alive(pid) for pid in (inherited.pid, grandchild, explicit.pid))
        assert alive(before.pid) and alive(detached.pid)
    finally:
        guard.close()
        for process in started:
            process.kill()
            process.wait()


def test_the_watchdog_starts_on_what_a_bare_interpreter_already_has() -> None:
    # It starts beside every command that runs project code, competing with it for the CPU:
    # typing or contextlib would double its start-up.
    import sys

    import rigcli.children

    completed = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", rigcli.children.__file__, "token", "1", "0"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert completed.returncode == 0, completed.stderr
    imported = {line.split("|")[-1].strip() for line in completed.stderr.splitlines() if "|" in line}
    assert "signal" in imported  # the check sees the watchdog's own imports
    assert not imported & {"typing", "contextlib", "subprocess"}, sorted(imported)


def _watchdogs() -> dict[int, list[str]]:
    """This process's watchdogs (children.py run with a token of ours) by pid, with their argv."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                argv = [part.decode() for part in handle.read().split(b"\0") if part]
        except OSError:
            continue
        mine = any(arg.startswith(f"{os.getpid()}-") for arg in argv)
        if mine and any(arg.endswith("children.py") for arg in argv) and alive(int(name)):
            found[int(name)] = argv
    return found


def _new_watchdogs(earlier: set[int]) -> dict[int, list[str]]:
    """Watchdogs that are not in ``earlier``, once at least one has exec'd (Popen returns before)."""
    deadline = time.monotonic() + 10
    while True:
        found = {pid: argv for pid, argv in _watchdogs().items() if pid not in earlier}
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.01)


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


def test_a_watchdog_started_ahead_is_the_one_arm_uses() -> None:
    earlier = set(_watchdogs())  # an earlier test's may still be on its way out
    guard = ChildGuard(grace=1)
    guard.prepare()
    try:
        (pid, argv), *others = _new_watchdogs(earlier).items()
        assert others == []
        assert TOKEN_VARIABLE not in os.environ  # nothing carries the token before arm()
        guard.arm()
        assert os.environ[TOKEN_VARIABLE] in argv
        assert set(_watchdogs()) - earlier == {pid}  # arm() started no second one
        child = subprocess.Popen(["sleep", "60"])
    finally:
        guard.close()
    assert _gone(child.pid)
    child.wait()
    assert _gone(pid)


def test_a_watchdog_started_ahead_ends_with_the_command_even_if_nothing_was_armed() -> None:
    before, earlier = dict(os.environ), set(_watchdogs())
    guard = ChildGuard(grace=1)
    guard.prepare()
    [pid] = _new_watchdogs(earlier)
    guard.close()
    assert _gone(pid)
    assert dict(os.environ) == before

"""The writer lock on both backends: one writer per database, a named holder, takeover after a crashed holder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rigcli.errors import InterruptedRunError, StateError, StateLockedError
from rigcli.records import LockHolder
from rigcli.state import StateStore
from rigcli.state.process import this_host, this_user

_HOLDER = """
import sys
from rigcli.state.factory import open_state_store
store = open_state_store(None, project_dir=sys.argv[2], state_path=sys.argv[1])
with store.lock("apply"):
    print("locked", flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""


@pytest.fixture
def holder(store: StateStore, state_location: str, project_dir: Path) -> Iterator[subprocess.Popen[str]]:
    """Another rig process holding the store's lock until its stdin gets a line."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, state_location, str(project_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "locked"
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=10)


def test_lock_records_holder_while_held_and_clears_it_on_release(store: StateStore) -> None:
    assert store.status().lock is None
    with store.lock("fork") as mine:
        assert mine.pid == os.getpid() and mine.command == "fork" and mine.host == this_host()
        assert mine.user == this_user()
        assert store.status().lock == mine
        if store.backend == "sqlite":
            written = json.loads(Path(f"{store.path}.lock").read_text())
            assert written == mine.to_json()
            assert list(written) == ["pid", "host", "user", "command", "started_at"]  # as older rigs wrote it
    assert store.status().lock is None
    if store.backend == "sqlite":
        assert Path(f"{store.path}.lock").read_text() == ""
    with store.lock("rm"):  # free again
        pass


def test_another_process_sees_the_holder_without_waiting(
    store: StateStore, holder: subprocess.Popen[str], state_location: str, project_dir: Path
) -> None:
    from rigcli.state.factory import open_state_store

    other = open_state_store(None, project_dir=str(project_dir), state_path=state_location)
    try:
        seen = other.status().lock
        assert seen is not None
        assert (seen.pid, seen.host, seen.user, seen.command) == (
            holder.pid,
            this_host(),
            this_user(),
            "apply",
        )
        assert other.list_runs() == []  # reads never wait
    finally:
        other.close()


def test_no_wait_names_the_holder(store: StateStore, holder: subprocess.Popen[str]) -> None:
    with pytest.raises(StateLockedError) as caught, store.lock("apply", wait=False):
        pytest.fail("acquired a lock another process holds")
    message = str(caught.value)
    assert f"pid {holder.pid}" in message
    assert this_host() in message
    assert "rig apply" in message
    assert store.path in message
    assert caught.value.exit_code == 4
    # Reads never take the lock.
    assert store.list_runs() == []


def test_waiting_reports_the_holder_once_then_gets_the_lock(store: StateStore, holder: subprocess.Popen[str]) -> None:
    seen: list[LockHolder] = []
    takeovers: list[LockHolder] = []

    def on_wait(info: LockHolder) -> None:
        seen.append(info)
        assert holder.stdin is not None
        holder.stdin.write("go\n")
        holder.stdin.flush()

    with store.lock("fork", on_wait=on_wait, on_takeover=takeovers.append) as mine:
        assert mine.pid == os.getpid()
        assert holder.stdout is not None and holder.stdout.readline().strip() == "released"
    assert [info.pid for info in seen] == [holder.pid]
    assert seen[0].command == "apply"
    assert takeovers == []  # released cleanly: nothing to take over


def test_a_killed_holder_is_taken_over_with_a_notice(store: StateStore, holder: subprocess.Popen[str]) -> None:
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=10)
    takeovers: list[LockHolder] = []
    with store.lock("apply", wait=False, on_takeover=takeovers.append) as mine:
        assert mine.pid == os.getpid()
    assert [(info.pid, info.host, info.command) for info in takeovers] == [(holder.pid, this_host(), "apply")]


_TRY = """
import sys
from rigcli.errors import StateLockedError
from rigcli.state.factory import open_state_store
store = open_state_store(None, project_dir=sys.argv[2], state_path=sys.argv[1])
try:
    with store.lock("rm", wait=False):
        print("acquired")
except StateLockedError:
    print("locked")
"""


def test_an_error_right_after_taking_the_lock_leaves_it_free(
    store: StateStore, holder: subprocess.Popen[str], state_location: str, project_dir: Path
) -> None:
    # A takeover notice that fails comes after the lock is taken and before the body: the lock
    # must still be released (on PostgreSQL the connection goes on serving reads afterwards).
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=10)

    def fail(info: LockHolder) -> None:
        raise RuntimeError("the notice could not be shown")

    with pytest.raises(RuntimeError), store.lock("apply", wait=False, on_takeover=fail):
        pytest.fail("the body ran although the notice failed")
    assert store.list_runs() == []  # the store still reads
    other = subprocess.run(
        [sys.executable, "-c", _TRY, state_location, str(project_dir)], capture_output=True, text=True, timeout=60
    )
    assert other.stdout.strip() == "acquired", other.stderr


def test_nested_lock_in_one_thread_fails_instead_of_deadlocking(store: StateStore) -> None:
    with store.lock("apply"), pytest.raises(StateError, match="already held by this thread"), store.lock("apply"):
        pytest.fail("nested lock acquired")
    with store.lock("apply"):  # and the outer lock was released properly
        pass


def test_another_thread_waits_for_the_first(store: StateStore) -> None:
    order: list[str] = []
    waited: list[LockHolder] = []
    acquired = threading.Event()

    def second() -> None:
        with pytest.raises(StateLockedError, match=f"pid {os.getpid()}"), store.lock("rm", wait=False):
            pass
        acquired.set()
        with store.lock("rm", on_wait=waited.append):
            order.append("second")

    with store.lock("apply"):
        thread = threading.Thread(target=second)
        thread.start()
        assert acquired.wait(10)
        time.sleep(0.2)
        order.append("first")
    thread.join(10)
    assert order == ["first", "second"]
    assert [(info.pid, info.command) for info in waited] == [(os.getpid(), "apply")]


def test_a_cancelled_wait_ends_at_once_and_takes_nothing(store: StateStore, holder: subprocess.Popen[str]) -> None:
    cancelled = threading.Event()
    threading.Timer(0.3, cancelled.set).start()
    started = time.monotonic()
    with pytest.raises(InterruptedRunError), store.lock("fork", cancelled=cancelled.is_set):
        pytest.fail("acquired a lock another process holds")
    assert time.monotonic() - started < 5
    seen = store.status().lock
    assert seen is not None and seen.pid == holder.pid  # the holder still has it

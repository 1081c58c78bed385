"""A wait for the SQLite writer lock ends as soon as the command is cancelled, having taken nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rigcli.errors import InterruptedRunError
from rigcli.state import create_state_store
from rigcli.state.store import SQLiteStateStore

_HOLDER = """
import sys
from rigcli.state.lock import state_lock
with state_lock(sys.argv[1], "apply"):
    print("locked", flush=True)
    sys.stdin.readline()
"""


@pytest.fixture
def sqlite_store(project_dir: Path) -> Iterator[SQLiteStateStore]:
    store = create_state_store(project_dir=project_dir)
    store.sync_schema()
    yield store
    store.close()


def _cancel_after(seconds: float) -> threading.Event:
    cancelled = threading.Event()
    threading.Timer(seconds, cancelled.set).start()
    return cancelled


def test_a_cancelled_wait_for_another_process_ends_at_once(sqlite_store: SQLiteStateStore) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, sqlite_store.path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        waits: list[object] = []
        cancelled = _cancel_after(0.2)
        started = time.monotonic()
        with (
            pytest.raises(InterruptedRunError, match="waiting for the state lock"),
            sqlite_store.lock("fork", on_wait=waits.append, cancelled=cancelled.is_set),
        ):
            pytest.fail("took a lock another process holds")
        assert time.monotonic() - started < 2
        assert len(waits) == 1
        info = json.loads(Path(f"{sqlite_store.path}.lock").read_text())
        assert info["pid"] == holder.pid  # the holder's info is untouched: nothing was taken
    finally:
        holder.kill()
        holder.wait()


def test_a_cancelled_wait_for_another_thread_ends_at_once(sqlite_store: SQLiteStateStore) -> None:
    outcome: list[BaseException] = []

    def waiter() -> None:
        try:
            with sqlite_store.lock("rm", cancelled=_cancel_after(0.2).is_set):
                pass
        except BaseException as exc:
            outcome.append(exc)

    with sqlite_store.lock("apply"):
        thread = threading.Thread(target=waiter)
        thread.start()
        thread.join(timeout=5)
        assert not thread.is_alive(), "the cancelled waiter is still waiting"
    assert [type(exc) for exc in outcome] == [InterruptedRunError]
    with sqlite_store.lock("apply"):  # and nothing was left held
        pass

"""The runner drives a coroutine by hand and runs the blocking calls it awaits (a sync hook) on a
thread of their own, without an event loop; cancel() ends such a wait at once."""

from __future__ import annotations

import threading
import time

import pytest

from rigcli.engine.invoke import run_in_daemon_thread
from rigcli.engine.runner import Runner
from rigcli.errors import InterruptedRunError
from rigcli.speed.coroutines import loop_running, need_event_loop


def test_a_blocking_call_runs_on_a_thread_of_its_own_and_no_loop_is_made() -> None:
    runner = Runner()
    told: list[bool] = []
    main = threading.get_ident()

    def hook() -> tuple[int, str]:
        return threading.get_ident(), threading.current_thread().name

    async def fork() -> tuple[tuple[int, str], bool]:
        made = await run_in_daemon_thread(hook, name="workspace:a:create")
        return made, loop_running()

    try:
        (ident, name), on_a_loop = runner.run(fork(), on_loop=told.append)
    finally:
        runner.close()
    assert ident != main and name == "rig:workspace:a:create"
    assert not on_a_loop and runner._loop is None  # by hand throughout
    assert told == [True, False]  # project code could run (the children guard arms), then no more


def test_what_the_call_raises_is_raised_where_it_was_awaited() -> None:
    runner = Runner()

    def hook() -> None:
        raise ValueError("the hook failed")

    async def fork() -> str:
        try:
            await run_in_daemon_thread(hook, name="hook")
        except ValueError as exc:
            return f"caught: {exc}"
        return "not raised"

    try:
        assert runner.run(fork()) == "caught: the hook failed"
    finally:
        runner.close()


def test_cancel_ends_the_wait_for_a_call_that_goes_on() -> None:
    runner = Runner()
    started, release = threading.Event(), threading.Event()
    told: list[bool] = []

    def hook() -> None:
        started.set()
        release.wait(30)

    async def fork() -> None:
        await run_in_daemon_thread(hook, name="stuck")

    def interrupt() -> None:
        started.wait(30)
        runner.cancel()

    threading.Thread(target=interrupt, daemon=True).start()
    began = time.monotonic()
    try:
        with pytest.raises(InterruptedRunError):
            runner.run(fork(), on_loop=told.append)
        assert time.monotonic() - began < 10  # the stuck hook was not waited for
        assert told == [True, False]
        with pytest.raises(InterruptedRunError):  # and every call after it is cancelled at once
            runner.run(fork())
    finally:
        release.set()
        runner.close()


def test_after_a_blocking_call_the_rest_may_still_ask_for_a_loop() -> None:
    runner = Runner()
    told: list[bool] = []

    async def fork() -> list[object]:
        first = await run_in_daemon_thread(lambda: "by hand", name="create")
        await need_event_loop()
        second = await run_in_daemon_thread(lambda: "on the loop", name="create")
        return [first, second, loop_running()]

    try:
        assert runner.run(fork(), on_loop=told.append) == ["by hand", "on the loop", True]
    finally:
        runner.close()
    assert told == [True, False]  # told once, however the project code ran

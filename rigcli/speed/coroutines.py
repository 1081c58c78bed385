"""Run an engine coroutine without an event loop until it needs one.

A cached ``rig plan`` or a no-op ``rig apply`` awaits nothing that really suspends, and asyncio
costs more to import than such a command costs to run. So the engine's runner (``runner.py``)
first drives the coroutine by hand; the engine awaits ``need_event_loop()`` right before anything
that really needs a loop (parallel branches, an async handler), and that hands the rest of the
coroutine to the runner's event loop. Under a loop (an embedding host, or after the hand-over)
the same await is a plain reschedule, like ``asyncio.sleep(0)``.

One blocking call does not need a loop either: a sync hook run in a worker thread while the
coroutine waits (a fork's create hook, an operation). Driven by hand, the engine awaits
``Blocking(call)`` instead, and the driver makes the call (``run_blocking``: the runner runs it on
a thread and waits) and sends its result back in, or throws its exception; ``rig fork`` of one
workspace never imports asyncio (~115 M instructions, over a quarter of a docker fork).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Coroutine, Generator
from typing import Generic, TypeVar, cast

T = TypeVar("T")


class _NeedEventLoop:
    def __await__(self) -> Generator[None, None, None]:
        yield  # a bare yield: our driver hands over to a loop; an asyncio Task just reschedules


def need_event_loop() -> _NeedEventLoop:
    """Await before code that needs a running event loop (threads with futures, gather, tasks)."""
    return _NeedEventLoop()


def loop_running() -> bool:
    """An event loop runs in this thread (without importing asyncio when nothing imported it)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class Blocking(Generic[T]):
    """Awaited only by a coroutine driven by hand (no loop running): the driver calls ``call``,
    which may block, and the await gives its result or raises its exception."""

    def __init__(self, call: Callable[[], T], name: str) -> None:
        self.call = call
        self.name = name

    def __await__(self) -> Generator[Blocking[T], object, T]:
        result = yield self
        return cast(T, result)


class Resumed(Generic[T]):
    """The rest of a coroutine that was driven by hand and paused at ``need_event_loop()``."""

    def __init__(self, coro: Coroutine[object, object, T]) -> None:
        self._coro = coro

    def __await__(self) -> Generator[object, None, T]:
        # Delegates to the paused coroutine: sends, throws (cancellation) and close pass through.
        return (yield from self._coro.__await__())


def drive(
    coro: Coroutine[object, object, T],
    run_on_loop: Callable[[Resumed[T]], T],
    run_blocking: Callable[[Blocking[object]], object] | None = None,
) -> T:
    """``coro``'s result, computed without an event loop unless it asks for one."""
    sent: object = None
    thrown: BaseException | None = None
    while True:
        try:
            yielded = coro.send(sent) if thrown is None else coro.throw(thrown)
        except StopIteration as finished:
            result: T = finished.value
            return result
        sent, thrown = None, None
        if yielded is None:
            return run_on_loop(Resumed(coro))
        if isinstance(yielded, Blocking) and run_blocking is not None:
            try:
                sent = run_blocking(yielded)
            except BaseException as exc:  # the call's own failure, or the interrupt that ended the wait
                thrown = exc
            continue
        # Awaited a real future outside any loop: cannot happen in our engine
        coro.close()
        raise RuntimeError(f"engine coroutine awaited {yielded!r} before asking for an event loop")


def is_cancellation(exc: BaseException) -> bool:
    """True for asyncio's CancelledError, without importing asyncio when nothing imported it."""
    asyncio = sys.modules.get("asyncio")
    return asyncio is not None and isinstance(exc, asyncio.CancelledError)


__all__ = ["Blocking", "Resumed", "drive", "is_cancellation", "loop_running", "need_event_loop"]

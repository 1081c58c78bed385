"""Run an engine coroutine without an event loop until it needs one.

A cached ``rig plan`` or a no-op ``rig apply`` awaits nothing that really suspends, and asyncio
costs more to import than such a command costs to run. So the engine's runner (``runner.py``)
first drives the coroutine by hand; the engine awaits ``need_event_loop()`` right before anything
that really needs a loop (running a handler, parallel branches, a hook), and that hands the rest
of the coroutine to the runner's event loop. Under a loop (an embedding host, or after the
hand-over) the same await is a plain reschedule, like ``asyncio.sleep(0)``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Coroutine, Generator
from typing import Generic, TypeVar

T = TypeVar("T")


class _NeedEventLoop:
    def __await__(self) -> Generator[None, None, None]:
        yield  # a bare yield: our driver hands over to a loop; an asyncio Task just reschedules


def need_event_loop() -> _NeedEventLoop:
    """Await before code that needs a running event loop (threads with futures, gather, tasks)."""
    return _NeedEventLoop()


class Resumed(Generic[T]):
    """The rest of a coroutine that was driven by hand and paused at ``need_event_loop()``."""

    def __init__(self, coro: Coroutine[object, object, T]) -> None:
        self._coro = coro

    def __await__(self) -> Generator[object, None, T]:
        # Delegates to the paused coroutine: sends, throws (cancellation) and close pass through.
        return (yield from self._coro.__await__())


def drive(coro: Coroutine[object, object, T], run_on_loop: Callable[[Resumed[T]], T]) -> T:
    """``coro``'s result, computed without an event loop unless it asks for one."""
    try:
        yielded = coro.send(None)
    except StopIteration as finished:
        result: T = finished.value
        return result
    if yielded is not None:  # awaited a real future outside any loop: cannot happen in our engine
        coro.close()
        raise RuntimeError(f"engine coroutine awaited {yielded!r} before asking for an event loop")
    return run_on_loop(Resumed(coro))


def is_cancellation(exc: BaseException) -> bool:
    """True for asyncio's CancelledError, without importing asyncio when nothing imported it."""
    asyncio = sys.modules.get("asyncio")
    return asyncio is not None and isinstance(exc, asyncio.CancelledError)


__all__ = ["Resumed", "drive", "is_cancellation", "need_event_loop"]

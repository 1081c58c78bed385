"""The event loop an engine runs on when it is called from synchronous code (the CLI).

A coroutine is driven by hand while it needs no loop (``speed/coroutines.py``: a cached plan never
imports asyncio); at its first ``need_event_loop()`` the rest runs on a loop the runner owns,
kept for the engine's life (engine state such as provider controllers spans calls) and closed
with it. The caller may pass ``on_loop``, told ``True`` right before project code may run on the
loop and ``False`` once the loop has stopped; that is all it learns. ``cancel()`` may come from
any thread: the running task is cancelled, or the next one is at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, TypeVar

from rigcli.speed.coroutines import drive

if TYPE_CHECKING:
    from asyncio import AbstractEventLoop, Task

T = TypeVar("T")


class Runner:
    """Runs coroutines from synchronous code: by hand until they need a loop, then on its own loop."""

    def __init__(self) -> None:
        self._loop: AbstractEventLoop | None = None
        self._task: tuple[AbstractEventLoop, Task[object]] | None = None  # what the loop runs now
        self._cancelled = False

    def run(self, coro: Coroutine[object, object, T], *, on_loop: Callable[[bool], None] | None = None) -> T:
        """``coro``'s result; ``on_loop(True)`` right before the loop takes over, ``on_loop(False)`` after."""
        return drive(coro, lambda rest: self._finish_on_loop(rest, on_loop))

    def _finish_on_loop(self, rest: Awaitable[T], on_loop: Callable[[bool], None] | None) -> T:
        import asyncio

        from rigcli.speed.gc_policy import resume_collection

        resume_collection()  # project code is about to run: it makes garbage to collect
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        loop = self._loop

        async def finish() -> T:
            return await rest

        if on_loop is not None:
            on_loop(True)
        try:
            task = loop.create_task(finish())
            self._task = (loop, task)
            if self._cancelled:  # cancelled while we were getting here
                task.cancel()
            return loop.run_until_complete(task)
        finally:
            self._task = None
            if on_loop is not None:
                on_loop(False)

    def cancel(self) -> None:
        """Cancel the task the loop runs (from any thread), and every task after it."""
        self._cancelled = True
        current = self._task
        if current is not None:
            loop, task = current
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nothing left to cancel
                loop.call_soon_threadsafe(task.cancel)

    def close(self) -> None:
        """Close the loop (once its async generators are finished); idempotent."""
        if self._loop is not None:
            loop, self._loop = self._loop, None
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()


__all__ = ["Runner"]

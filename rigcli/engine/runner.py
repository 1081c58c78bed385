"""The event loop an engine runs on when it is called from synchronous code (the CLI).

A coroutine is driven by hand while it needs no loop (``speed/coroutines.py``: a cached plan never
imports asyncio); a sync hook it awaits then (``Blocking``) runs on a daemon thread while the
driving thread waits. At its first ``need_event_loop()`` the rest runs on a loop the runner owns,
kept for the engine's life (engine state such as provider controllers spans calls) and closed
with it. The caller may pass ``on_loop``, told ``True`` right before project code may run (on the
loop, or on a hook's thread) and ``False`` once it can no longer; that is all it learns.
``cancel()`` may come from any thread: the running task is cancelled (or the wait for a hook's
thread ends), or the next one is at once.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, TypeVar

from rigcli.errors import InterruptedRunError
from rigcli.speed.coroutines import Blocking, drive
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    from asyncio import AbstractEventLoop, Task

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_module("asyncio")


T = TypeVar("T")


class _ProjectCode:
    """Tells ``on_loop`` once that project code may run, and once that it no longer can."""

    def __init__(self, on_loop: Callable[[bool], None] | None) -> None:
        self._on_loop = on_loop
        self.told = False

    def starts(self) -> None:
        if not self.told:
            from rigcli.speed.gc_policy import resume_collection

            resume_collection()  # project code is about to run: it makes garbage to collect
            self.told = True
            if self._on_loop is not None:
                self._on_loop(True)

    def ended(self) -> None:
        if self.told:
            self.told = False
            if self._on_loop is not None:
                self._on_loop(False)


class Runner:
    """Runs coroutines from synchronous code: by hand until they need a loop, then on its own loop."""

    def __init__(self) -> None:
        self._loop: AbstractEventLoop | None = None
        self._task: tuple[AbstractEventLoop, Task[object]] | None = None  # what the loop runs now
        self._waiting: threading.Event | None = None  # set to end the wait for a hook's thread
        self._cancelled = False

    def run(self, coro: Coroutine[object, object, T], *, on_loop: Callable[[bool], None] | None = None) -> T:
        """``coro``'s result; ``on_loop(True)`` right before project code may run, ``on_loop(False)`` after."""
        project_code = _ProjectCode(on_loop)
        try:
            return drive(
                coro,
                lambda rest: self._finish_on_loop(rest, project_code),
                lambda call: self._block(call, project_code),
            )
        finally:
            project_code.ended()

    def _block(self, call: Blocking[object], project_code: _ProjectCode) -> object:
        """``call()`` on a daemon thread (after Ctrl-C a hook stuck in a sleep must not keep the
        interpreter alive), this thread waiting for it, or for ``cancel()``."""
        project_code.starts()
        if self._cancelled:
            raise InterruptedRunError("interrupted")
        woken = threading.Event()
        outcome: list[tuple[bool, object]] = []

        def target() -> None:
            try:
                outcome.append((True, call.call()))
            except BaseException as exc:  # handed to the waiting coroutine, which re-raises it
                outcome.append((False, exc))
            woken.set()

        self._waiting = woken
        try:
            threading.Thread(target=target, name=f"rig:{call.name}", daemon=True).start()
            if self._cancelled:  # cancelled while the thread was starting
                woken.set()
            woken.wait()
        finally:
            self._waiting = None
        if not outcome:  # cancel() ended the wait: the hook's commands are being stopped
            raise InterruptedRunError("interrupted")
        returned, value = outcome[0]
        if not returned:
            assert isinstance(value, BaseException)
            raise value
        return value

    def _finish_on_loop(self, rest: Awaitable[T], project_code: _ProjectCode) -> T:

        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        loop = self._loop

        async def finish() -> T:
            return await rest

        project_code.starts()
        try:
            task = loop.create_task(finish())
            self._task = (loop, task)
            if self._cancelled:  # cancelled while we were getting here
                task.cancel()
            return loop.run_until_complete(task)
        finally:
            self._task = None
            project_code.ended()

    def cancel(self) -> None:
        """Cancel the task the loop runs, or end the wait for a hook's thread (from any thread), and
        every task after it."""
        self._cancelled = True
        waiting = self._waiting
        if waiting is not None:
            waiting.set()
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

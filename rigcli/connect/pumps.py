"""A provider's blocking streams pumped to and from an event loop by a thread of their own.

Handing every chunk to an executor and awaiting it costs a round trip between threads per chunk
(and the GIL's switch interval on a busy loop): an SFTP upload is thousands of 32 KiB writes the
server answers one after another, and spent most of its time in those round trips. Here one thread
reads a stream for as long as it has output, and one writes what the loop queues, each bounded:
the loop only waits when the far side is slower than the near one.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
_BOUND = 64  # chunks waiting in either direction (at 256 KiB each, at most 16 MiB)
_GATHER = 1 << 20  # bytes gathered from the queue into one write
_BULK = 16 * 1024  # a chunk at least this big is bulk data: gathered before it is handed over
_HANDOFF = 1 << 20  # bytes gathered on the loop's side before a hand-over
_LINGER_S = 0.002  # the longest bulk data waits for more before it is handed over anyway
_TICK = 0.5  # seconds between a blocked thread's checks that it is still wanted


class Inbound(Generic[T]):
    """Calls ``read`` on its own thread until ``ended(chunk)``; the loop takes each chunk with ``get``."""

    def __init__(self, read: Callable[[], T], ended: Callable[[T], bool], name: str) -> None:
        self._loop = asyncio.get_running_loop()
        self._chunks: asyncio.Queue[T | BaseException] = asyncio.Queue()
        self._credit = threading.Semaphore(_BOUND)
        self._stopped = False
        self._thread = threading.Thread(target=self._run, args=(read, ended), name=name, daemon=True)
        self._thread.start()

    def _run(self, read: Callable[[], T], ended: Callable[[T], bool]) -> None:
        try:
            while not self._stopped:
                if not self._credit.acquire(timeout=_TICK):
                    continue
                chunk = read()
                self._post(chunk)
                if ended(chunk):
                    return
        except BaseException as exc:  # the loop's side raises it
            self._post(exc)

    def _post(self, item: T | BaseException) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is reading any more
            self._loop.call_soon_threadsafe(self._chunks.put_nowait, item)

    async def get(self) -> T:
        item = await self._chunks.get()
        self._credit.release()
        if isinstance(item, BaseException):
            raise item
        return item

    def stop(self) -> None:
        """Read no further (a read under way ends when its stream is closed)."""
        self._stopped = True


class Outbound:
    """Calls ``write`` on its own thread with what the loop ``put``; ``finish`` sends the end and waits."""

    def __init__(self, write: Callable[[bytes], None], close_write: Callable[[], None], name: str) -> None:
        self._queue: queue.Queue[bytes | None] = queue.Queue(_BOUND)
        self.error: BaseException | None = None
        self._abandoned = False
        self._pending: list[bytes] = []  # bulk data gathered on the loop's side before it is handed over
        self._pending_size = 0
        self._timer: asyncio.TimerHandle | None = None
        self._handing = False
        self._thread = threading.Thread(target=self._run, args=(write, close_write), name=name, daemon=True)
        self._thread.start()

    def _run(self, write: Callable[[bytes], None], close_write: Callable[[], None]) -> None:
        while not self._abandoned:
            try:
                data = self._queue.get(timeout=_TICK)
            except queue.Empty:
                continue
            if data is None:
                if self.error is None:
                    try:
                        close_write()
                    except BaseException as exc:
                        self.error = exc
                return
            if self.error is not None:
                continue  # what the stream could not take is dropped until the end is asked for
            data, end = self._more(data)
            try:
                write(data)
            except BaseException as exc:
                self.error = exc
            if end:
                self._queue.put(None)  # taken while gathering: handled as it came, after this write

    def _more(self, data: bytes) -> tuple[bytes, bool]:
        """``data`` and what else is queued already, up to ``_GATHER`` bytes, as one write: an SSH channel
        brings a packet at a time (often a few KiB), and a container's exec stream takes fewer, larger
        writes much faster (32 KiB writes: half the speed of 256 KiB ones)."""
        pieces = [data]
        size = len(data)
        while size < _GATHER:
            try:
                more = self._queue.get_nowait()
            except queue.Empty:
                break
            if more is None:
                return b"".join(pieces), True
            pieces.append(more)
            size += len(more)
        return (data if len(pieces) == 1 else b"".join(pieces)), False

    def abandon(self) -> None:
        """Write no further (the connection is gone): the thread ends within a tick."""
        self._abandoned = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def put(self, data: bytes) -> None:
        """Queue ``data``, waiting only while the queue is full; the writer's first error, if it had one.

        Bulk data (big chunks) is gathered up to ``_HANDOFF`` bytes, or for ``_LINGER_S``, before it is
        handed to the thread: every hand-over wakes it, and a thread woken for each packet costs the loop
        the GIL back and forth as often. Small writes (a keystroke, a request) go at once."""
        if self.error is not None:
            raise self.error
        self._pending.append(data)
        self._pending_size += len(data)
        if len(data) < _BULK or self._pending_size >= _HANDOFF:
            await self._hand_over()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(_LINGER_S, self._linger_over)

    def _taken(self) -> bytes:
        pending, self._pending, self._pending_size = self._pending, [], 0
        return pending[0] if len(pending) == 1 else b"".join(pending)

    async def _hand_over(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending:
            return
        data = self._taken()
        try:
            self._queue.put_nowait(data)
        except queue.Full:
            self._handing = True  # the timer waits: what it holds is newer than this
            try:
                await asyncio.get_running_loop().run_in_executor(None, self._queue.put, data)
            finally:
                self._handing = False

    def _linger_over(self) -> None:
        self._timer = None
        if not self._pending:
            return
        if not self._handing:
            data = self._taken()
            try:
                self._queue.put_nowait(data)
                return
            except queue.Full:
                self._pending.insert(0, data)
                self._pending_size = sum(len(item) for item in self._pending)
        self._timer = asyncio.get_running_loop().call_later(_LINGER_S, self._linger_over)

    async def finish(self) -> None:
        """Everything queued written, then the end of input; the writer's error, if it had one."""
        await self._hand_over()
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._queue.put, None)
        await loop.run_in_executor(None, self._thread.join)
        if self.error is not None:
            raise self.error


__all__ = ["Inbound", "Outbound"]

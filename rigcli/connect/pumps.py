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
_GATHER = 256 * 1024  # bytes gathered from the queue into one write (a bigger join holds the GIL longer)
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

    async def put(self, data: bytes) -> None:
        """Queue ``data`` (waiting only while the queue is full); the writer's first error, if it had one."""
        if self.error is not None:
            raise self.error
        try:
            self._queue.put_nowait(data)
        except queue.Full:
            await asyncio.get_running_loop().run_in_executor(None, self._queue.put, data)

    async def finish(self) -> None:
        """Everything queued written, then the end of input; the writer's error, if it had one."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._queue.put, None)
        await loop.run_in_executor(None, self._thread.join)
        if self.error is not None:
            raise self.error


__all__ = ["Inbound", "Outbound"]

"""Blocking provider streams (``provider_kit/connect.py``) and asyncio streams, joined.

Each provider call blocks, so it runs on a thread; a relay holds one for as long as its stream is
read, hence an executor with room for many (the default one has a handful per core).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, TypeVar

from rigcli.connect.pumps import Inbound, Outbound
from rigcli.provider_kit.connect import ByteStream

T = TypeVar("T")
CHUNK = 256 * 1024
_THREADS = 512


class AsyncReader(Protocol):
    async def read(self, n: int = -1) -> bytes: ...


class AsyncWriter(Protocol):
    def write(self, data: bytes) -> None: ...
    async def drain(self) -> None: ...
    def close(self) -> None: ...


class Closeable(Protocol):
    def close(self) -> None: ...


# Every provider stream a connection has open: closed at once when the connection ends (or rig is
# told to stop), so no thread stays blocked in a read and no program outlives the client.
OPEN: set[Closeable] = set()


def close_all() -> None:
    for item in list(OPEN):
        OPEN.discard(item)
        with contextlib.suppress(Exception):
            item.close()


def big_executor() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=_THREADS, thread_name_prefix="rig-connect")


async def blocking(call: Callable[..., T], *args: object) -> T:
    """``call(*args)`` on a thread of the loop's executor."""
    return await asyncio.get_running_loop().run_in_executor(None, call, *args)


async def relay(reader: AsyncReader, writer: AsyncWriter, stream: ByteStream) -> None:
    """Copy both ways between an asyncio connection and a provider's byte stream until the stream ends
    (the client's end of input closes the stream's write half). The stream's errors propagate."""

    upstream = Outbound(stream.write, stream.close_write, "rig-port-in")

    async def upward() -> None:
        try:
            while True:
                data = await reader.read(CHUNK)
                if not data:
                    await upstream.finish()
                    return
                await upstream.put(data)
        finally:
            upstream.abandon()

    sending = asyncio.ensure_future(upward())
    OPEN.add(stream)
    downstream = Inbound(lambda: stream.read(CHUNK), lambda data: not data, "rig-port-out")
    try:
        while True:
            data = await downstream.get()
            if not data:
                break
            writer.write(data)
            await writer.drain()
    finally:
        downstream.stop()
        sending.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await sending
        with contextlib.suppress(Exception):
            writer.close()
        OPEN.discard(stream)
        await blocking(stream.close)


__all__ = ["CHUNK", "OPEN", "big_executor", "blocking", "close_all", "relay"]

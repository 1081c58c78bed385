"""``direct-tcpip`` channels (``ssh -L``, ``ssh -D``, editors' port forwarding): each one a byte stream
to that port as seen from inside the machine (``SupportsPortStreams.open_port``)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from rigcli.connect.bridge import AsyncReader, AsyncWriter, blocking, relay
from rigcli.errors import RigError
from rigcli.provider_kit.connect import SupportsPortStreams
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    from rigcli.engine.connect_target import ConnectTarget

if TYPE_CHECKING:
    import asyncssh
else:
    asyncssh = lazy_module("asyncssh")


def port_handler(target: ConnectTarget, host: str, port: int) -> Callable[[AsyncReader, AsyncWriter], Awaitable[None]]:
    """What asyncssh runs for an accepted direct-tcpip channel."""

    controller = target.controller
    if not isinstance(controller, SupportsPortStreams):
        raise asyncssh.ChannelOpenError(
            asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED,
            f"the {target.provider_id} provider has no port streams (SupportsPortStreams)",
        )

    async def handle(reader: AsyncReader, writer: AsyncWriter) -> None:
        try:
            stream = await blocking(controller.open_port, target.resource, host, port)
            await relay(reader, writer, stream)
        except RigError as exc:
            print(f"rig: {target.workspace}: {exc}", file=sys.stderr, flush=True)
            writer.close()

    return handle


__all__ = ["port_handler"]

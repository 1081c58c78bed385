"""``rig ssh-proxy``: an SSH server (asyncssh) speaking on this process's stdin and stdout, inside an
OpenSSH ``ProxyCommand``; each channel becomes a provider primitive on the workspace's machine.

Nothing listens on the network: the connection is the pipe ssh gave us. The client is let in without
a password (the proxy runs as the user who can already ``rig exec``); the host key is the
workspace's own (``hostkeys.py``), which rig's known_hosts vouches for.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import TYPE_CHECKING, Any

from rigcli.connect.bridge import big_executor, close_all
from rigcli.speed.coroutines import need_event_loop
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    import asyncssh

    from rigcli.engine.connect_target import ConnectTarget
else:
    asyncssh = lazy_module("asyncssh")


class _StdioTransport(asyncio.Transport):
    """stdin's read pipe and stdout's write pipe as the one transport an SSH connection speaks on."""

    def __init__(self, reader: asyncio.ReadTransport, writer: asyncio.WriteTransport) -> None:
        super().__init__()
        self.reader = reader
        self.writer = writer
        self.closed = False
        self._pending: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        # Gathered until this turn of the loop ends: an SFTP upload answers thousands of writes, each a
        # small packet, and one pipe write per turn wakes ssh that much less often.
        if not self._pending:
            asyncio.get_running_loop().call_soon(self._flush)
        self._pending.append(bytes(data))

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if pending and not self.writer.is_closing():
            self.writer.write(b"".join(pending))

    def is_closing(self) -> bool:
        return self.writer.is_closing()

    def close(self) -> None:
        self._end(abort=False)

    def abort(self) -> None:
        self._end(abort=True)

    def _end(self, *, abort: bool) -> None:
        if self.closed:
            return
        self.closed = True
        if not abort:
            self._flush()
        with contextlib.suppress(Exception):  # the loop may be closing already
            self.reader.close()
            if self.writer.is_closing():  # ssh closed its end first: the transport is ending by itself
                return
            if abort:
                self.writer.abort()
            else:
                self.writer.close()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        if name in ("peername", "sockname"):
            return ("127.0.0.1", 0)
        return default

    def pause_reading(self) -> None:
        self.reader.pause_reading()

    def resume_reading(self) -> None:
        self.reader.resume_reading()


class _Inbound(asyncio.Protocol):
    """stdin, paused until the SSH connection has its transport (what the client says first must not
    reach it before: its answer would have nowhere to go)."""

    def __init__(self, connection: asyncio.Protocol) -> None:
        self.connection = connection

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        transport.pause_reading()

    def data_received(self, data: bytes) -> None:
        self.connection.data_received(data)

    def eof_received(self) -> bool:
        self.connection.eof_received()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.connection.connection_lost(exc)


class _Outbound(asyncio.Protocol):
    def __init__(self, connection: asyncio.Protocol) -> None:
        self.connection = connection

    def pause_writing(self) -> None:
        self.connection.pause_writing()

    def resume_writing(self) -> None:
        self.connection.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            self.connection.connection_lost(exc)


def _server_class() -> type[asyncssh.SSHServer]:
    from rigcli.connect.tcp import port_handler

    class RigServer(asyncssh.SSHServer):
        def __init__(self, target: ConnectTarget) -> None:
            self.target = target

        def begin_auth(self, username: str) -> bool:
            return False  # no authentication: whoever could start this proxy may already rig exec

        def connection_requested(  # type: ignore[override]
            self, dest_host: str, dest_port: int, orig_host: str, orig_port: int
        ) -> object:
            return port_handler(self.target, dest_host, dest_port)

        def server_requested(self, listen_host: str, listen_port: int) -> bool:
            return False  # ssh -R would need a listener inside the machine: not offered

    return RigServer


_PIPE_SIZE = 1 << 20
# The largest channel packet a client may send (asyncssh's default is 32 KiB; OpenSSH's own limit is
# 256 KiB): the proxy's cost is per packet, and sftp and scp write 255 KiB at a time when they may.
_PACKET = 256 * 1024
_F_SETPIPE_SZ = 1031  # Linux: fcntl's F_SETPIPE_SZ


def _widen_pipes() -> None:
    """ssh's pipes to its ProxyCommand hold 64 KiB: at that size a bulk transfer is a switch between
    ssh and this process every 64 KiB. 1 MiB pipes (where Linux allows) let each side do more per turn."""
    import fcntl

    for fd in (0, 1):
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, _F_SETPIPE_SZ, _PIPE_SIZE)


async def serve(target: ConnectTarget, key_file: str, *, agent: bool) -> None:
    """Serve one SSH connection on stdin/stdout until the client closes it."""

    from rigcli.connect.session import run_process
    from rigcli.connect.sftp import sftp_factory

    await need_event_loop()
    loop = asyncio.get_running_loop()
    loop.set_default_executor(big_executor())
    server = _server_class()
    options = await asyncssh.SSHServerConnectionOptions.construct(
        server_factory=lambda: server(target),  # type: ignore[call-arg]
        server_host_keys=[key_file],
        process_factory=lambda process: run_process(target, process),
        sftp_factory=sftp_factory(target),
        encoding=None,
        agent_forwarding=agent,
        allow_scp=False,
        x11_forwarding=False,
        keepalive_interval=0,
        max_pktsize=_PACKET,
        login_timeout=60,
    )
    options.waiter = loop.create_future()
    _widen_pipes()
    connection = asyncssh.SSHServerConnection(loop, options, wait="auth")
    read_transport, _ = await loop.connect_read_pipe(lambda: _Inbound(connection), os.fdopen(0, "rb", 0))
    write_transport, _ = await loop.connect_write_pipe(lambda: _Outbound(connection), os.fdopen(1, "wb", 0))
    connection.connection_made(_StdioTransport(read_transport, write_transport))
    read_transport.resume_reading()

    def stop() -> None:  # ssh hangs up on its ProxyCommand when it is done: end every program too
        close_all()
        connection.close()

    for signum in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop)
    try:
        await options.waiter
        await connection.wait_closed()
    except (asyncssh.Error, OSError, EOFError):
        pass
    finally:
        for signum in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
        await loop.run_in_executor(None, close_all)


__all__ = ["serve"]

"""Connections to the daemon that rig holds itself (unix, tcp, TLS, ssh): bytes both ways, and a write half to close.

What ``rawhttp`` speaks HTTP over, for a hijacked exec stream (see there). TLS (``rawtls``) goes
through memory BIOs so that closing the write half sends close_notify while the read half goes
on; ssh is ``docker system dial-stdio``, whose stdin and stdout are the two halves.
"""

from __future__ import annotations

import os
import select

from providers.docker.endpoint import Endpoint
from rigcli.errors import ProviderError
from rigcli.speed.sockets import SHUT_WR, Socket, unix_stream

# Not typing.TYPE_CHECKING: rig shell/exec's lean path imports no typing (rigcli/__init__.py); mypy
# treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

CONNECT_SECONDS = 10.0
READ_SIZE = 64 * 1024


class Connection:
    """One connection: ``send`` from one thread and ``recv`` from another are safe together."""

    def send(self, data: bytes) -> None:
        raise NotImplementedError

    def recv(self, size: int = READ_SIZE) -> bytes:
        """Some bytes, b"" at the end; blocks until there are some."""
        raise NotImplementedError

    def fileno(self) -> int:
        """What to select() on for reading (``ready()`` may be true without it)."""
        raise NotImplementedError

    def ready(self) -> bool:
        """Bytes are buffered already: ``recv`` will not block."""
        return False

    def set_timeout(self, seconds: float | None) -> None:
        """From now on ``recv`` (and ``send``) raise TimeoutError after ``seconds`` without progress (None: never)."""
        raise NotImplementedError

    def close_write(self) -> None:
        """The end of what we send (the program's stdin); reading goes on."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class SocketConnection(Connection):
    def __init__(self, sock: Socket) -> None:
        self.sock = sock

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def recv(self, size: int = READ_SIZE) -> bytes:
        return self.sock.recv(size)

    def fileno(self) -> int:
        return self.sock.fileno()

    def set_timeout(self, seconds: float | None) -> None:
        self.sock.settimeout(seconds)

    def close_write(self) -> None:
        try:  # noqa: SIM105 - contextlib is not imported for it (rig ls's lean path probes on this)
            self.sock.shutdown(SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        self.sock.close()


class SshConnection(Connection):
    """``ssh … docker system dial-stdio``: its stdin is what we send, its stdout what we read."""

    def __init__(self, host: str) -> None:
        from providers.docker.processes import spawn
        from providers.docker.ssh import ssh_argv

        try:
            self.process = spawn(ssh_argv(host))
        except FileNotFoundError:
            raise ProviderError(f"Cannot reach the Docker daemon at {host}: no ssh client on PATH") from None
        assert self.process.popen.stdin is not None and self.process.popen.stdout is not None
        self._stdin: Any = self.process.popen.stdin
        self._stdout = self.process.popen.stdout.fileno()
        self.host = host
        self._timeout: float | None = None

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._stdin.fileno(), view) :]

    def recv(self, size: int = READ_SIZE) -> bytes:
        if self._timeout is not None and not select.select([self._stdout], [], [], self._timeout)[0]:
            raise TimeoutError(f"no answer through ssh from {self.host} within {self._timeout:g}s")
        data = os.read(self._stdout, size)
        if not data:
            code = self.process.wait(5.0)
            if code:
                from providers.docker.ssh import describe_failure

                raise ProviderError(describe_failure(self.host, code, self.process.stderr_text()))
        return data

    def fileno(self) -> int:
        return self._stdout

    def set_timeout(self, seconds: float | None) -> None:
        self._timeout = seconds

    def close_write(self) -> None:
        try:  # noqa: SIM105 - as above
            self._stdin.close()
        except OSError:
            pass

    def close(self) -> None:
        self.process.stop()
        self.close_write()


def connect(endpoint: Endpoint, timeout: float = CONNECT_SECONDS) -> Connection:
    """A new connection to the daemon; ProviderError naming the endpoint when it cannot be had."""
    try:
        if endpoint.mode == "ssh":
            return SshConnection(endpoint.host)
        if endpoint.mode == "unix":
            sock = unix_stream()  # speed/sockets.py: a local daemon needs no `import socket`
            sock.settimeout(timeout)
            sock.connect(endpoint.socket_path)
            sock.settimeout(None)
            return SocketConnection(sock)
        from urllib.parse import urlsplit  # a tcp daemon only (urllib.parse imports ipaddress)

        address = urlsplit(endpoint.base_url)
        if endpoint.mode == "tls":
            from providers.docker.rawtls import connect_tls  # only a TLS endpoint loads ssl

            return connect_tls(endpoint, address.hostname or "", address.port or 2375, timeout)
        import socket

        sock = socket.create_connection((address.hostname or "", address.port or 2375), timeout=timeout)
        sock.settimeout(None)
        return SocketConnection(sock)
    except ProviderError:
        raise
    except OSError as exc:
        hint = "is dockerd running?" if endpoint.mode == "unix" else "is the host up and dockerd listening there?"
        raise ProviderError(f"Cannot reach the Docker daemon at {endpoint.host}: unreachable ({exc}); {hint}") from None


__all__ = ["CONNECT_SECONDS", "READ_SIZE", "Connection", "SocketConnection", "SshConnection", "connect"]

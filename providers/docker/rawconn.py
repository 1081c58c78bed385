"""Connections to the daemon that rig holds itself (unix, tcp, TLS, ssh): bytes both ways, and a write half to close.

What ``rawhttp`` speaks HTTP over, for a hijacked exec stream (see there). TLS goes through
memory BIOs so that closing the write half sends close_notify while the read half goes on; ssh
is ``docker system dial-stdio``, whose stdin and stdout are the two halves.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import ssl
import threading
from typing import Any
from urllib.parse import urlsplit

from providers.docker.endpoint import Endpoint
from rigcli.errors import ProviderError

CONNECT_SECONDS = 10.0
_READ = 64 * 1024


class Connection:
    """One connection: ``send`` from one thread and ``recv`` from another are safe together."""

    def send(self, data: bytes) -> None:
        raise NotImplementedError

    def recv(self, size: int = _READ) -> bytes:
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
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def recv(self, size: int = _READ) -> bytes:
        return self.sock.recv(size)

    def fileno(self) -> int:
        return self.sock.fileno()

    def set_timeout(self, seconds: float | None) -> None:
        self.sock.settimeout(seconds)

    def close_write(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.sock.close()


class TlsConnection(SocketConnection):
    """TLS through memory BIOs: socket I/O happens outside the lock, the TLS object only inside it."""

    def __init__(self, sock: socket.socket, context: ssl.SSLContext, hostname: str) -> None:
        super().__init__(sock)
        self._in, self._out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._in, self._out, server_hostname=hostname)
        self._lock = threading.Lock()  # the TLS object
        self._sending = threading.Lock()  # taking bytes from the outgoing BIO and sending them stay in order
        while True:
            try:
                with self._lock:
                    self._tls.do_handshake()
                self._flush()
                return
            except ssl.SSLWantReadError:
                self._flush()
                if not self._fill():
                    raise ConnectionError("the daemon closed the connection during the TLS handshake") from None

    def _flush(self) -> None:
        with self._sending:
            with self._lock:
                pending = self._out.read()
            if pending:
                self.sock.sendall(pending)

    def _fill(self) -> bool:
        data = self.sock.recv(_READ)
        with self._lock:
            if data:
                self._in.write(data)
            else:
                self._in.write_eof()
        return bool(data)

    def send(self, data: bytes) -> None:
        with self._lock:
            self._tls.write(data)
        self._flush()

    def recv(self, size: int = _READ) -> bytes:
        while True:
            try:
                with self._lock:
                    data = self._tls.read(size)
                self._flush()  # reading may answer the peer (a key update)
                return data
            except ssl.SSLZeroReturnError:
                return b""
            except ssl.SSLWantReadError:
                self._flush()
                if not self._fill():
                    with contextlib.suppress(ssl.SSLError), self._lock:
                        return self._tls.read(size)
                    return b""

    def ready(self) -> bool:
        with self._lock:
            return self._tls.pending() > 0 or self._in.pending > 0

    def close_write(self) -> None:
        with contextlib.suppress(ssl.SSLWantReadError, ssl.SSLError), self._lock:
            self._tls.unwrap()  # close_notify: the daemon reads the end of stdin, and keeps writing
        with contextlib.suppress(OSError):
            self._flush()


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

    def recv(self, size: int = _READ) -> bytes:
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
        with contextlib.suppress(OSError):
            self._stdin.close()

    def close(self) -> None:
        self.process.stop()
        self.close_write()


def connect(endpoint: Endpoint, timeout: float = CONNECT_SECONDS) -> Connection:
    """A new connection to the daemon; ProviderError naming the endpoint when it cannot be had."""
    try:
        if endpoint.mode == "ssh":
            return SshConnection(endpoint.host)
        if endpoint.mode == "unix":
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            sock.connect(endpoint.socket_path)
            sock.settimeout(None)
            return SocketConnection(sock)
        address = urlsplit(endpoint.base_url)
        sock = socket.create_connection((address.hostname or "", address.port or 2375), timeout=timeout)
        sock.settimeout(None)
        if endpoint.mode == "tls":
            return TlsConnection(sock, endpoint.ssl_context(), address.hostname or "")
        return SocketConnection(sock)
    except ssl.SSLError as exc:
        from providers.docker.errors import transport_error

        raise transport_error(endpoint, exc, "connect") from None
    except OSError as exc:
        hint = "is dockerd running?" if endpoint.mode == "unix" else "is the host up and dockerd listening there?"
        raise ProviderError(f"Cannot reach the Docker daemon at {endpoint.host}: unreachable ({exc}); {hint}") from None


__all__ = ["CONNECT_SECONDS", "Connection", "SocketConnection", "SshConnection", "TlsConnection", "connect"]

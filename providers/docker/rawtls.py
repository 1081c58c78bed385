"""A TLS connection to the daemon that rig holds itself (made by ``rawconn``), loaded only for a TLS endpoint.

TLS goes through memory BIOs so that closing the write half sends close_notify while the read
half goes on (the end of a program's stdin, with its output still to come).
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading

from providers.docker.connection import READ_SIZE, SocketConnection
from providers.docker.endpoint import Endpoint
from providers.docker.errors import out_of_time, transport_error
from rigcli.timeouts import Bound


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
        data = self.sock.recv(READ_SIZE)
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

    def recv(self, size: int = READ_SIZE) -> bytes:
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


def connect_tls(endpoint: Endpoint, hostname: str, port: int, bound: Bound) -> TlsConnection:
    """A TLS connection to the daemon, the connect and the handshake each within ``bound``; a TLS failure is
    the one-line error naming what failed."""
    context = endpoint.ssl_context()
    sock = socket.create_connection((hostname, port), timeout=bound.seconds)
    try:
        connection = TlsConnection(sock, context, hostname)
    except ssl.SSLError as exc:
        sock.close()
        raise transport_error(endpoint, exc, "connect") from None
    except TimeoutError:  # something accepted the connection and never finished the handshake
        sock.close()
        raise out_of_time(endpoint, "no TLS handshake", bound) from None
    except BaseException:
        sock.close()
        raise
    sock.settimeout(None)
    return connection


__all__ = ["TlsConnection", "connect_tls"]

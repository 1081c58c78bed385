"""Making a connection to the daemon that rig holds itself (unix, tcp, TLS, ssh), each within its bound.

What ``rawhttp`` speaks HTTP over (``connection``): a unix or tcp socket, TLS through memory BIOs
(``rawtls``, loaded for a TLS endpoint only), or ssh: ``docker system dial-stdio``, whose stdin
and stdout are the two halves. Connecting (and a TLS handshake) is bounded by
RIG_CONNECT_TIMEOUT, over ssh by ssh's own ConnectTimeout; running out of it is an
UnreachableError naming the endpoint and the bound (``rigcli/timeouts.py``).
"""

from __future__ import annotations

import os
import select

from providers.docker.connection import READ_SIZE, Connection, SocketConnection
from providers.docker.endpoint import Endpoint
from providers.docker.errors import out_of_time
from rigcli.errors import ProviderError
from rigcli.speed.lazy_modules import lazy_module
from rigcli.speed.sockets import unix_stream
from rigcli.timeouts import Bound, connect_bound

# Not typing.TYPE_CHECKING: rig shell/exec answered from the cache imports no typing (rigcli/__init__.py); mypy
# treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    import socket
    import urllib.parse as urllib_parse
else:
    urllib_parse = lazy_module("urllib.parse")
    socket = lazy_module("socket")


class SshConnection(Connection):
    """``ssh … docker system dial-stdio``: its stdin is what we send, its stdout what we read."""

    def __init__(self, host: str, connecting: Bound) -> None:
        from providers.docker.processes import spawn
        from providers.docker.ssh_command import ssh_argv

        try:
            self.process = spawn(ssh_argv(host, connecting))
        except FileNotFoundError:
            raise ProviderError(f"Cannot reach the Docker daemon at {host}: no ssh client on PATH") from None
        assert self.process.popen.stdin is not None and self.process.popen.stdout is not None
        self._stdin: Any = self.process.popen.stdin
        self._stdout = self.process.popen.stdout.fileno()
        self.host = host
        self.connecting = connecting
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
                from providers.docker.ssh_command import describe_failure

                raise ProviderError(describe_failure(self.host, code, self.process.stderr_text(), self.connecting))
        return data

    def fileno(self) -> int:
        return self._stdout

    def set_timeout(self, seconds: float | None) -> None:
        self._timeout = seconds

    def close_write(self) -> None:
        try:  # noqa: SIM105 - contextlib is not imported for it (rig ls answered from the cache probes on this)
            self._stdin.close()
        except OSError:
            pass

    def close(self) -> None:
        self.process.stop()
        self.close_write()


def connect(endpoint: Endpoint, bound: Bound | None = None) -> Connection:
    """A new connection to the daemon within ``bound`` (default RIG_CONNECT_TIMEOUT); a ProviderError naming
    the endpoint when it cannot be had (an UnreachableError naming the bound when it ran out)."""
    bound = bound or connect_bound()
    try:
        if endpoint.mode == "ssh":
            return SshConnection(endpoint.host, bound)
        if endpoint.mode == "unix":
            sock = unix_stream()  # speed/sockets.py: a local daemon needs no `import socket`
            sock.settimeout(bound.seconds)
            sock.connect(endpoint.socket_path)
            sock.settimeout(None)
            return SocketConnection(sock)

        address = urllib_parse.urlsplit(endpoint.base_url)
        if endpoint.mode == "tls":
            from providers.docker.rawtls import connect_tls  # only a TLS endpoint loads ssl

            return connect_tls(endpoint, address.hostname or "", address.port or 2375, bound)

        sock = socket.create_connection((address.hostname or "", address.port or 2375), timeout=bound.seconds)
        sock.settimeout(None)
        return SocketConnection(sock)
    except ProviderError:
        raise
    except TimeoutError:
        raise out_of_time(endpoint, "no connection", bound) from None
    except OSError as exc:
        hint = "is dockerd running?" if endpoint.mode == "unix" else "is the host up and dockerd listening there?"
        raise ProviderError(f"Cannot reach the Docker daemon at {endpoint.host}: unreachable ({exc}); {hint}") from None


__all__ = ["SshConnection", "connect"]

"""ssh:// daemons: each HTTP connection is ``ssh … -- docker system dial-stdio``, bridged to httpx through its pipes.

Why dial-stdio rather than forwarding the remote socket (``ssh -L local.sock:/var/run/docker.sock``):
it is exactly what ``docker -H ssh://…`` runs, so whatever works for the user's docker CLI works
for rig — the remote account's own DOCKER_HOST or context, a rootless daemon, a socket in an
unusual place, and sshd configurations that forbid stream-local forwarding. No socket file
appears on the client for other local users to find, and no forwarder has to be started,
awaited and watched. The cost is one ssh process per pooled connection; httpcore's pool keeps
them open for reuse. Nothing here speaks HTTP: the pipes become an httpcore network stream and
httpx does the rest.

ssh runs with ``BatchMode=yes`` (never a prompt inside a live view) and otherwise as the user
configured it: ``~/.ssh/config``, keys, agent, known hosts. Each process is owned by rig
(``processes.spawn``): its own process group, stopped when the connection closes, when the
client is closed, at exit, and by the kernel if rig is killed outright.
"""

from __future__ import annotations

import contextlib
import os
import select
import weakref
from collections.abc import Iterable
from typing import Any

from providers.docker.httpx_lib import load_httpx
from providers.docker.processes import OwnedProcess, spawn
from providers.docker.ssh_command import describe_failure, ssh_argv
from rigcli.timeouts import Bound, connect_bound

load_httpx()  # httpx with its optional imports hidden (httpx_lib.py); the imports below find them loaded
import httpcore  # noqa: E402
import httpx  # noqa: E402

_EXIT_WAIT = 5.0  # at EOF, how long ssh may take to exit and explain itself


class SshConnectionError(httpcore.ReadError):
    """ssh itself failed (authentication, host key, unreachable, no docker there); the message is one line."""


def _ready(fd: int, event: int, timeout: float | None) -> bool:
    poller = select.poll()  # not select(): rig may hold more than FD_SETSIZE descriptors
    poller.register(fd, event)
    return bool(poller.poll(None if timeout is None else max(0, int(timeout * 1000))))


class SshStream(httpcore.NetworkStream):
    """One HTTP connection: bytes in through ssh's stdin, out through its stdout."""

    def __init__(self, process: OwnedProcess, host: str, connecting: Bound) -> None:
        assert process.popen.stdin is not None and process.popen.stdout is not None
        self._process = process
        self._host = host
        self._connecting = connecting  # ssh's ConnectTimeout, named when ssh gave up waiting
        self._stdin = process.popen.stdin
        self._stdout = process.popen.stdout
        os.set_blocking(self._stdin.fileno(), False)  # a full pipe must not block past the write timeout
        # A pool dropped without close() (a controller nobody closed) must not leave its ssh behind.
        weakref.finalize(self, process.stop)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if not _ready(self._stdout.fileno(), select.POLLIN, timeout):
            raise httpcore.ReadTimeout(f"no answer through ssh from {self._host} within {timeout:g}s")
        try:
            data = os.read(self._stdout.fileno(), max_bytes)
        except OSError as exc:
            raise httpcore.ReadError(str(exc)) from exc
        if not data:
            self._raise_if_ssh_failed()
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        view = memoryview(buffer)
        while view:
            if not _ready(self._stdin.fileno(), select.POLLOUT, timeout):
                raise httpcore.WriteTimeout(f"ssh to {self._host} took no input for {timeout:g}s")
            try:
                view = view[os.write(self._stdin.fileno(), view) :]
            except BlockingIOError:
                continue
            except OSError as exc:  # EPIPE: ssh is gone
                self._raise_if_ssh_failed()
                raise httpcore.WriteError(f"ssh to {self._host} closed the connection ({exc})") from exc

    def _raise_if_ssh_failed(self) -> None:
        """At EOF: a failed ssh explains itself better than "server disconnected" would."""
        code = self._process.wait(_EXIT_WAIT)
        if code:
            failure = describe_failure(self._host, code, self._process.stderr_text(), self._connecting)
            raise SshConnectionError(failure)

    def close(self) -> None:
        self._process.stop()
        for pipe in (self._stdin, self._stdout):
            with contextlib.suppress(OSError):
                pipe.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("TLS inside an ssh connection to a Docker daemon is not supported")

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # how httpcore notices that an idle connection's ssh has gone
            return _ready(self._stdout.fileno(), select.POLLIN, 0)
        return None


class SshDialer(httpcore.NetworkBackend):
    """A network backend whose every connection is a new ``ssh … docker system dial-stdio`` process."""

    def __init__(self, host: str) -> None:
        self.host = host

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        connecting = connect_bound()
        try:
            process = spawn(ssh_argv(self.host, connecting))
        except FileNotFoundError:
            raise httpcore.ConnectError(
                f"Cannot reach the Docker daemon at {self.host}: no ssh client on PATH (install OpenSSH)"
            ) from None
        return SshStream(process, self.host, connecting)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        return self.connect_tcp("docker", 80, timeout)


class SshTransport(httpx.HTTPTransport):
    """httpx's own transport with a pool that dials through ssh."""

    def __init__(self, host: str) -> None:
        super().__init__()
        # httpx offers no network-backend option, httpcore's pool does; everything else stays httpx's.
        self._pool = httpcore.ConnectionPool(
            network_backend=SshDialer(host), max_connections=16, max_keepalive_connections=8, keepalive_expiry=30.0
        )


__all__ = ["SshConnectionError", "SshDialer", "SshStream", "SshTransport"]

"""``rig forward``: local TCP listeners whose connections are relayed to ports inside a workspace's machine
(``SupportsPortStreams.open_port``), each connection on threads of its own.

Every listener is bound before anything is printed, so a local port in use ends the command with
nothing listening. A connection the machine refuses closes only that client; the forward goes on.
"""

from __future__ import annotations

import contextlib
import errno
import selectors
import socket
import threading
from collections.abc import Callable, Sequence

from rigcli.errors import RigError, UsageError
from rigcli.provider_kit.connect import ByteStream
from rigcli.speed.records import lazy_dataclass

_CHUNK = 256 * 1024
_LINGER = 60.0  # seconds a client may go on sending after the machine's side has ended


@lazy_dataclass(frozen=True)
class PortSpec:
    """One forward asked for: ``local`` None means the same number when free, else any free one."""

    remote: int
    local: int | None
    protocol: str = "http"


def parse_specs(specs: Sequence[str]) -> list[PortSpec]:
    """``REMOTE`` or ``LOCAL:REMOTE`` (``ssh -L``/kubectl style; LOCAL 0: any free port)."""
    parsed = []
    for spec in specs:
        local_text, _, remote_text = spec.rpartition(":")
        try:
            remote = int(remote_text)
            local = int(local_text) if local_text else remote
        except ValueError:
            raise UsageError(
                f"rig forward: {spec!r} is not a port spec ([LOCAL:]REMOTE, e.g. 3000 or 8080:80)"
            ) from None
        if not 1 <= remote <= 65535 or not 0 <= local <= 65535:
            raise UsageError(f"rig forward: {spec!r} names a port outside 1-65535 (LOCAL may be 0: any free port)")
        parsed.append(PortSpec(remote, local))
    return parsed


class Forward:
    """One listening socket and the port inside the machine it leads to."""

    def __init__(self, spec: PortSpec, address: str) -> None:
        self.remote = spec.remote
        self.address = address
        self.scheme = "https" if spec.protocol == "https" else "http"
        if spec.local is None:
            self.listener = _listen(address, spec.remote, fallback=True)
        else:
            self.listener = _listen(address, spec.local, fallback=False)
        self.local = int(self.listener.getsockname()[1])

    @property
    def url(self) -> str:
        host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(self.address, self.address)
        return f"{self.scheme}://{f'[{host}]' if ':' in host else host}:{self.local}"

    def to_json(self, workspace: str) -> dict[str, object]:
        return {
            "workspace": workspace,
            "remote": self.remote,
            "local": self.local,
            "address": self.address,
            "url": self.url,
        }


def _listen(address: str, port: int, *, fallback: bool) -> socket.socket:
    """A socket listening on ``address:port`` (with ``fallback``, on any free port when that one is taken)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    for number in (port, 0) if fallback else (port,):
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address, number))
        except OSError as exc:
            sock.close()
            if exc.errno != errno.EADDRINUSE:
                raise RigError(f"Cannot listen on {address}:{number}: {exc.strerror or exc}") from None
            if not fallback:
                raise RigError(f"Local port {number} on {address} is in use") from None
            continue
        sock.listen(64)
        return sock
    raise AssertionError("unreachable: port 0 is always free")


def open_forwards(specs: Sequence[PortSpec], address: str) -> list[Forward]:
    """Every listener bound (declared ports first on their own number), or none: the first failure closes them."""
    opened: list[Forward] = []
    try:
        for spec in specs:
            opened.append(Forward(spec, address))
    except BaseException:
        for forward in opened:
            forward.listener.close()
        raise
    return opened


class Relays:
    """Accepts on the forwards' listeners until interrupted; relays each connection on two threads."""

    def __init__(self, open_port: Callable[[int], ByteStream], refused: Callable[[int, str], None]) -> None:
        self.open_port = open_port
        self.refused = refused
        self._open: set[socket.socket | ByteStream] = set()
        self._lock = threading.Lock()

    def serve(self, forwards: Sequence[Forward]) -> None:
        """Blocks until a signal unwinds it (the caller closes everything with ``close``)."""
        with selectors.DefaultSelector() as selector:
            for forward in forwards:
                selector.register(forward.listener, selectors.EVENT_READ, forward)
            while True:
                for key, _ in selector.select():
                    forward = key.data
                    try:
                        client, _ = forward.listener.accept()
                    except OSError:
                        continue
                    threading.Thread(target=self._connection, args=(client, forward.remote), daemon=True).start()

    def _hold(self, item: socket.socket | ByteStream) -> None:
        with self._lock:
            self._open.add(item)

    def _let_go(self, item: socket.socket | ByteStream) -> None:
        with self._lock:
            self._open.discard(item)
        with contextlib.suppress(Exception):
            if isinstance(item, socket.socket):
                item.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked on it
            item.close()

    def _connection(self, client: socket.socket, remote: int) -> None:
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._hold(client)
        stream: ByteStream | None = None
        try:
            stream = self.open_port(remote)
            self._hold(stream)
            upward = threading.Thread(target=self._upward, args=(client, stream), daemon=True)
            upward.start()
            while True:
                data = stream.read(_CHUNK)
                if not data:
                    break
                client.sendall(data)
            with contextlib.suppress(OSError):
                client.shutdown(socket.SHUT_WR)
            upward.join(_LINGER)  # the client's last words, if it has any; then its connection is closed
        except RigError as exc:
            self.refused(remote, str(exc))
        except OSError:
            pass  # the client went away: only its connection ends
        finally:
            if stream is not None:
                self._let_go(stream)
            self._let_go(client)

    def _upward(self, client: socket.socket, stream: ByteStream) -> None:
        try:
            while True:
                data = client.recv(_CHUNK)
                if not data:
                    break
                stream.write(data)
            stream.close_write()
        except (OSError, RigError):
            pass  # the stream's end says what went wrong, on the other thread

    def close(self) -> None:
        with self._lock:
            items = list(self._open)
        for item in items:
            self._let_go(item)


__all__ = ["Forward", "PortSpec", "Relays", "open_forwards", "parse_specs"]

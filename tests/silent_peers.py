"""Peers that accept a connection and never answer: what every bounded wait in rig is tested against.

``Silent`` listens on a unix socket or a loopback tcp port, accepts every connection and keeps it
open without a byte in reply (a daemon that hangs, a TLS port that never finishes a handshake, an
ssh host that never sends its banner, a database that never starts a session). ``Relay`` forwards
to a real server until it is told to go quiet, or until the server said it is ready for a first
statement (PostgreSQL's ReadyForQuery), and from then on swallows what the client sends: the
connection was made, and the answer never comes. Each runs on a daemon thread of the test process
and closes what it holds when its ``with`` block ends.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType


class _Server:
    """A listening socket served on a thread until ``close``; what it accepted is closed with it."""

    def __init__(self, listener: socket.socket) -> None:
        self.listener = listener
        self.listener.settimeout(0.1)
        address = listener.getsockname()
        self.port = int(address[1]) if isinstance(address, tuple) else 0  # tcp only
        self._stop = threading.Event()
        self._held: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._thread = threading.Thread(target=self._accept, name="silent-peer", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue
            self._held.append(conn)
            self.serve(conn)

    def serve(self, conn: socket.socket) -> None:
        """What to do with an accepted connection: by default, nothing at all."""

    def spawn(self, target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)  # type: ignore[arg-type]
        self._threads.append(thread)
        thread.start()

    @property
    def accepted(self) -> int:
        return len(self._held)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for conn in self._held:
            with contextlib.suppress(OSError):
                conn.close()
        self.listener.close()
        for thread in self._threads:
            thread.join(5)

    def __enter__(self) -> _Server:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


class Silent(_Server):
    """Accepts and never answers."""

    @classmethod
    def unix(cls, path: Path) -> Silent:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        listener.listen(64)
        return cls(listener)

    @classmethod
    def tcp(cls) -> Silent:
        return cls(socket.create_server(("127.0.0.1", 0), backlog=64))


class Relay(_Server):
    """Forwards to ``target`` (``(host, port)``, or a unix socket's path) until it goes quiet: ``quiet()`` by
    hand, or by itself once a PostgreSQL server said ReadyForQuery (``after_ready``). Quiet, it answers
    nothing and forwards nothing; a connection made then is held open, unanswered."""

    def __init__(self, listener: socket.socket, target: tuple[str, int] | str, *, after_ready: bool = False) -> None:
        self.target = target
        self.after_ready = after_ready
        self._quiet = threading.Event()
        super().__init__(listener)

    @classmethod
    def tcp(cls, target: tuple[str, int], *, after_ready: bool = False) -> Relay:
        return cls(socket.create_server(("127.0.0.1", 0), backlog=64), target, after_ready=after_ready)

    @classmethod
    def unix(cls, path: Path, target: str) -> Relay:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        listener.listen(64)
        return cls(listener, target)

    def quiet(self) -> None:
        self._quiet.set()

    def serve(self, conn: socket.socket) -> None:
        if self._quiet.is_set():
            return  # held open, never answered
        if isinstance(self.target, str):
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(self.target)
        else:
            upstream = socket.create_connection(self.target, timeout=10)
            upstream.settimeout(None)
        self._held.append(upstream)
        self.spawn(self._pump, conn, upstream)

    def _pump(self, client: socket.socket, server: socket.socket) -> None:
        """Both ways until both ends are done, an end's half-close passed on (a hijacked exec's stdin ends so)."""
        ready_seen, pending = False, b""
        open_ends = [client, server]
        with contextlib.suppress(OSError):
            while open_ends and not self._stop.is_set():
                readable, _, _ = select.select(open_ends, [], [], 0.1)
                for source in readable:
                    other = server if source is client else client
                    data = source.recv(65536)
                    if not data:
                        open_ends.remove(source)
                        if not (self._quiet.is_set() or ready_seen):
                            with contextlib.suppress(OSError):
                                other.shutdown(socket.SHUT_WR)
                        continue
                    if self._quiet.is_set() or ready_seen:
                        continue  # swallowed: the answer never comes
                    other.sendall(data)
                    if source is server and self.after_ready:
                        pending += data
                        ready_seen, pending = _ready_for_query(pending)
        if not (self._quiet.is_set() or ready_seen):
            for end in (client, server):
                with contextlib.suppress(OSError):
                    end.close()


def _ready_for_query(buffer: bytes) -> tuple[bool, bytes]:
    """Whether the server's typed messages in ``buffer`` include ReadyForQuery ('Z'); what is left unparsed."""
    while len(buffer) >= 5:
        length = int.from_bytes(buffer[1:5], "big")
        if len(buffer) < 1 + length:
            break
        if buffer[:1] == b"Z":
            return True, b""
        buffer = buffer[1 + length :]
    return False, buffer


@contextlib.contextmanager
def silent_unix_socket(folder: Path, name: str = "docker.sock") -> Iterator[str]:
    """``unix://...`` of a socket that accepts and never answers."""
    path = folder / name
    with Silent.unix(path):
        yield f"unix://{path}"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


__all__ = ["Relay", "Silent", "silent_unix_socket"]

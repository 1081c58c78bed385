"""A connection to the daemon that rig holds itself: what ``rawhttp`` speaks over, and its unix or tcp kind.

``send`` from one thread and ``recv`` from another are safe together, and the write half closes
alone: a hijacked exec stream (``rawhttp``) sends the program's stdin and reads its output at
once, and the end of that stdin is a closed write half while the output goes on. The TLS kind is
``rawtls``, the ssh kind and making any of them ``rawconn``.
"""

from __future__ import annotations

from rigcli.speed.sockets import SHUT_WR, Socket

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
        try:  # noqa: SIM105 - contextlib is not imported for it (rig ls answered from the cache probes on this)
            self.sock.shutdown(SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        self.sock.close()


__all__ = ["READ_SIZE", "Connection", "SocketConnection"]

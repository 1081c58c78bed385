"""A local machine's connect primitives: programs on the host in the machine's directory, as streams;
ports are the host's own; files through the host's ``tar``."""

from __future__ import annotations

import contextlib
import fcntl
import getpass
import os
import selectors
import signal
import socket
import struct
import subprocess
import termios
from collections.abc import Mapping, Sequence

from rigcli.errors import ProviderError
from rigcli.provider_kit.connect import (
    STDERR,
    STDOUT,
    ByteStream,
    ExitStatus,
    MachineFacts,
    PortRefusedError,
    PtyRequest,
)

_READ_SIZE = 256 * 1024


def _controlling_terminal() -> None:
    """In the child, before exec: its pty (stdin) becomes its controlling terminal."""

    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _set_size(fd: int, columns: int, rows: int) -> None:
    with contextlib.suppress(OSError):
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))


class LocalExec:
    """A host process in its own session: pipes for stdin, stdout and stderr, or one pty."""

    def __init__(self, argv: Sequence[str], *, pty: PtyRequest | None, env: Mapping[str, str], cwd: str) -> None:
        self._selector = selectors.DefaultSelector()
        self._master: int | None = None
        if pty is not None:
            master, slave = os.openpty()
            _set_size(master, pty.columns, pty.rows)
            try:
                self.popen = subprocess.Popen(
                    list(argv),
                    stdin=slave,
                    stdout=slave,
                    stderr=slave,
                    cwd=cwd,
                    env=dict(env),
                    start_new_session=True,
                    preexec_fn=_controlling_terminal,
                )
            except OSError:
                os.close(master)
                raise
            finally:
                os.close(slave)
            self._master = master
            self._selector.register(master, selectors.EVENT_READ, STDOUT)
        else:
            self.popen = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=dict(env),
                start_new_session=True,
            )
            assert self.popen.stdout is not None and self.popen.stderr is not None
            self._selector.register(self.popen.stdout.fileno(), selectors.EVENT_READ, STDOUT)
            self._selector.register(self.popen.stderr.fileno(), selectors.EVENT_READ, STDERR)

    def read(self) -> tuple[int, bytes]:
        while self._selector.get_map():
            for key, _ in self._selector.select():
                fd = int(key.fd)
                try:
                    data = os.read(fd, _READ_SIZE)
                except OSError:  # a pty whose last holder closed it reads EIO
                    data = b""
                if data:
                    return int(key.data), data
                self._selector.unregister(fd)
        return 0, b""

    def write(self, data: bytes) -> None:
        fd = self._master if self._master is not None else self._stdin_fd()
        if fd is None:
            return
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(fd, view) :]
        except (BrokenPipeError, OSError):
            pass  # the program stopped reading: what it did not take is lost, as with sshd

    def _stdin_fd(self) -> int | None:
        stdin = self.popen.stdin
        return None if stdin is None or stdin.closed else stdin.fileno()

    def close_stdin(self) -> None:
        if self._master is not None:
            self.write(b"\x04")  # a terminal's end of input is ^D
            return
        if self.popen.stdin is not None:
            with contextlib.suppress(OSError):
                self.popen.stdin.close()

    def resize(self, columns: int, rows: int) -> None:
        if self._master is not None:
            _set_size(self._master, columns, rows)
            with contextlib.suppress(OSError):
                os.killpg(self.popen.pid, signal.SIGWINCH)

    def signal(self, name: str) -> None:
        number = getattr(signal, f"SIG{name}", None)
        if number is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.popen.pid, number)

    def wait(self) -> ExitStatus:
        code = self.popen.wait()
        if code < 0:
            return ExitStatus(None, signal.Signals(-code).name[3:])
        return ExitStatus(code)

    def close(self) -> None:
        if self.popen.poll() is None:
            self.signal("HUP")
            try:
                self.popen.wait(2.0)
            except subprocess.TimeoutExpired:
                self.signal("KILL")
                self.popen.wait()
        for handle in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if handle is not None:
                with contextlib.suppress(OSError):
                    handle.close()
        if self._master is not None:
            with contextlib.suppress(OSError):
                os.close(self._master)
            self._master = None
        self._selector.close()


class SocketStream:
    """A TCP connection as a ``ByteStream``."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def read(self, size: int = 65536) -> bytes:
        try:
            return self.sock.recv(size)
        except OSError:
            return b""

    def write(self, data: bytes) -> None:
        self.sock.sendall(data)

    def close_write(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        with contextlib.suppress(OSError):  # wakes a thread blocked reading it (close alone does not)
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


def open_port(host: str, port: int) -> ByteStream:
    try:
        sock = socket.create_connection((host, port), timeout=10.0)
    except ConnectionRefusedError:
        raise PortRefusedError(f"connection to {host}:{port} refused") from None
    except OSError as exc:
        raise PortRefusedError(f"connection to {host}:{port} failed: {exc.strerror or exc}") from None
    sock.settimeout(None)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return SocketStream(sock)


def facts(workdir: str) -> MachineFacts:
    try:
        user = getpass.getuser()
    except (OSError, KeyError):
        user = str(os.getuid())
    return MachineFacts(user=user, workdir=workdir)


def require_dir(path: str, machine_id: str) -> None:
    if not os.path.isdir(path):
        raise ProviderError(f"Local machine {machine_id} is gone (no directory at {path})")


__all__ = ["LocalExec", "SocketStream", "facts", "open_port", "require_dir"]

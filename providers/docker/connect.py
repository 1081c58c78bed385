"""A container's connect primitives: execs as streams on hijacked connections, ports through a relay
exec (containers run without a network), files through the Engine's archive API (tar streams).

Shared by the ``swarm`` provider, which speaks to the node a task runs on with the same code.
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Mapping, Sequence

from providers.docker.attach import SHELL, _exit_code, _signal, create_exec
from providers.docker.frames import FrameDecoder
from providers.docker.rawconn import Connection, connect
from providers.docker.rawhttp import RawClient, Reader, Response, query_string
from rigcli.errors import ProviderError
from rigcli.provider_kit.connect import STDERR, STDOUT, ByteStream, ExitStatus, PtyRequest

_RESIZE_TRIES = 10  # the exec's process may not exist yet when the first resize arrives
_CHUNK = 256 * 1024
# $0 rows, $1 columns, then the program: API 1.41 has no size at exec create, and a resize before the
# exec's process exists is answered 200 and lost.
_SIZED = 'stty rows "$0" cols "$1" 2>/dev/null; shift; exec "$@"'


def _failed(response: Response, what: str, container: str) -> ProviderError:
    if response.status == 404:
        return ProviderError(f"Docker container {container[:12]} is gone ({response.message()})")
    if response.status == 409:
        return ProviderError(f"Docker container {container[:12]} is not running ({response.message()})")
    return ProviderError(f"Docker {what} failed: {response.message()} (HTTP {response.status})")


class DockerExec:
    """An exec started on a connection of its own: framed stdout/stderr, or one raw pty stream."""

    def __init__(
        self,
        raw: RawClient,
        container: str,
        argv: Sequence[str] | None,
        *,
        pty: PtyRequest | None,
        env: Mapping[str, str],
        cwd: str | None,
        user: str | None = None,
    ) -> None:
        self.raw = raw
        self.container = container
        tty = pty is not None
        full = {**env, "TERM": pty.term} if pty is not None else dict(env)
        program = list(argv) if argv else list(SHELL)
        if pty is not None:  # the window size is the terminal's before the program starts, as under sshd
            program = ["sh", "-c", _SIZED, str(pty.rows), str(pty.columns), *program]
        created, self.mark = create_exec(raw, container, program, tty=tty, env=full, cwd=cwd, user=user)
        if created.status != 201:
            raise _failed(created, "exec create", container)
        self.exec_id = str(created.json()["Id"])
        conn, started = raw.upgrade(f"/exec/{self.exec_id}/start", {"Detach": False, "Tty": tty})
        if started.status not in (101, 200):
            raise _failed(started, "exec start", container)
        self.conn: Connection = conn
        self._first = started.leftover
        self._decoder = None if tty else FrameDecoder()
        self._chunks: deque[tuple[int, bytes]] = deque()
        self._ended = False

    def read(self) -> tuple[int, bytes]:
        while not self._chunks:
            if self._ended:
                return 0, b""
            data, self._first = (self._first or self.conn.recv(_CHUNK)), b""
            if not data:
                self._ended = True
                return 0, b""
            if self._decoder is None:
                return STDOUT, data
            for stream, chunk in self._decoder.feed(data):
                self._chunks.append((STDOUT if stream == "stdout" else STDERR, chunk))
        return self._chunks.popleft()

    def write(self, data: bytes) -> None:
        with contextlib.suppress(OSError):  # the program ended: what it did not take is lost, as with sshd
            self.conn.send(data)

    def close_stdin(self) -> None:
        self.conn.close_write()

    def resize(self, columns: int, rows: int) -> None:
        for attempt in range(_RESIZE_TRIES):
            response = self.raw.request("POST", f"/exec/{self.exec_id}/resize", params={"h": rows, "w": columns})
            if response.status in (200, 201, 204, 404):
                return
            time.sleep(0.01 * (attempt + 1))

    def signal(self, name: str) -> None:
        _signal(self.raw, self.container, self.mark, name)

    def wait(self) -> ExitStatus:
        return ExitStatus(_exit_code(self.raw, self.exec_id))

    def close(self) -> None:
        if not self._ended:  # the client went away first: the program hangs up, as under sshd
            self.signal("HUP")
        sock = getattr(self.conn, "sock", None)
        if sock is not None:  # wakes a thread blocked reading it (close alone does not)
            with contextlib.suppress(OSError):
                sock.shutdown(2)
        self.conn.close()


class ArchiveDownload:
    """``GET /containers/{id}/archive``: the tar's bytes as the daemon sends them (chunked or not)."""

    def __init__(self, conn: Connection, reader: Reader, headers: dict[str, str]) -> None:
        self.conn = conn
        self.reader = reader
        self.chunked = headers.get("transfer-encoding", "").lower() == "chunked"
        length = headers.get("content-length")
        self.left = int(length) if length is not None and not self.chunked else -1
        self.done = False

    def read(self, size: int = _CHUNK) -> bytes:
        if self.done:
            return b""
        if self.chunked:
            if self.left <= 0:
                self.left = int(self.reader.line().split(b";")[0], 16)
                if self.left == 0:
                    self.done = True
                    return b""
            data = self._take(min(size, self.left))
            self.left -= len(data)
            if self.left == 0:
                self.reader.exactly(2)
            return data
        if self.left == 0:
            self.done = True
            return b""
        data = self._take(size if self.left < 0 else min(size, self.left))
        if not data:
            self.done = True
        elif self.left > 0:
            self.left -= len(data)
        return data

    def _take(self, size: int) -> bytes:
        if not self.reader.buffer:
            data = self.conn.recv(max(size, 1))
            if not data and self.chunked:
                raise ProviderError("The Docker daemon closed the archive stream early")
            return data
        data, self.reader.buffer = self.reader.buffer[:size], self.reader.buffer[size:]
        return data

    def write(self, data: bytes) -> None:
        raise OSError("an archive download is read only")

    def close_write(self) -> None:
        return None

    def close(self) -> None:
        self.conn.close()


def _archive_path(container: str, path: str) -> str:
    return f"/containers/{container}/archive?{query_string({'path': path})}"


def read_archive(raw: RawClient, container: str, path: str) -> ArchiveDownload:
    conn = connect(raw.endpoint)
    try:
        conn.send(raw._message("GET", _archive_path(container, path), None, {}))
        reader = Reader(conn)
        status, headers = reader.head()
        if status != 200:
            response = Response(status, headers, reader.body(status, headers))
            if status == 404 and "no such container" not in response.message().lower():
                from rigcli.provider_kit.machine import MachineFileNotFoundError  # provider_api and more: only here

                raise MachineFileNotFoundError(f"No such file or directory in the machine: {path}")
            raise _failed(response, "archive download", container)
    except BaseException:
        conn.close()
        raise
    return ArchiveDownload(conn, reader, headers)


_DIR_BIT = 1 << 31  # Go's os.ModeDir, in the path stat the daemon answers
_SYMLINK_BIT = 1 << 27  # os.ModeSymlink


def path_kind(raw: RawClient, container: str, path: str) -> str | None:
    """``HEAD /containers/{id}/archive``: what is at ``path`` (a symlink followed), from the daemon's path
    stat header, without an exec (``docker cp`` asks the same)."""
    import base64
    import json

    for _ in range(8):  # a chain of symlinks, bounded
        conn = connect(raw.endpoint)
        try:
            conn.send(raw._message("HEAD", _archive_path(container, path), None, {}))
            status, headers = Reader(conn).head()  # a HEAD answer has no body, whatever its length says
        except OSError as exc:
            raise ProviderError(f"Docker path stat in {container[:12]} failed: {exc}") from None
        finally:
            conn.close()
        if status == 404:
            return None
        if status != 200:
            raise ProviderError(f"Docker path stat of {path} in {container[:12]} failed (HTTP {status})")
        found = json.loads(base64.b64decode(headers.get("x-docker-container-path-stat", "") or "e30="))
        mode, target = int(found.get("mode", 0)), str(found.get("linkTarget") or "")
        if not mode & _SYMLINK_BIT or not target:
            return "dir" if mode & _DIR_BIT else "file"
        path = target
    return "file"


def write_archive(raw: RawClient, container: str, directory: str, source: ByteStream) -> None:
    """``PUT /containers/{id}/archive``: ``source``'s tar streamed as a chunked body, unpacked in ``directory``."""
    conn = connect(raw.endpoint)
    try:
        headers = {"Content-Type": "application/x-tar", "Transfer-Encoding": "chunked"}
        conn.send(raw._message("PUT", _archive_path(container, directory), None, headers))
        while True:
            data = source.read(_CHUNK)
            if not data:
                break
            conn.send(b"%x\r\n" % len(data) + data + b"\r\n")
        conn.send(b"0\r\n\r\n")
        reader = Reader(conn)
        status, answer = reader.head()
        response = Response(status, answer, reader.body(status, answer))
    except OSError as exc:
        raise ProviderError(f"Docker archive upload to {container[:12]} failed: {exc}") from None
    finally:
        conn.close()
    if status != 200:
        raise _failed(response, f"archive upload into {directory}", container)


__all__ = ["ArchiveDownload", "DockerExec", "path_kind", "read_archive", "write_archive"]

"""Ports, files and facts of a machine built on its exec streams alone (``SupportsExecStreams``).

What a provider that can only run programs gets for ``rig forward``/``ssh -L`` (a relay program
inside: ``nc``, else ``socat``, ``python3`` or ``bash``), ``rig cp`` (``tar`` inside) and the user
a machine's programs run as (``id -un``). The machine needs ``sh`` and those programs; busybox has
all of them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rigcli.errors import ProviderError
from rigcli.provider_kit.connect import STDOUT, ExecStream, MachineFacts, PortRefusedError, SupportsExecStreams

if TYPE_CHECKING:
    from rigcli.provider_api import EffectEntry
    from rigcli.provider_kit.connect import ByteStream

# $0 host, $1 port. The first relay the machine has; each keeps both directions open until the far
# end closes.
RELAY = """
if command -v nc >/dev/null 2>&1; then exec nc "$0" "$1"; fi
if command -v socat >/dev/null 2>&1; then exec socat - "TCP:$0:$1"; fi
if command -v python3 >/dev/null 2>&1; then exec python3 -c '
import socket, sys, threading
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
def up():
    for b in iter(lambda: sys.stdin.buffer.read1(65536), b""):
        s.sendall(b)
    s.shutdown(socket.SHUT_WR)
threading.Thread(target=up, daemon=True).start()
for b in iter(lambda: s.recv(65536), b""):
    sys.stdout.buffer.write(b); sys.stdout.buffer.flush()
' "$0" "$1"; fi
if command -v bash >/dev/null 2>&1; then
  exec bash -c 'exec 3<>"/dev/tcp/$0/$1" || exit 1; cat <&3 & cat >&3; wait' "$0" "$1"
fi
echo "no nc, socat, python3 or bash in the machine to reach port $1" >&2
exit 127
"""
# $0 the path: what is there, as SupportsFileArchives.path_kind says it.
KIND = 'if [ -d "$0" ]; then echo dir; elif [ -e "$0" ] || [ -L "$0" ]; then echo file; fi'
# $0 the directory to unpack into: GNU tar keeps modes only when asked (-p); busybox's always does.
EXTRACT = 'if tar --version 2>/dev/null | grep -q GNU; then exec tar -x -p -f - -C "$0"; fi; exec tar -x -f - -C "$0"'
FACTS = "id -un 2>/dev/null || id -u; pwd"
_ERROR_LIMIT = 4096  # stderr kept to explain a failure


def capture(
    streams: SupportsExecStreams, resource: EffectEntry, argv: Sequence[str], *, cwd: str | None = None
) -> tuple[int, bytes, bytes]:
    """Run ``argv`` with no input; its exit code, stdout and stderr (for small outputs)."""
    process = streams.open_exec(resource, argv, pty=None, env={}, cwd=cwd)
    try:
        process.close_stdin()
        out, err = bytearray(), bytearray()
        while True:
            stream, data = process.read()
            if not stream:
                break
            (out if stream == STDOUT else err).extend(data)
        status = process.wait()
    finally:
        process.close()
    code = status.code if status.code is not None else 128
    return code, bytes(out), bytes(err)


def facts_by_exec(streams: SupportsExecStreams, resource: EffectEntry) -> MachineFacts:
    code, out, err = capture(streams, resource, ["sh", "-c", FACTS])
    lines = out.decode("utf-8", "replace").splitlines()
    if code != 0 or len(lines) < 2:
        raise ProviderError(f"Cannot tell who programs run as in the machine: {err.decode('utf-8', 'replace').strip()}")
    return MachineFacts(user=lines[0].strip(), workdir=lines[1].strip())


class ExecByteStream:
    """A program's stdin and stdout as one byte stream; its stderr kept to say why it failed."""

    def __init__(self, process: ExecStream, what: str) -> None:
        self.process = process
        self.what = what
        self.received = 0
        self.errors = bytearray()
        self._ended = False
        self._lock = threading.Lock()

    def read(self, size: int = 65536) -> bytes:
        while not self._ended:
            stream, data = self.process.read()
            if not stream:
                self._ended = True
                self.finished()
                return b""
            if stream == STDOUT:
                self.received += len(data)
                return data
            self.errors.extend(data[: max(0, _ERROR_LIMIT - len(self.errors))])
        return b""

    def finished(self) -> None:
        """The output ended: raise if the program failed."""
        status = self.process.wait()
        if status.code != 0:
            said = self.errors.decode("utf-8", "replace").strip()
            detail = f"exit {status.code}" if status.code is not None else f"SIG{status.signal}"
            raise ProviderError(f"{self.what} failed ({detail}){': ' + said if said else ''}")

    def write(self, data: bytes) -> None:
        self.process.write(data)

    def close_write(self) -> None:
        self.process.close_stdin()

    def close(self) -> None:
        with self._lock:
            self.process.close()


class _PortStream(ExecByteStream):
    def finished(self) -> None:
        try:
            super().finished()
        except ProviderError as exc:
            if self.received == 0:
                raise PortRefusedError(str(exc)) from None
            raise


def exec_port(streams: SupportsExecStreams, resource: EffectEntry, host: str, port: int) -> ByteStream:
    """A byte stream to ``host:port`` inside the machine, through a relay program run there."""
    process = streams.open_exec(resource, ["sh", "-c", RELAY, host, str(port)], pty=None, env={}, cwd="/")
    return _PortStream(process, f"connection to {host}:{port}")


def exec_path_kind(streams: SupportsExecStreams, resource: EffectEntry, path: str) -> str | None:
    code, out, err = capture(streams, resource, ["sh", "-c", KIND, path])
    if code != 0:
        raise ProviderError(f"Cannot look at {path} in the machine: {err.decode('utf-8', 'replace').strip()}")
    answer = out.decode().strip()
    return answer or None


def exec_read_archive(streams: SupportsExecStreams, resource: EffectEntry, path: str) -> ByteStream:
    """``tar c`` of ``path`` inside the machine, its entries named from its last component."""
    if exec_path_kind(streams, resource, path) is None:
        from rigcli.provider_kit.machine import MachineFileNotFoundError  # provider_api and more: only here

        raise MachineFileNotFoundError(f"No such file or directory in the machine: {path}")
    parent, _, name = path.rstrip("/").rpartition("/")
    argv = ["tar", "-c", "-f", "-", "-C", parent or "/", name or "."]
    process = streams.open_exec(resource, argv, pty=None, env={}, cwd=None)
    process.close_stdin()
    return ExecByteStream(process, f"tar of {path}")


def exec_write_archive(streams: SupportsExecStreams, resource: EffectEntry, directory: str, source: ByteStream) -> None:
    """``tar x`` inside the machine, in ``directory``, of what ``source`` reads."""
    process = streams.open_exec(resource, ["sh", "-c", EXTRACT, directory], pty=None, env={}, cwd=None)
    sink = ExecByteStream(process, f"unpacking into {directory}")
    try:
        while True:
            data = source.read(256 * 1024)
            if not data:
                break
            sink.write(data)
        sink.close_write()
        while sink.read():
            pass
    finally:
        sink.close()


__all__ = [
    "ExecByteStream",
    "capture",
    "exec_path_kind",
    "exec_port",
    "exec_read_archive",
    "exec_write_archive",
    "facts_by_exec",
]

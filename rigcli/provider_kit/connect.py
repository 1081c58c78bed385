"""The primitives a provider offers so people's own tools reach its machines: programs as byte streams,
a byte stream to a port inside a machine, and a machine's files as tar streams.

``rig ssh-proxy`` (the SSH server side, in an OpenSSH ``ProxyCommand``), ``rig forward`` and ``rig
cp`` are built on these alone, so a third-party provider gets all three by implementing them on its
controller:

- ``SupportsExecStreams``: ``open_exec`` runs a program in the machine with its stdin, stdout and
  stderr as streams (or one pseudo-terminal), which can be resized and signalled, and reports how it
  ended; every SSH session channel (exec, shell, pty, sftp) and ``rig cp``'s fallback use it;
- ``SupportsPortStreams``: ``open_port`` is a byte stream to a TCP port as seen from inside the
  machine (``ssh -L``/``-D``, ``rig forward``); ``exec_port`` in ``connect_exec`` builds one on
  ``open_exec`` with a relay program inside (``nc``, ``socat``, ``python3`` or ``bash``);
- ``SupportsFileArchives``: ``read_archive``/``write_archive`` move a path out of or into the
  machine as a tar stream (``rig cp``); ``connect_exec`` builds both on ``open_exec`` and ``tar``.

Every call blocks (rig runs each on a thread of its own) and every stream is used by at most two
threads at once: one reading, one writing. Raise ``RigError`` for what the user should read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from rigcli.errors import ProviderError
from rigcli.speed.records import lazy_dataclass

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rigcli.provider_api import EffectEntry

STDOUT = 1
STDERR = 2


@lazy_dataclass(frozen=True)
class PtyRequest:
    """A pseudo-terminal for the program: its ``TERM`` and window size."""

    term: str
    columns: int
    rows: int


@lazy_dataclass(frozen=True)
class ExitStatus:
    """How a program ended: its exit ``code``, or the ``signal`` (``TERM``, ``KILL``) that killed it where
    the provider can tell (Docker reports a death by signal N as code 128 + N, as ``docker exec`` does)."""

    code: int | None
    signal: str | None = None


@lazy_dataclass(frozen=True)
class MachineFacts:
    """Who a program in the machine runs as (``id -un``) and its working directory there."""

    user: str
    workdir: str


class PortRefusedError(ProviderError):
    """Nothing listens at that port inside the machine (or the relay could not reach it)."""


class ExecStream(Protocol):
    """A program running in a machine: its output read as chunks, its input written, its end awaited."""

    def read(self) -> tuple[int, bytes]:
        """The next chunk of output as ``(STDOUT or STDERR, bytes)`` (with a pty, all of it is STDOUT);
        ``(0, b"")`` once the program's output has ended. Blocks until there is some."""
        ...

    def write(self, data: bytes) -> None:
        """Bytes to the program's stdin (or its terminal)."""
        ...

    def close_stdin(self) -> None:
        """The end of the program's input (it reads EOF); output goes on."""
        ...

    def resize(self, columns: int, rows: int) -> None:
        """The terminal's new window size (nothing without a pty)."""
        ...

    def signal(self, name: str) -> None:
        """Send SIG``name`` (``INT``, ``TERM``, ...) to the program (best effort)."""
        ...

    def wait(self) -> ExitStatus:
        """How it ended; call once its output has ended."""
        ...

    def close(self) -> None:
        """Let go of it (a program still running is ended)."""
        ...


class ByteStream(Protocol):
    """Bytes both ways (a connection to a port, a tar stream): ``read`` b"" at the end."""

    def read(self, size: int = 65536) -> bytes: ...
    def write(self, data: bytes) -> None: ...
    def close_write(self) -> None: ...
    def close(self) -> None: ...


@runtime_checkable
class SupportsExecStreams(Protocol):
    """Optional, on a controller: programs in a machine as streams (ssh sessions, sftp, cp's fallback).

    ``argv`` None is the machine's login shell; ``cwd`` None its working directory; ``env`` is added
    to the program's environment. ``machine_facts`` answers who programs run as and where.
    """

    def open_exec(
        self,
        resource: EffectEntry,
        argv: Sequence[str] | None,
        *,
        pty: PtyRequest | None,
        env: Mapping[str, str],
        cwd: str | None,
    ) -> ExecStream: ...

    def machine_facts(self, resource: EffectEntry) -> MachineFacts: ...


@runtime_checkable
class SupportsPortStreams(Protocol):
    """Optional, on a controller: a byte stream to ``host:port`` as seen from inside the machine;
    ``PortRefusedError`` when nothing listens there (said as soon as the provider can tell)."""

    def open_port(self, resource: EffectEntry, host: str, port: int) -> ByteStream: ...


@runtime_checkable
class SupportsFileArchives(Protocol):
    """Optional, on a controller: a path in the machine as a tar stream, and a tar stream unpacked there.

    ``read_archive``: the tar of ``path`` (a file, a directory with everything under it, a symlink as
    itself), its entries named from ``path``'s last component, as ``docker cp`` and Docker's archive
    API give it; ``MachineFileNotFoundError`` when there is nothing at ``path``. ``write_archive``:
    unpack what ``source`` reads (a tar stream, read to its end) into the directory ``directory``,
    which exists. Both paths are absolute (rig joins a relative one to ``machine_facts().workdir``).
    ``path_kind`` says what is at ``path``: ``"dir"``, ``"file"`` (anything else that exists) or None.
    """

    def read_archive(self, resource: EffectEntry, path: str) -> ByteStream: ...
    def write_archive(self, resource: EffectEntry, directory: str, source: ByteStream) -> None: ...
    def path_kind(self, resource: EffectEntry, path: str) -> str | None: ...


PRIMITIVES: dict[str, type] = {
    "exec streams": SupportsExecStreams,
    "port streams": SupportsPortStreams,
    "file archives": SupportsFileArchives,
}


__all__ = [
    "PRIMITIVES",
    "STDERR",
    "STDOUT",
    "ByteStream",
    "ExecStream",
    "ExitStatus",
    "MachineFacts",
    "PortRefusedError",
    "PtyRequest",
    "SupportsExecStreams",
    "SupportsFileArchives",
    "SupportsPortStreams",
]

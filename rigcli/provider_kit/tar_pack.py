"""Tar streams made on the fly: a host path packed (``pack``), or a tar stream someone gave checked entry
by entry on its way through (``checked``), each as a ``ByteStream`` a provider's ``write_archive`` reads.

A thread writes the tar into a pipe the reader drains, so memory stays bounded by the pipe and one
copy buffer whatever the size. What goes wrong on the writing side (a file that cannot be read, an
entry refused) is raised by ``read`` where the stream would otherwise end: the archive is never
finished, so whoever unpacks it stops short of the refused entry.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tarfile
import threading
from collections.abc import Callable
from typing import IO

from rigcli.errors import RigError
from rigcli.provider_kit.tar_unpack import ArchiveEscapeError, name_parts

_COPY = 1 << 20
_PIPE_SIZE = 1 << 20  # F_SETPIPE_SZ: fewer switches between the two threads
_F_SETPIPE_SZ = 1031


class PipeStream:
    """The read end of a pipe a writer thread fills; the writer's error raised at the end."""

    def __init__(self, produce: Callable[[IO[bytes]], None], what: str) -> None:
        self.what = what
        read_fd, write_fd = os.pipe()
        with contextlib.suppress(OSError):
            fcntl.fcntl(write_fd, _F_SETPIPE_SZ, _PIPE_SIZE)
        self._fd = read_fd
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(produce, write_fd), name="rig-tar", daemon=True)
        self._thread.start()

    def _run(self, produce: Callable[[IO[bytes]], None], write_fd: int) -> None:
        sink = os.fdopen(write_fd, "wb", buffering=0)
        try:
            produce(sink)
        except BrokenPipeError:
            pass  # the reader stopped reading: it says why
        except BaseException as exc:  # re-raised in the reader's thread
            self._error = exc
        finally:
            with contextlib.suppress(OSError):
                sink.close()

    def read(self, size: int = _COPY) -> bytes:
        if self._fd < 0:
            return b""
        data = os.read(self._fd, size)
        if not data:
            self._thread.join()
            if self._error is not None:
                error, self._error = self._error, None
                if isinstance(error, RigError):
                    raise error
                if isinstance(error, OSError):
                    raise RigError(f"{self.what}: {error.strerror or error}") from None
                raise error
        return data

    def write(self, data: bytes) -> None:
        raise OSError("a packed tar stream is read only")

    def close_write(self) -> None:
        return None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # the writer's next write fails: it ends
            self._fd = -1
        self._thread.join(timeout=10)


def _writer(sink: IO[bytes]) -> tarfile.TarFile:
    # Closed by the caller only when every entry went well (an unfinished archive must stay unfinished).
    archive = tarfile.open(fileobj=sink, mode="w|", format=tarfile.GNU_FORMAT, bufsize=_COPY)  # noqa: SIM115
    archive.copybufsize = _COPY  # type: ignore[attr-defined]  # 1 MiB pieces, not 16 KiB (not in typeshed)
    return archive


def _anonymous(member: tarfile.TarInfo) -> tarfile.TarInfo:
    """No host user or group names in what goes to the machine: it owns what it unpacks, as ``docker cp``."""
    member.uid = member.gid = 0
    member.uname = member.gname = ""
    return member


def pack(path: str, top: str, *, contents: bool = False) -> PipeStream:
    """A tar of the host's ``path`` (recursive; symlinks as symlinks), its entries under ``top``; with
    ``contents``, the directory's entries at the archive's top instead (``SRC/.`` as in ``docker cp``)."""

    def produce(sink: IO[bytes]) -> None:
        archive = _writer(sink)
        if contents:
            for name in sorted(os.listdir(path)):
                archive.add(os.path.join(path, name), arcname=name, filter=_anonymous)
        else:
            archive.add(path, arcname=top, filter=_anonymous)
        archive.close()  # not on an error: an unfinished archive is not taken for a whole one

    return PipeStream(produce, f"Cannot pack {path}")


def checked(source: IO[bytes]) -> PipeStream:
    """``source``'s tar, entry by entry, with every entry that would land outside where it is unpacked
    refused: an absolute name, ``..``, or a path through a symlink an earlier entry made."""

    def produce(sink: IO[bytes]) -> None:
        links: set[tuple[str, ...]] = set()
        inbound = tarfile.open(fileobj=source, mode="r|", bufsize=_COPY)  # noqa: SIM115 (read to its end below)
        outbound = _writer(sink)
        try:
            for member in inbound:
                parts = name_parts(member.name)
                # A symlink may replace a symlink; anything else at one's place could be written through it.
                _through_link(parts[:-1] if member.issym() else parts, links, member.name)
                if member.islnk():
                    _through_link(name_parts(member.linkname, "link target")[:-1], links, member.name)
                if member.issym():
                    links.add(tuple(parts))
                outbound.addfile(member, inbound.extractfile(member) if member.isreg() else None)
        except tarfile.TarError as exc:
            raise RigError(f"Not a readable tar stream: {exc}") from None
        outbound.close()

    return PipeStream(produce, "Cannot read the tar stream")


def _through_link(parts: list[str], links: set[tuple[str, ...]], name: str) -> None:
    for end in range(1, len(parts) + 1):
        if tuple(parts[:end]) in links:
            raise ArchiveEscapeError(f"Refused archive entry {name!r}: it goes through the symlink {parts[end - 1]!r}")


__all__ = ["PipeStream", "checked", "pack"]

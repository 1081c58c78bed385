"""Unpacking a tar stream under one directory, refusing every entry that would land outside it.

An entry is refused (``ArchiveEscapeError``, before anything of it is written) when its name is
absolute, has a ``..`` component, or reaches its place through a symlink — one already on disk or
one an earlier entry made: every directory on the way is opened relative to the one before it with
``O_NOFOLLOW``, so no symlink is ever followed and no other process can swap one in meanwhile. A
hard link's target is held to the same rule. Files, directories, symlinks (as symlinks, whatever
they point at), hard links and FIFOs are made; devices are skipped. Modes (permission bits) and
mtimes are kept, directories' set last so a read-only one can still be filled. The stream is read
once, in pieces: memory stays bounded whatever its size.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tarfile
from collections.abc import Callable
from typing import IO, TYPE_CHECKING

from rigcli.errors import RigError

if TYPE_CHECKING:
    from rigcli.provider_kit.connect import ByteStream

_COPY = 1 << 20
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_MODE_BITS = 0o777  # no setuid, setgid or sticky bit from an archive

# What a placement makes of an entry's name parts: the parts under the root (empty: the root
# itself, whose own mode and mtime are left alone), or it raises for an entry it refuses.
Placement = Callable[[list[str], tarfile.TarInfo], list[str]]


class ArchiveEscapeError(RigError):
    """A tar entry that would land outside the directory it is unpacked in."""


class StreamFile:
    """A ``ByteStream`` read as the file object ``tarfile`` expects."""

    def __init__(self, stream: ByteStream) -> None:
        self.stream = stream

    def read(self, size: int = -1) -> bytes:
        return self.stream.read(_COPY if size is None or size < 0 else size)


def name_parts(name: str, what: str = "entry") -> list[str]:
    """The components of an archive name; ``ArchiveEscapeError`` for an absolute one or one with ``..``."""
    if name.startswith("/"):
        raise ArchiveEscapeError(f"Refused archive {what} {name!r}: an absolute path")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise ArchiveEscapeError(f"Refused archive {what} {name!r}: it climbs out with '..'")
    return parts


def as_is(parts: list[str], member: tarfile.TarInfo) -> list[str]:
    return parts


def unpack(source: ByteStream | IO[bytes], root: str, place: Placement = as_is) -> int:
    """Unpack the tar ``source`` reads under the directory ``root``; the number of entries made."""
    fileobj = StreamFile(source) if not hasattr(source, "seekable") else source
    try:
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise RigError(f"Cannot unpack into {root}: {exc.strerror}") from None
    made = 0
    directories: list[tuple[list[str], int, float]] = []
    try:
        with tarfile.open(fileobj=fileobj, mode="r|", bufsize=_COPY) as archive:  # type: ignore[call-overload]
            for member in archive:
                parts = place(name_parts(member.name), member)
                if not parts:
                    continue
                parent = _walk(root_fd, parts[:-1], member.name, create=True)
                try:
                    if _make(archive, member, parent, parts[-1], root_fd, place):
                        made += 1
                        if member.isdir():
                            directories.append((parts, member.mode, member.mtime))
                finally:
                    os.close(parent)
        for parts, mode, mtime in reversed(directories):  # deepest last-made first: contents before their dir
            with contextlib.suppress(OSError):
                fd = _walk(root_fd, parts, "/".join(parts), create=False)
                try:
                    os.chmod(fd, mode & _MODE_BITS)
                    os.utime(fd, (mtime, mtime))
                finally:
                    os.close(fd)
    except tarfile.TarError as exc:
        raise RigError(f"Not a readable tar stream: {exc}") from None
    finally:
        os.close(root_fd)
    return made


def _walk(root_fd: int, parts: list[str], name: str, *, create: bool) -> int:
    """An fd of the directory ``parts`` under the root, reached without following a symlink."""
    fd = os.dup(root_fd)
    try:
        for part in parts:
            try:
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, 0o700, dir_fd=fd)  # an archive may name a file before (or without) its directory
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                if stat.S_ISLNK(os.lstat(part, dir_fd=fd).st_mode):
                    raise ArchiveEscapeError(
                        f"Refused archive entry {name!r}: it goes through the symlink {part!r}"
                    ) from None
                raise RigError(f"Cannot unpack {name!r}: {part!r} is not a directory") from None
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd


def _clear(parent: int, name: str, *, keep_dir: bool) -> None:
    """Make room for a new entry: whatever is there goes, except a directory (refused, or kept for a directory)."""
    try:
        found = os.lstat(name, dir_fd=parent)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(found.st_mode):
        if keep_dir:
            return
        raise RigError(f"Cannot replace the directory {name!r} with a file")
    os.unlink(name, dir_fd=parent)


def _make(
    archive: tarfile.TarFile, member: tarfile.TarInfo, parent: int, name: str, root_fd: int, place: Placement
) -> bool:
    mode = member.mode & _MODE_BITS
    times = (member.mtime, member.mtime)
    if member.isdir():
        _clear(parent, name, keep_dir=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o700, dir_fd=parent)
        return True
    if member.issym():
        _clear(parent, name, keep_dir=False)
        os.symlink(member.linkname, name, dir_fd=parent)
        with contextlib.suppress(OSError):
            os.utime(name, times, dir_fd=parent, follow_symlinks=False)
        return True
    if member.islnk():
        target = place(name_parts(member.linkname, "link target"), member)
        if not target:
            raise ArchiveEscapeError(f"Refused archive entry {member.name!r}: a hard link to the root")
        source = _walk(root_fd, target[:-1], member.linkname, create=False)
        try:
            _clear(parent, name, keep_dir=False)
            os.link(target[-1], name, src_dir_fd=source, dst_dir_fd=parent, follow_symlinks=False)
        finally:
            os.close(source)
        return True
    if member.isfifo():
        _clear(parent, name, keep_dir=False)
        os.mkfifo(name, mode, dir_fd=parent)
        return True
    if not member.isreg():
        return False  # devices: only root may make them, and no copy of files needs them
    _clear(parent, name, keep_dir=False)
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=parent)
    try:
        content = archive.extractfile(member)
        assert content is not None
        while True:
            data = content.read(_COPY)
            if not data:
                break
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        os.chmod(fd, mode)
        os.utime(fd, times)
    finally:
        os.close(fd)
    return True


__all__ = ["ArchiveEscapeError", "Placement", "StreamFile", "as_is", "name_parts", "unpack"]

"""``rig cp``: files between the host and a workspace's machine, as ``docker cp`` copies them, over the
provider's file archives (``SupportsFileArchives``): tar streams both ways, never a whole file in memory.

Where a copy lands follows ``docker cp``: onto an existing directory, the source goes inside it under
its own name (``SRC/.``: its contents instead); onto nothing, it takes the destination's name (whose
parent must exist); a file onto a file replaces it; a directory onto a file is refused. Into the
host, every entry is held to the destination (``tar_unpack``); a tar given on stdin is checked
entry by entry on its way in (``tar_pack.checked``).
"""

from __future__ import annotations

import os
import posixpath
import re
import tarfile
from collections.abc import Callable
from typing import IO

from rigcli.errors import RigError, UsageError
from rigcli.provider_api import EffectEntry
from rigcli.provider_kit.connect import ByteStream, SupportsFileArchives
from rigcli.provider_kit.tar_pack import checked, pack
from rigcli.provider_kit.tar_unpack import ArchiveEscapeError, Placement, unpack
from rigcli.speed.records import lazy_dataclass

STREAM = "-"
_REMOTE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*):(.*)$", re.DOTALL)


@lazy_dataclass(frozen=True)
class Side:
    """One side of ``rig cp``: a host path, ``-``, or a path in workspace ``workspace``."""

    path: str
    workspace: str | None = None

    @property
    def stream(self) -> bool:
        return self.workspace is None and self.path == STREAM


def parse_side(text: str) -> Side:
    """``WS:PATH`` (the part before the first colon has no ``/``), ``-``, or a host path (``./a:b`` for one
    with a colon)."""
    match = _REMOTE.match(text)
    if match is None:
        return Side(text)
    return Side(match.group(2), match.group(1))


def parse_pair(source: str, destination: str) -> tuple[Side, Side]:
    src, dest = parse_side(source), parse_side(destination)
    if (src.workspace is None) == (dest.workspace is None):
        raise UsageError("rig cp copies between the host and one workspace: one side is WS:PATH (rig cp SRC DEST)")
    if src.stream and dest.stream:
        raise UsageError("rig cp: only one side can be '-'")
    return src, dest


def _contents(path: str) -> tuple[str, bool]:
    """``path`` without a trailing ``/.``, and whether it had one (copy what the directory holds)."""
    if path == "." or path.endswith("/."):
        return path[:-1].rstrip("/") or ("/" if path.startswith("/") else "."), True
    return path, False


def _base(path: str) -> str:
    return posixpath.basename(path.rstrip("/")) or "/"


class MachinePaths:
    """A machine's paths for one copy: a relative one is under its working directory."""

    def __init__(self, files: SupportsFileArchives, resource: EffectEntry, workdir: Callable[[], str]) -> None:
        self.files = files
        self.resource = resource
        self._workdir = workdir

    def absolute(self, path: str) -> str:
        if path.startswith("/"):
            return path
        return posixpath.join(self._workdir(), path) if path not in ("", ".") else self._workdir()

    def kind(self, path: str) -> str | None:
        return self.files.path_kind(self.resource, path)


def copy_in(machine: MachinePaths, source: str, destination: str, stdin: IO[bytes]) -> None:
    """The host's ``source`` (or the tar on ``stdin`` for ``-``) into the machine's ``destination``."""
    dest = machine.absolute(destination)
    kind = machine.kind(dest.rstrip("/") or "/")
    if source == STREAM:
        if kind != "dir":
            raise RigError(f"rig cp -: the destination must be a directory in the workspace: {destination}")
        machine.files.write_archive(machine.resource, dest, checked(stdin))
        return
    path, contents = _contents(source)
    try:
        is_dir = os.path.isdir(path) and not os.path.islink(path)
        os.lstat(path)
    except OSError:
        raise RigError(f"No such file or directory: {source}") from None
    if kind == "dir":
        directory, top = dest, _base(os.path.abspath(path))
        if contents and is_dir:
            machine.files.write_archive(machine.resource, dest, pack(path, top, contents=True))
            return
    elif kind == "file":
        if is_dir:
            raise RigError(f"Cannot copy a directory onto the file {destination} in the workspace")
        if destination.endswith("/"):
            raise RigError(f"Not a directory in the workspace: {destination}")
        directory, top = posixpath.dirname(dest.rstrip("/")), _base(dest)
    else:
        parent = posixpath.dirname(dest.rstrip("/")) or "/"
        if not is_dir and destination.endswith("/"):
            raise RigError(f"No such directory in the workspace: {destination}")
        if machine.kind(parent) != "dir":
            raise RigError(f"No such directory in the workspace: {parent}")
        directory, top = parent, _base(dest)
    machine.files.write_archive(machine.resource, directory, pack(path, top, contents=False))


def copy_out(machine: MachinePaths, source: str, destination: str, stdout_fd: int) -> None:
    """The machine's ``source`` onto the host's ``destination`` (or its tar to ``stdout_fd`` for ``-``)."""
    path, contents = _contents(machine.absolute(source))
    stream = machine.files.read_archive(machine.resource, path)
    try:
        if destination == STREAM:
            _to_fd(stream, stdout_fd)
            return
        root, place = _landing(destination, _base(path), contents)
        unpack(stream, root, place)
    finally:
        stream.close()


def _landing(destination: str, top: str, contents: bool) -> tuple[str, Placement]:
    """Where on the host the archive of ``top`` goes, and what each entry's name becomes there."""
    if os.path.isdir(destination):
        return destination, _placement(top, None if contents else top, file_ok=True, dir_ok=True, onto=destination)
    parent = os.path.dirname(os.path.abspath(destination))
    if os.path.lexists(destination):
        return parent, _placement(top, _base(destination), file_ok=True, dir_ok=False, onto=destination)
    if not os.path.isdir(parent):
        raise RigError(f"No such directory: {os.path.dirname(destination) or '.'}")
    slash = destination.endswith("/")
    return parent, _placement(top, _base(destination), file_ok=not slash, dir_ok=True, onto=destination)


def _placement(top: str, new_top: str | None, *, file_ok: bool, dir_ok: bool, onto: str) -> Placement:
    seen = False

    def place(parts: list[str], member: tarfile.TarInfo) -> list[str]:
        nonlocal seen
        if not parts or parts[0] != top:
            raise ArchiveEscapeError(f"Refused archive entry {member.name!r}: it is not under {top!r}")
        if not seen:
            seen = True
            is_dir = len(parts) > 1 or member.isdir()
            if is_dir and not dir_ok:
                raise RigError(f"Cannot copy a directory onto the file {onto}")
            if not is_dir and not file_ok:
                raise RigError(f"No such directory: {onto}")
        rest = parts[1:]
        return rest if new_top is None else [new_top, *rest]

    return place


def _to_fd(stream: ByteStream, fd: int) -> None:
    while True:
        data = stream.read(1 << 20)
        if not data:
            return
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]


__all__ = ["STREAM", "MachinePaths", "Side", "copy_in", "copy_out", "parse_pair", "parse_side"]

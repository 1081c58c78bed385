"""The ``sftp`` subsystem (``sftp``, and ``scp`` in its default SFTP mode): asyncssh's SFTP server with
every operation done on the machine's files through ``machine_files.MachineFiles``.

A file being read is one ``cat``/``tail`` streaming from the offset asked (restarted only when a
read jumps elsewhere); a file being written is one ``cat`` into it, from the offset of its first
write (restarted likewise), so a transfer costs one program, not one per packet.
"""

from __future__ import annotations

import contextlib
import stat as stat_module
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from rigcli.connect.bridge import blocking
from rigcli.connect.machine_files import FileError, FileStat, MachineFiles, finish
from rigcli.connect.pumps import Inbound, Outbound
from rigcli.errors import RigError
from rigcli.provider_kit.connect import STDOUT, ExecStream, SupportsExecStreams
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    import asyncssh

    from rigcli.engine.connect_target import ConnectTarget
else:
    asyncssh = lazy_module("asyncssh")


T = TypeVar("T")
FXF_READ, FXF_WRITE, FXF_APPEND, FXF_CREAT, FXF_TRUNC, FXF_EXCL = 1, 2, 4, 8, 16, 32


class _Handle:
    """An open file: one program streaming it out from an offset (prefetched by a thread), or one program
    taking what is written from an offset (fed by a thread). A write is answered once queued; a failure
    is reported by the next write or the close, as it can only be known then."""

    def __init__(self, path: str, flags: int, mode: int | None) -> None:
        self.path = path
        self.flags = flags
        self.mode = mode
        self.program: ExecStream | None = None
        self.output: Inbound[tuple[int, bytes]] | None = None
        self.input: Outbound | None = None
        self.position = 0
        self.buffer = bytearray()
        self.ended = False

    async def read(self, files: MachineFiles, offset: int, size: int) -> bytes:
        if self.program is None or offset != self.position:
            await self.stop()
            self.program = await blocking(files.reader, self.path, offset)
            self.output = Inbound(self.program.read, lambda chunk: not chunk[0], "rig-sftp-read")
            self.position, self.buffer, self.ended = offset, bytearray(), False
        assert self.output is not None
        while len(self.buffer) < size and not self.ended:
            stream, data = await self.output.get()
            if not stream:
                self.ended = True
                status = await blocking(self.program.wait)
                if status.code != 0 and not self.buffer and self.position == offset:
                    raise FileError(f"cannot read {self.path} ({status})", "failed")
            elif stream == STDOUT:
                self.buffer += data
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        self.position += len(data)
        return data

    async def write(self, files: MachineFiles, offset: int, data: bytes) -> None:
        if self.program is None or offset != self.position:
            await self.stop()
            self.program = await blocking(files.writer, self.path, offset)
            self.input = Outbound(self.program.write, self.program.close_stdin, "rig-sftp-write")
            self.position = offset
        assert self.input is not None
        await self.input.put(data)
        self.position += len(data)

    async def stop(self) -> None:
        program, self.program = self.program, None
        output, self.output = self.output, None
        feeder, self.input = self.input, None
        if program is None:
            return
        if output is not None:
            output.stop()
        if feeder is None:
            await blocking(program.close)
            return
        try:
            await feeder.finish()  # everything written, then the end of the file's input
        except BaseException:
            await blocking(program.close)
            raise
        await blocking(finish, program, f"writing {self.path}")


def _attrs(found: FileStat) -> asyncssh.SFTPAttrs:
    return asyncssh.SFTPAttrs(
        size=found.size,
        uid=found.uid,
        gid=found.gid,
        permissions=found.mode,
        atime=found.atime,
        mtime=found.mtime,
    )


def _server_class() -> type[asyncssh.SFTPServer]:
    def failed(exc: RigError) -> asyncssh.SFTPError:
        kind = exc.kind if isinstance(exc, FileError) else "failed"
        if kind == "missing":
            return asyncssh.SFTPNoSuchFile(str(exc))
        if kind == "denied":
            return asyncssh.SFTPPermissionDenied(str(exc))
        return asyncssh.SFTPFailure(str(exc))

    async def call(function: Callable[..., object], *args: object) -> object:
        try:
            return await blocking(function, *args)
        except RigError as exc:
            raise failed(exc) from None

    async def handled(work: Awaitable[T]) -> T:
        try:
            return await work
        except RigError as exc:
            raise failed(exc) from None

    class RigSFTP(asyncssh.SFTPServer):
        def __init__(self, chan: asyncssh.SSHServerChannel[bytes], files: MachineFiles) -> None:
            super().__init__(chan)
            self.files = files

        def exit(self) -> None:
            # sftp-server exits 0 and sshd says so; scp (in SFTP mode) fails without an exit status.
            with contextlib.suppress(Exception):
                self.channel.exit(0)

        def realpath(self, path: bytes) -> bytes:
            return self.files.absolute(path.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

        def _path(self, path: bytes) -> str:
            return path.decode("utf-8", "surrogateescape")

        async def stat(self, path: bytes) -> asyncssh.SFTPAttrs:
            found = await call(lambda: self.files.stat(self._path(path), follow=True))
            return _attrs(found)  # type: ignore[arg-type]

        async def lstat(self, path: bytes) -> asyncssh.SFTPAttrs:
            found = await call(lambda: self.files.stat(self._path(path), follow=False))
            return _attrs(found)  # type: ignore[arg-type]

        async def scandir(self, path: bytes) -> AsyncIterator[asyncssh.SFTPName]:
            entries = await call(self.files.listdir, self._path(path))
            for entry in entries:  # type: ignore[attr-defined]
                name = entry.name.encode("utf-8", "surrogateescape")
                yield asyncssh.SFTPName(name, attrs=_attrs(entry))

        async def open(self, path: bytes, pflags: int, attrs: asyncssh.SFTPAttrs) -> object:
            name = self._path(path)
            if pflags & FXF_WRITE:
                how = (
                    "excl"
                    if pflags & FXF_EXCL
                    else "trunc"
                    if pflags & FXF_TRUNC
                    else "create"
                    if pflags & FXF_CREAT
                    else "keep"
                )
                await call(self.files.prepare, name, how)
            else:
                found = await call(lambda: self.files.stat(name, follow=True))
                if stat_module.S_ISDIR(found.mode):  # type: ignore[attr-defined]
                    raise asyncssh.SFTPFailure(f"{name} is a directory")
            return _Handle(name, pflags, attrs.permissions)

        async def read(self, file_obj: object, offset: int, size: int) -> bytes:
            assert isinstance(file_obj, _Handle)
            return await handled(file_obj.read(self.files, offset, size))

        async def write(self, file_obj: object, offset: int, data: bytes) -> int:
            assert isinstance(file_obj, _Handle)
            await handled(file_obj.write(self.files, offset, data))
            return len(data)

        async def close(self, file_obj: object) -> None:
            assert isinstance(file_obj, _Handle)
            await handled(file_obj.stop())
            if file_obj.mode is not None and file_obj.flags & FXF_CREAT:
                await call(
                    self.files.command, ["chmod", f"{file_obj.mode & 0o7777:o}", self.files.absolute(file_obj.path)]
                )

        async def fstat(self, file_obj: object) -> asyncssh.SFTPAttrs:
            assert isinstance(file_obj, _Handle)
            return await self.stat(file_obj.path.encode("utf-8", "surrogateescape"))

        async def setstat(self, path: bytes, attrs: asyncssh.SFTPAttrs) -> None:
            name = self.files.absolute(self._path(path))
            if attrs.size is not None:
                await call(self.files.command, ["truncate", "-s", str(attrs.size), name])
            if attrs.permissions is not None:
                await call(self.files.command, ["chmod", f"{attrs.permissions & 0o7777:o}", name])
            if attrs.mtime is not None:
                await call(self.files.command, ["touch", "-d", f"@{int(attrs.mtime)}", name])

        async def fsetstat(self, file_obj: object, attrs: asyncssh.SFTPAttrs) -> None:
            assert isinstance(file_obj, _Handle)
            await handled(file_obj.stop())  # what was written is in place before its times are set
            file_obj.mode = None
            await self.setstat(file_obj.path.encode("utf-8", "surrogateescape"), attrs)

        async def remove(self, path: bytes) -> None:
            await call(self.files.command, ["rm", "--", self.files.absolute(self._path(path))])

        async def rename(self, oldpath: bytes, newpath: bytes) -> None:
            old, new = self.files.absolute(self._path(oldpath)), self.files.absolute(self._path(newpath))
            await call(self.files.command, ["mv", "--", old, new])

        async def posix_rename(self, oldpath: bytes, newpath: bytes) -> None:
            await self.rename(oldpath, newpath)

        async def mkdir(self, path: bytes, attrs: asyncssh.SFTPAttrs) -> None:
            name = self.files.absolute(self._path(path))
            await call(self.files.command, ["mkdir", "--", name])
            if attrs.permissions is not None:
                await call(self.files.command, ["chmod", f"{attrs.permissions & 0o7777:o}", name])

        async def rmdir(self, path: bytes) -> None:
            await call(self.files.command, ["rmdir", "--", self.files.absolute(self._path(path))])

        async def readlink(self, path: bytes) -> bytes:
            found = await call(self.files.run, 'readlink -- "$0"', self.files.absolute(self._path(path)))
            return str(found).rstrip("\n").encode("utf-8", "surrogateescape")

        async def symlink(self, oldpath: bytes, newpath: bytes) -> None:
            await call(
                self.files.command, ["ln", "-s", "--", self._path(oldpath), self.files.absolute(self._path(newpath))]
            )

    return RigSFTP


def sftp_factory(target: ConnectTarget) -> Callable[[asyncssh.SSHServerChannel[bytes]], asyncssh.SFTPServer]:
    server = _server_class()
    workdir: list[str] = []

    def make(chan: asyncssh.SSHServerChannel[bytes]) -> asyncssh.SFTPServer:
        controller = target.controller
        assert isinstance(controller, SupportsExecStreams)
        if not workdir:
            workdir.append(controller.machine_facts(target.resource).workdir)
        return server(chan, MachineFiles(controller, target.resource, workdir[0]))  # type: ignore[arg-type]

    return make


__all__ = ["sftp_factory"]

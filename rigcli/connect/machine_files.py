"""A machine's files through its exec streams alone: metadata by ``sh``, ``stat``, ``ls``-free globs and
coreutils (busybox has them all), contents streamed by ``cat``/``tail`` out and ``cat``/``dd`` in.

This is what lets ``sftp`` and ``scp`` reach an image that has no sftp-server.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rigcli.errors import ProviderError
from rigcli.provider_kit.connect import STDOUT, ExecStream, SupportsExecStreams
from rigcli.provider_kit.connect_exec import capture

if TYPE_CHECKING:
    from rigcli.provider_api import EffectEntry

FORMAT = "%f|%s|%u|%g|%X|%Y|%n"  # raw mode (hex), size, uid, gid, atime, mtime, name
_LIST = 'cd -- "$0" || exit 1; stat -c "$1" -- * .[!.]* ..?* 2>/dev/null; true'
_STAT = 'stat $2 -c "$1" -- "$0"'
# $0 path, $1 offset: the file's bytes from there.
_READ = 'if [ "$1" = 0 ]; then exec cat -- "$0"; fi; exec tail -c +"$(($1 + 1))" -- "$0"'
# $0 path, $1 offset: stdin written into the file from there (nothing before it or after the end changed).
_WRITE = 'exec 1<>"$0" || exit 1; [ "$1" = 0 ] || dd bs=1 seek="$1" count=0 conv=notrunc 2>/dev/null; exec cat'
_OPEN = (
    '[ -d "$0" ] && { echo "Is a directory: $0" >&2; exit 1; }; '
    'if [ "$1" = excl ] && { [ -e "$0" ] || [ -L "$0" ]; }; then echo "File exists: $0" >&2; exit 1; fi; '
    'if [ "$1" = trunc ]; then : >"$0" || exit 1; elif [ "$1" != keep ]; then [ -e "$0" ] || : >"$0" || exit 1; fi'
)


class FileStat:
    __slots__ = ("atime", "gid", "mode", "mtime", "name", "size", "uid")

    def __init__(self, line: str) -> None:
        mode, size, uid, gid, atime, mtime, name = line.split("|", 6)
        self.mode = int(mode, 16)
        self.size, self.uid, self.gid = int(size), int(uid), int(gid)
        self.atime, self.mtime = int(atime), int(mtime)
        self.name = name


class FileError(ProviderError):
    """A file operation the machine refused; ``kind`` is ``missing``, ``denied``, ``exists`` or ``failed``."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class MachineFiles:
    """One machine's files for an SFTP session; every call blocks (rig runs it on a thread)."""

    def __init__(self, streams: SupportsExecStreams, resource: EffectEntry, workdir: str) -> None:
        self.streams = streams
        self.resource = resource
        self.workdir = workdir

    def absolute(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(self.workdir, path or "."))

    def run(self, script: str, *args: str) -> str:
        code, out, err = capture(self.streams, self.resource, ["sh", "-c", script, *args])
        if code != 0:
            said = err.decode("utf-8", "replace").strip() or f"exit {code}"
            lowered = said.lower()
            kind = (
                "missing"
                if "no such file" in lowered or "can't cd" in lowered or "can't open" in lowered
                else "denied"
                if "permission denied" in lowered or "read-only" in lowered
                else "exists"
                if "exists" in lowered
                else "failed"
            )
            raise FileError(said, kind)
        return out.decode("utf-8", "surrogateescape")

    def stat(self, path: str, *, follow: bool) -> FileStat:
        out = self.run(_STAT, self.absolute(path), FORMAT, "-L" if follow else "")
        return FileStat(out.rstrip("\n"))

    def listdir(self, path: str) -> list[FileStat]:
        out = self.run(_LIST, self.absolute(path), FORMAT)
        return [FileStat(line) for line in out.splitlines() if line.count("|") >= 6]

    def prepare(self, path: str, how: str) -> None:
        """Before writing: ``trunc`` empties (or creates), ``excl`` refuses an existing one, ``create``
        creates a missing one, ``keep`` checks only that it is no directory."""
        self.run(_OPEN, self.absolute(path), how)

    def command(self, argv: Sequence[str]) -> None:
        self.run('exec "$@"', "sh", *argv)

    def reader(self, path: str, offset: int) -> ExecStream:
        program = self.streams.open_exec(
            self.resource, ["sh", "-c", _READ, self.absolute(path), str(offset)], pty=None, env={}, cwd=None
        )
        program.close_stdin()
        return program

    def writer(self, path: str, offset: int) -> ExecStream:
        return self.streams.open_exec(
            self.resource, ["sh", "-c", _WRITE, self.absolute(path), str(offset)], pty=None, env={}, cwd=None
        )


def finish(program: ExecStream, what: str) -> None:
    """Wait for a reader or writer to end; FileError with what it said when it failed."""
    errors = bytearray()
    while True:
        stream, data = program.read()
        if not stream:
            break
        if stream != STDOUT:
            errors.extend(data[:4096])
    status = program.wait()
    program.close()
    if status.code != 0:
        raise FileError(f"{what}: {errors.decode('utf-8', 'replace').strip() or status}", "failed")


__all__ = ["FileError", "FileStat", "MachineFiles", "finish"]

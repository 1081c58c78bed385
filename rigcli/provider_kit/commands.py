"""Command plumbing for machine providers: bounded output, command.* events, results and failures."""

from __future__ import annotations

import codecs
import os
from collections import deque
from collections.abc import Callable, Iterable, Mapping

from rigcli import masking
from rigcli.authoring.values import SecretValue
from rigcli.errors import ProviderError
from rigcli.provider_api import EventData
from rigcli.speed.records import lazy_dataclass

OUTPUT_LIMIT = 1 << 20  # bytes of each stream kept in memory for the result
CHUNK_LIMIT = 64 * 1024  # a line longer than this is emitted in pieces
STREAMS = ("stdout", "stderr")


class TailBuffer:
    """Keeps the last ``limit`` bytes written to it and counts the bytes it dropped."""

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        self.limit = limit
        self.dropped = 0
        self._chunks: deque[bytes] = deque()
        self._size = 0  # bytes kept: the chunks', less the first's ``_skip``
        # How much of the first chunk is dropped. An offset, not a slice: a MiB read that pushes
        # the oldest one out by a few KiB would otherwise copy the rest of it, once per read.
        self._skip = 0

    def write(self, data: bytes) -> None:
        if not data:
            return
        self._chunks.append(data)
        self._size += len(data)
        while self._size > self.limit:
            excess = self._size - self.limit
            left = len(self._chunks[0]) - self._skip
            if left <= excess:
                self._chunks.popleft()
                self._skip = 0
                self._size -= left
                self.dropped += left
            else:
                self._skip += excess
                self._size -= excess
                self.dropped += excess

    def getvalue(self) -> bytes:
        if not self._skip:
            return b"".join(self._chunks)
        first, *rest = self._chunks
        return b"".join((memoryview(first)[self._skip :], *rest))


class LineChunker:
    """Turns raw reads into text chunks that end on a line break (or are CHUNK_LIMIT long)."""

    def __init__(self, limit: int = CHUNK_LIMIT) -> None:
        self.limit = limit
        self._pending = bytearray()
        self._undecoded = b""  # the start of a multi-byte character split across reads, kept whole

    def feed(self, data: bytes) -> list[str]:
        cut = data.rfind(b"\n") + 1
        if cut == 0:  # no line ends here: held, unless it is already a chunk's worth
            self._pending += data
            if len(self._pending) < self.limit:
                return []
            text = self._decode(self._pending)
            self._pending.clear()
            return [text] if text else []
        if self._pending:  # the held start of the line, then the read's whole lines: one copy of them
            self._pending += memoryview(data)[:cut]
            text = self._decode(self._pending)
        else:  # decoded in place: a MiB read is not copied before it is decoded
            text = self._decode(memoryview(data)[:cut])
        self._pending = bytearray(data[cut:])
        return [text] if text else []

    def flush(self) -> list[str]:
        text = self._decode(self._pending, final=True)
        self._pending.clear()
        return [text] if text else []

    def _decode(self, data: bytes | bytearray | memoryview, *, final: bool = False) -> str:
        # What codecs' incremental UTF-8 decoder does, without the copy its Python wrapper makes of
        # every input to put its held bytes in front (a MiB per read, and there are none held).
        if self._undecoded:
            data = self._undecoded + bytes(data)
        text, used = codecs.utf_8_decode(data, "replace", final)
        self._undecoded = bytes(data[used:])
        return text


class Redactor:
    """Masks secret values (as resolved from ``secret(...)``) in text shown to anyone."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        # Each line of a multi-line value too: command output is cut into lines (masking.pieces).
        found = {piece for value in values if value for piece in (value, *masking.pieces(value))}
        self._values = sorted(found, key=len, reverse=True)

    @classmethod
    def from_values(cls, *sources: object) -> Redactor:
        return cls(_secret_strings(sources))

    def __call__(self, text: str) -> str:
        for value in self._values:
            text = text.replace(value, "***")
        return masking.mask_text(text)  # and whatever else is registered (values providers marked)


def _secret_strings(value: object) -> list[str]:
    if isinstance(value, SecretValue):
        return [str(value)]
    if isinstance(value, Mapping):
        return [item for entry in value.values() for item in _secret_strings(entry)]
    if isinstance(value, (list, tuple)):
        return [item for entry in value for item in _secret_strings(entry)]
    return []


@lazy_dataclass(frozen=True)
class CommandResult:
    """What a finished command produced; output beyond OUTPUT_LIMIT per stream is counted, not kept."""

    command: str
    name: str | None
    exit_code: int
    stdout: str
    stderr: str
    stdout_truncated_bytes: int = 0
    stderr_truncated_bytes: int = 0
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @property
    def truncated_bytes(self) -> int:
        return self.stdout_truncated_bytes + self.stderr_truncated_bytes

    @property
    def label(self) -> str:
        return describe_command(self.command, self.name)


class CommandFailedError(ProviderError):
    """A checked command exited non-zero or timed out; ``result`` holds what it printed."""

    def __init__(self, message: str, result: CommandResult) -> None:
        super().__init__(message)
        self.result = result


def describe_command(command: str, name: str | None) -> str:
    if name:
        return f'"{name}"'
    flat = " ".join(command.split())
    return f'"{flat[:77]}..."' if len(flat) > 80 else f'"{flat}"'


def failure(result: CommandResult, *, timeout: float | None, redact: Redactor) -> CommandFailedError:
    if result.timed_out:
        message = f"Command {result.label} timed out after {timeout:g}s and was stopped"
    else:
        message = f"Command {result.label} failed with exit code {result.exit_code}"
        last = next((line for line in reversed(result.stderr.splitlines()) if line.strip()), "")
        if last:
            message += f": {last.strip()[:200]}"
    return CommandFailedError(redact(message), result)


class CommandRecorder:
    """Reports one command as command.* events while keeping a bounded tail of its output."""

    def __init__(
        self,
        emit: Callable[[EventData], None],
        *,
        command: str,
        name: str | None,
        node_path: str,
        machine: str,
        provider_id: str,
        redact: Redactor,
        limit: int = OUTPUT_LIMIT,
    ) -> None:
        self.command_id = f"cmd-{os.urandom(6).hex()}"
        self.command = command
        self.name = name
        self._emit = emit
        self._redact = redact
        self._base: EventData = {"node_path": node_path, "command_id": self.command_id, "name": name}
        self._start: EventData = {"machine": machine, "provider_id": provider_id}
        self._buffers = {stream: TailBuffer(limit) for stream in STREAMS}
        self._chunkers = {stream: LineChunker() for stream in STREAMS}

    def started(self) -> None:
        event: EventData = {"type": "command.started", **self._base, "command": self._redact(self.command)}
        self._emit({**event, **self._start})

    def feed(self, stream: str, data: bytes) -> None:
        self._buffers[stream].write(data)
        for chunk in self._chunkers[stream].feed(data):
            self._output(stream, chunk)

    def _output(self, stream: str, text: str) -> None:
        self._emit({"type": "command.output", **self._base, "stream": stream, "data": self._redact(text)})

    def finish(self, exit_code: int, *, timed_out: bool = False, cancelled: bool = False) -> CommandResult:
        for stream in STREAMS:
            for chunk in self._chunkers[stream].flush():
                self._output(stream, chunk)
        out, err = (self._buffers[stream] for stream in STREAMS)
        result = CommandResult(
            command=self.command,
            name=self.name,
            exit_code=exit_code,
            stdout=out.getvalue().decode("utf-8", errors="replace"),
            stderr=err.getvalue().decode("utf-8", errors="replace"),
            stdout_truncated_bytes=out.dropped,
            stderr_truncated_bytes=err.dropped,
            timed_out=timed_out,
        )
        self._emit(
            {
                "type": "command.completed",
                **self._base,
                "exit_code": exit_code,
                "truncated_bytes": result.truncated_bytes,
                "timed_out": timed_out,
                "cancelled": cancelled,
            }
        )
        return result


def exit_status(returncode: int) -> int:
    """A POSIX-shell style exit code: death by signal N reads as 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


__all__ = [
    "CHUNK_LIMIT",
    "OUTPUT_LIMIT",
    "CommandFailedError",
    "CommandRecorder",
    "CommandResult",
    "LineChunker",
    "Redactor",
    "TailBuffer",
    "describe_command",
    "exit_status",
    "failure",
]

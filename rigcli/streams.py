"""The process's own output streams: past the engine's capture of handler output, and past the fd relay.

While a command runs project code, file descriptors 1 and 2 are pipes (``OutputRelay``): whatever
reaches them — ``os.write(1, ...)``, a handler's child process, a host command — is read by a
thread, masked (secrets, also split across writes) and written where the descriptor pointed
before. rig's own renderers write past the relay (``real_stdout``/``real_stderr``): their lines are
already masked, and 200 MB of command output must not be copied through a pipe twice.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import io
import os
import select
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

from rigcli import masking

_READ_SIZE = 64 * 1024
_DRAIN_SECONDS = 1.0  # at stop: how long what is still in the pipes (a child's last words) may take
_SYNC_SECONDS = 2.0  # the longest a renderer waits for the relay to catch up before it writes

_relay: OutputRelay | None = None


def real_stream(stream: TextIO) -> TextIO:
    """The stream under the engine's handler-output capture proxy (it exposes ``rig_real_stream``).

    Renderers are event listeners and events fire inside handlers, so writing through the proxy
    would turn our own lines into more log.output events, without end; and a prompt written
    through it would be swallowed as task output while we wait for the answer.
    """
    while hasattr(stream, "rig_real_stream"):
        stream = stream.rig_real_stream
    return stream


def real_stderr() -> TextIO:
    relay = _relay
    return relay.direct[2] if relay is not None and 2 in relay.direct else real_stream(sys.stderr)


def real_stdout() -> TextIO:
    relay = _relay
    return relay.direct[1] if relay is not None and 1 in relay.direct else real_stream(sys.stdout)


def write_bytes(stream: TextIO, data: bytes | memoryview, *more: bytes | memoryview) -> None:
    """``data`` onto ``stream``'s bytes as it is (no decoding to text and encoding back), after what
    was written to it as text; a stream with no bytes under it gets it decoded. ``more`` follows it
    (pieces written in turn rather than joined: a MiB is not copied to put a line end after it)."""
    if isinstance(stream, _DirectStream):
        if stream.relay.stopped:
            stream = stream.fallback
        else:
            stream.relay.sync()
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(b"".join((data, *more)).decode("utf-8", "replace"))
        return
    stream.flush()
    buffer.write(data)
    for piece in more:
        buffer.write(piece)


class _Pipe:
    """One relayed descriptor: the pipe now behind it, where it pointed, and the stream's masking state."""

    def __init__(self, fd: int, target: int, read_end: int, shown: Callable[[str], str] | None) -> None:
        self.fd = fd
        self.target = target
        self.read_end = read_end
        self.shown = shown  # what may reach the target (a terminal: no control sequences)
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")  # bytes survive whole
        self.masker = masking.StreamMasker()
        self.broken = False  # the target's reader went away: the rest is dropped
        self.read = 0
        self.written = 0

    def relay(self, data: bytes) -> None:
        try:
            text = self.masker.feed(self.decoder.decode(data))
        except Exception:  # the pipe must keep draining, or the writer would block for good
            text = masking.mask_text(data.decode("utf-8", "replace"))
        self._show(text)

    def finish(self) -> None:
        self._show(self.masker.feed(self.decoder.decode(b"", final=True)) + self.masker.flush())

    def _show(self, text: str) -> None:
        if self.shown is not None and text:
            text = self.shown(text)
        self._write(text.encode("utf-8", "surrogateescape"))

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view and not self.broken:
            try:
                view = view[os.write(self.target, view) :]
            except InterruptedError:
                continue
            except OSError:
                self.broken = True  # EPIPE, EIO (a terminal that hung up): nobody reads this any more


class OutputRelay:
    """Points fd 1 and 2 at pipes and relays what arrives, masked, to where they pointed.

    ``on_terminal`` filters what goes to a target that is a terminal (the CLI removes control
    sequences there); a pipe or file gets the bytes as they were written, secrets masked.
    """

    def __init__(self, on_terminal: Callable[[str], str] | None = None) -> None:
        self._on_terminal = on_terminal
        self.pipes: dict[int, _Pipe] = {}
        self.direct: dict[int, TextIO] = {}  # streams on the original targets, for rig's own output
        self._wake_read, self._wake_write = os.pipe()
        self._stopping = False
        self.stopped = False
        self._progress = threading.Condition()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
            with contextlib.suppress(Exception):
                stream.flush()  # what was written before goes straight where it was meant to
            try:
                target = os.dup(fd)
            except OSError:
                continue  # no such descriptor: nothing to relay
            read_end, write_end = os.pipe()
            os.dup2(write_end, fd)
            os.close(write_end)
            shown = self._on_terminal if self._on_terminal is not None and os.isatty(target) else None
            self.pipes[fd] = _Pipe(fd, target, read_end, shown)
            self.direct[fd] = _direct_stream(target, real_stream(stream), self)
        self._thread = threading.Thread(target=self._run, name="rig:output-relay", daemon=True)
        self._thread.start()

    def isatty(self, fd: int) -> bool:
        pipe = self.pipes.get(fd)
        return os.isatty(pipe.target if pipe is not None else fd)

    def sync(self) -> None:
        """Wait until what was written to fd 1 and 2 so far has been relayed: keeps output in order."""
        if self._thread is None or threading.get_ident() == self._thread.ident:
            return
        wanted = [(pipe, pipe.read + _pending(pipe.read_end)) for pipe in self.pipes.values()]
        if all(pipe.written >= count for pipe, count in wanted):
            return  # the common case, without taking the lock: nothing written since the last sync
        with self._progress:
            self._progress.wait_for(
                lambda: self._stopping or all(pipe.written >= count for pipe, count in wanted),
                timeout=_SYNC_SECONDS,
            )

    def stop(self) -> None:
        """Give fd 1 and 2 back, relay what is still in the pipes, and end the thread."""
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        for fd, pipe in self.pipes.items():
            with contextlib.suppress(OSError):
                os.dup2(pipe.target, fd)
        for stream in self.direct.values():
            with contextlib.suppress(Exception):
                stream.flush()
        self.stopped = True  # rig's own streams write to the restored descriptors from now on
        self._stopping = True
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"x")
        if self._thread is not None:
            self._thread.join(timeout=_DRAIN_SECONDS + 1.0)
        if self._thread is not None and self._thread.is_alive():
            return  # still writing somewhere that does not take it: leave its descriptors to it
        for pipe in self.pipes.values():
            for fd in (pipe.read_end, pipe.target):
                with contextlib.suppress(OSError):
                    os.close(fd)
        for fd in (self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _run(self) -> None:
        try:
            self._pump()
        finally:
            for pipe in self.pipes.values():
                pipe.finish()
            with self._progress:
                self._progress.notify_all()

    def _pump(self) -> None:
        by_end = {pipe.read_end: pipe for pipe in self.pipes.values()}
        # select.poll, not selectors: the same wait on a few pipes without importing that module
        # (~1.2M instructions of every command); a hung-up pipe is reported too and reads as EOF.
        poller = select.poll()
        for end in (*by_end, self._wake_read):
            poller.register(end, select.POLLIN)
        drain_until: float | None = None
        while by_end:
            if self._stopping and drain_until is None:
                drain_until = time.monotonic() + _DRAIN_SECONDS
            ready = [fd for fd, _ in poller.poll(None if drain_until is None else 0)]
            if self._wake_read in ready:
                with contextlib.suppress(OSError):
                    os.read(self._wake_read, 64)
                ready.remove(self._wake_read)
            if not ready and drain_until is not None:
                break  # nothing left in the pipes
            for end in ready:
                pipe = by_end[end]
                try:
                    data = os.read(end, _READ_SIZE)
                except OSError:
                    data = b""
                pipe.read += len(data)
                if data:
                    pipe.relay(data)
                else:
                    del by_end[end]
                    poller.unregister(end)
                with self._progress:
                    pipe.written = pipe.read
                    self._progress.notify_all()
            if drain_until is not None and time.monotonic() >= drain_until:
                break


def _pending(fd: int) -> int:
    """Bytes waiting in a pipe (0 where the platform cannot tell)."""
    if _ioctl is None:
        return 0
    try:
        return int.from_bytes(_ioctl(fd, _FIONREAD, b"\0\0\0\0"), sys.byteorder)
    except OSError:
        return 0


try:
    from fcntl import ioctl as _ioctl_function
    from termios import FIONREAD as _FIONREAD
except ImportError:  # not POSIX: output order is best effort there
    _ioctl_function, _FIONREAD = None, 0  # type: ignore[assignment,misc]
_ioctl = _ioctl_function


class _DirectStream(io.TextIOWrapper):
    """A text stream on an original descriptor that first lets the relay catch up, so rig's
    own lines come after the project output written before them. Once the relay has stopped
    (a renderer kept past the command), it writes to the restored stream instead."""

    relay: OutputRelay
    fallback: TextIO

    def write(self, text: str) -> int:
        if self.relay.stopped:
            return self.fallback.write(text)
        self.relay.sync()
        return super().write(text)

    def flush(self) -> None:
        if self.relay.stopped:
            self.fallback.flush()
        else:
            super().flush()


def _direct_stream(fd: int, like: TextIO, relay: OutputRelay) -> TextIO:
    stream = _DirectStream(
        io.BufferedWriter(io.FileIO(fd, "w", closefd=False)),
        encoding=getattr(like, "encoding", None) or "utf-8",
        errors=getattr(like, "errors", None) or "strict",
        line_buffering=bool(getattr(like, "line_buffering", False)),
    )
    stream.relay = relay
    stream.fallback = like
    return stream


@contextlib.contextmanager
def relayed_output(on_terminal: Callable[[str], str] | None = None) -> Iterator[None]:
    """While the block runs, fd 1 and 2 are relayed through the masker (see the module docstring)."""
    global _relay
    if _relay is not None:  # nested: the outer relay already covers it
        yield
        return
    relay = OutputRelay(on_terminal)
    try:
        relay.start()
    except OSError as exc:
        if exc.errno not in (errno.EMFILE, errno.ENFILE):
            raise
        relay.stop()  # out of descriptors: run unrelayed rather than not at all
        yield
        return
    _relay = relay
    try:
        yield
    finally:
        _relay = None
        relay.stop()


def relaying() -> bool:
    """Whether fd 1 and 2 pass the masker now (a CLI command is running)."""
    return _relay is not None


def stdout_is_terminal() -> bool:
    """Whether what rig writes to stdout reaches a terminal (the relay's pipe is not one)."""
    relay = _relay
    try:
        return relay.isatty(1) if relay is not None else sys.stdout.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def stderr_is_terminal() -> bool:
    relay = _relay
    try:
        return relay.isatty(2) if relay is not None else sys.stderr.isatty()
    except (AttributeError, ValueError, OSError):
        return False


__all__ = [
    "OutputRelay",
    "real_stderr",
    "real_stdout",
    "real_stream",
    "relayed_output",
    "relaying",
    "stderr_is_terminal",
    "stdout_is_terminal",
    "write_bytes",
]

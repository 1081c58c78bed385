"""A program attached to rig's own terminal or streams: raw mode, window size, signals (``SupportsInteractive``).

A provider's ``attach`` runs on the main thread with rig's signal handling set aside. What it
needs from the terminal side is the same for every provider, so it lives here:

- ``RawTerminal``: the user's terminal in raw mode while the program owns it (every key, Ctrl-C
  and Ctrl-\\ too, goes to the program as a byte), restored on every way out; its window size,
  and a wake-up descriptor that becomes readable when the window changes (SIGWINCH);
- ``forwarding_signals``: SIGTERM and SIGHUP sent to rig (and SIGINT, SIGQUIT where the program
  does not get them from the terminal itself) handed to the program instead of ending rig;
- ``write_all``: write to rig's stdout or stderr, noticing a reader that went away.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import struct
import threading
from collections.abc import Callable, Iterator, Sequence

from rigcli.errors import InterruptedRunError
from rigcli.speed.lazy_modules import lazy_module
from rigcli.speed.signals import SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGWINCH
from rigcli.speed.signals import signal as set_handler

# Not typing.TYPE_CHECKING: rig shell/exec answered from the cache imports no typing (rigcli/__init__.py); mypy
# treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from types import FrameType
    from typing import Any

if TYPE_CHECKING:
    import termios
    import tty
else:
    termios = lazy_module("termios")
    tty = lazy_module("tty")


STDIN, STDOUT, STDERR = 0, 1, 2
FORWARDED = (SIGINT, SIGQUIT, SIGTERM, SIGHUP)
_READ = 64 * 1024


def window_size(fd: int = STDIN) -> tuple[int, int]:
    """``(rows, columns)`` of the terminal on ``fd``; ``(24, 80)`` when it has none."""

    try:
        rows, columns, _, _ = struct.unpack("HHHH", fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))
    except OSError:
        return 24, 80
    return (rows or 24), (columns or 80)


def is_terminal(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


class RawTerminal:
    """The terminal on ``fd`` in raw mode for the block; ``resized`` is readable after each SIGWINCH.

    Restored (attributes and the SIGWINCH handler) however the block ends: a return, an
    exception, a signal rig handles. Only SIGKILL leaves it raw (``reset`` fixes that).
    """

    def __init__(self, fd: int = STDIN) -> None:
        self.fd = fd
        self._saved: list[Any] | None = None
        self._previous: object = None
        self.resized, self._resize_write = os.pipe()
        os.set_blocking(self.resized, False)
        os.set_blocking(self._resize_write, False)

    def __enter__(self) -> RawTerminal:

        self._saved = termios.tcgetattr(self.fd)
        if threading.current_thread() is threading.main_thread():
            self._previous = set_handler(SIGWINCH, self._on_resize)
        tty.setraw(self.fd, termios.TCSANOW)
        return self

    def __exit__(self, *exc: object) -> None:

        try:
            if self._saved is not None:
                with contextlib.suppress(termios.error, OSError):
                    termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
        finally:
            if self._previous is not None:
                with contextlib.suppress(ValueError, TypeError):
                    set_handler(SIGWINCH, self._previous)  # type: ignore[arg-type]
            for fd in (self.resized, self._resize_write):
                with contextlib.suppress(OSError):
                    os.close(fd)

    def size(self) -> tuple[int, int]:
        return window_size(self.fd)

    def take_resize(self) -> bool:
        """Whether the window changed since the last call (drains the wake-up descriptor)."""
        changed = False
        with contextlib.suppress(BlockingIOError, OSError):
            while os.read(self.resized, 64):
                changed = True
        return changed

    def _on_resize(self, signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):
            os.write(self._resize_write, b"w")


GIVE_UP_AFTER = 3  # the third signal to rig while a program ignores the first two: rig leaves, the program stays


@contextlib.contextmanager
def forwarding_signals(
    forward: Callable[[int], None], *, ignored: Sequence[int] = (), signals: Sequence[int] = FORWARDED
) -> Iterator[None]:
    """While the block runs, ``signals`` sent to rig go to ``forward(signum)`` instead (on a thread of
    its own, so the program's I/O keeps flowing); ``ignored`` ones are dropped (a program in rig's
    own process group already gets them from the terminal). The third forwarded signal leaves the
    block at once (``InterruptedRunError``, exit 128 + its number), the program left as it is.
    Handlers are restored afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        if signum in ignored:
            return
        received.append(signum)
        if len(received) >= GIVE_UP_AFTER:
            error = InterruptedRunError(f"the program did not end after {len(received)} signals; rig left it running")
            error.exit_code = 128 + signum
            raise error
        threading.Thread(target=forward, args=(signum,), name="rig-forward-signal", daemon=True).start()

    previous = {}
    try:
        for signum in signals:
            previous[signum] = set_handler(signum, handler)
        yield
    finally:
        for signum, old in previous.items():
            with contextlib.suppress(ValueError, TypeError):
                set_handler(signum, old)


def write_all(fd: int, data: bytes) -> bool:
    """Write every byte; False when nobody reads ``fd`` any more (the rest is dropped)."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except InterruptedError:
            continue
        except BlockingIOError:
            select.select([], [fd], [])
        except OSError:
            return False
    return True


__all__ = [
    "FORWARDED",
    "GIVE_UP_AFTER",
    "STDERR",
    "STDIN",
    "STDOUT",
    "RawTerminal",
    "forwarding_signals",
    "is_terminal",
    "window_size",
    "write_all",
]

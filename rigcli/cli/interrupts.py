"""SIGINT, SIGTERM and SIGHUP during one command: the first is graceful, a second leaves at once.

Python runs a signal handler in the main thread between two bytecodes, so a main thread that is
busy (a handler's import, a wait in a C call, the event loop's own thread polling for a lock)
would notice a signal late or never. Instead the signal number is written to a pipe by the C
handler (``signal.set_wakeup_fd``) and a watcher thread reads it at once:

- the first signal calls ``on_first(signum)`` from a thread of its own (the CLI cancels the
  engine: running commands are killed, the running task is cancelled, nothing new starts);
- a second one ends the process with 128 + the first signal's number, whatever is going on.

The main-thread handler first calls ``on_noticed(signum)``, which must be cheap: the CLI decides
the engine's stop there (``Cancellation.decide``). That is what keeps a terminal's Ctrl-C from
being taken for success: it reaches the whole foreground process group, so the handler's child
dies of the same signal, and its handler may return normally before the watcher's thread has
run. The kernel queues the signal for rig before that child can die (a process-group kill holds
the task list while it signals every member), to the main thread, which also runs the engine's
event loop; Python runs this handler before the next bytecode of that thread. So by the time the
loop hears the handler's result, the stop is decided, and the node ends ``interrupted``.

It then unwinds the main thread only when no event loop is running (the engine is driven by hand
then, see ``engine/runner.py``): it raises ``Interrupted``, a KeyboardInterrupt that carries the
exit code, so ``except Exception`` in project code cannot swallow it. While the loop runs,
cancelling its task is the cleaner way out and the watcher does that.

Every signal is also noted in ``signalled.py``, which decides the command's exit code; one that
came before ``install`` (while rig imported the engine, say) counts as the first.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from types import FrameType

from rigcli.cli import signalled
from rigcli.cli.signalled import SIGNALS, Interrupted
from rigcli.errors import InterruptedRunError
from rigcli.speed import signals

_STOP = b"\0"  # no signal has number 0: tells the watcher to end


def interrupted_error(signum: int) -> InterruptedRunError:
    """The error a command ends with after ``signum``: one line, exit 128 + signum."""
    error = InterruptedRunError("interrupted")
    error.exit_code = 128 + signum
    return error


class Interrupts:
    """Signal handling for one command, installed from the main thread (elsewhere it does nothing)."""

    def __init__(self, on_first: Callable[[int], None], on_noticed: Callable[[int], None] | None = None) -> None:
        self._on_first = on_first
        self._on_noticed = on_noticed
        self._lock = threading.Lock()
        self.received: int | None = None  # the first signal's number
        self._delivered = 0  # signals the watcher has read: the second one leaves at once
        self.on_loop = False  # an event loop runs the engine: the watcher cancels its task
        self.quiet = False  # cleaning up: never raise into the main thread any more
        self._raised = False
        self._pipe: tuple[int, int] | None = None
        self._previous: dict[int, object] = {}
        self._previous_fd = -1
        self._watcher: threading.Thread | None = None

    def install(self) -> None:
        if self._pipe is not None or threading.current_thread() is not threading.main_thread():
            return
        if self.received is None and signalled.first() is not None:  # one came before the engine loaded
            self.received = signalled.first()
            self._delivered = 1  # so the next one leaves at once
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)  # set_wakeup_fd needs it: the C handler must never block
        try:
            self._previous_fd = signals.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
            for signum in SIGNALS:
                self._previous[signum] = signals.signal(signum, self._in_main_thread)
        except (ValueError, OSError):
            self._restore()
            os.close(read_fd)
            os.close(write_fd)
            return
        self._pipe = (read_fd, write_fd)
        self._watcher = threading.Thread(target=self._watch, args=(read_fd,), name="rig-signals", daemon=True)
        self._watcher.start()

    def uninstall(self) -> None:
        """Give the signals back to whoever had them before; idempotent."""
        if self._pipe is None:
            return
        read_fd, write_fd = self._pipe
        self._restore()
        with contextlib.suppress(OSError):
            os.write(write_fd, _STOP)
        if self._watcher is not None:
            self._watcher.join(timeout=5)
        self._pipe = None
        os.close(read_fd)
        os.close(write_fd)

    def check(self) -> None:
        """Raise the interrupt now if a signal already came (between two engine calls, say)."""
        if self.received is not None:
            raise interrupted_error(self.received)

    def _restore(self) -> None:
        for signum, handler in self._previous.items():
            with contextlib.suppress(ValueError, TypeError, OSError):
                signals.signal(signum, handler)  # type: ignore[arg-type]
        self._previous.clear()
        with contextlib.suppress(ValueError, OSError):
            signals.set_wakeup_fd(self._previous_fd)

    def _in_main_thread(self, signum: int, frame: FrameType | None) -> None:
        signalled.note(signum)
        if self.received is None:
            self.received = signum
        if self._on_noticed is not None:
            self._on_noticed(signum)
        if self.on_loop or self.quiet or self._raised:
            return
        self._raised = True
        raise Interrupted(signum)

    def _watch(self, read_fd: int) -> None:
        while True:
            try:
                data = os.read(read_fd, 64)
            except OSError:
                return
            for signum in data:
                if signum == 0:
                    return
                if signum in SIGNALS:
                    self._notice(signum)

    def _notice(self, signum: int) -> None:
        signalled.note(signum)
        with self._lock:
            self._delivered += 1
            if self.received is None:
                self.received = signum
            first, second = self.received, self._delivered > 1
        if second:
            os._exit(128 + first)  # the second signal: whatever is still going on is abandoned
        # A thread of its own: cancelling may take a moment (killing process groups, asking a
        # remote daemon), and a second signal must still be noticed meanwhile.
        threading.Thread(target=self._on_first, args=(signum,), name="rig-interrupt", daemon=True).start()


__all__ = ["Interrupts", "interrupted_error"]

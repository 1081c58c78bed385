"""A program on the host attached to rig's own stdin, stdout and stderr (``rig shell``/``rig exec``).

For a provider whose ``attach`` runs a host program: the local provider's shell, or a CLI that
reaches the machine (the swarm provider's ``docker exec``). Signals are forwarded as
``forwarding_signals`` describes, and the program starts with SIGINT and SIGQUIT at their defaults.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence

from rigcli.errors import InterruptedRunError
from rigcli.provider_kit.commands import exit_status
from rigcli.provider_kit.interactive import GIVE_UP_AFTER, STDERR, forwarding_signals, is_terminal, write_all

NOT_FOUND, NOT_EXECUTABLE = 127, 126  # what a shell answers for a program it cannot find or run
GRACE_SECONDS = 5.0  # after the first signal passed on to the program: then what is left of it is killed


def _in_terminal_foreground() -> bool:
    """Whether rig's process group owns a terminal on its stdio: then Ctrl-C and Ctrl-\\ from that
    terminal reach the program (which is in the same group) without rig passing them on."""
    for fd in (0, 1, 2):
        if is_terminal(fd):
            with contextlib.suppress(OSError):
                if os.tcgetpgrp(fd) == os.getpgrp():
                    return True
    return False


@contextlib.contextmanager
def _caught_while_starting(*signums: int) -> Iterator[None]:
    """A signal rig was started ignoring (a job put in the background by a non-interactive shell
    ignores SIGINT and SIGQUIT) would stay ignored in the program, and a shell cannot even trap
    it: Ctrl-C would never reach it. A caught signal is reset to its default by exec, so such a
    signal is caught (and dropped) while the program starts, as in a container it is not ignored."""
    ignored = [signum for signum in signums if signal.getsignal(signum) == signal.SIG_IGN]
    for signum in ignored:
        signal.signal(signum, lambda *_: None)
    try:
        yield
    finally:
        for signum in ignored:
            signal.signal(signum, signal.SIG_IGN)


def run_attached(argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str]) -> int:
    """Run ``argv`` on rig's stdin, stdout and stderr; its exit code, or 128 + the first signal
    rig passed on to it.

    On the terminal rig is the foreground job of, the program runs in rig's process group (the
    terminal is the program's as it is rig's, job control and window size included): Ctrl-C and
    Ctrl-\\ reach it from the terminal, and SIGTERM and SIGHUP sent to rig are passed on. Anywhere
    else it runs in a process group of its own, and every signal sent to rig goes to that whole
    group (a shell waiting for its child would otherwise die alone, or wait for ever). Once a signal
    was passed on, rig waits ``GRACE_SECONDS`` at most, then kills what is left of the program.
    """
    # Handlers first, then the program: once it runs (and may have printed its prompt) a Ctrl-\
    # from the terminal must not find rig still at SIGQUIT's default, which would end rig.
    own_group = not _in_terminal_foreground()
    program = _Program(own_group)
    ignored = () if own_group else (signal.SIGINT, signal.SIGQUIT)
    with forwarding_signals(program.forward, ignored=ignored):
        try:
            with _caught_while_starting(signal.SIGINT, signal.SIGQUIT):
                process = _start(argv, cwd=cwd, env=env, own_group=own_group)
        except OSError as exc:
            code = NOT_FOUND if exc.errno == errno.ENOENT else NOT_EXECUTABLE
            write_all(STDERR, f"rig: {argv[0]}: {exc.strerror or exc}\n".encode(errors="replace"))
            return code
        try:
            returncode = program.run(process)
        except InterruptedRunError as exc:  # the third signal: rig leaves now, and takes the program along
            program.kill()
            error = InterruptedRunError(f"the program did not end after {GIVE_UP_AFTER} signals; rig killed it")
            error.exit_code = exc.exit_code
            raise error from None
        finally:
            program.end()
    return returncode if not program.passed else 128 + program.passed[0]


def _start(argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str], own_group: bool) -> subprocess.Popen[bytes]:
    if not own_group:
        return subprocess.Popen(list(argv), cwd=cwd, env=dict(env), close_fds=True)
    if sys.version_info >= (3, 11):
        return subprocess.Popen(list(argv), cwd=cwd, env=dict(env), close_fds=True, process_group=0)
    return subprocess.Popen(list(argv), cwd=cwd, env=dict(env), close_fds=True, preexec_fn=os.setpgrp)


class _Program:
    """The started program, the signals passed on to it, and the kill ``GRACE_SECONDS`` after the first."""

    def __init__(self, own_group: bool) -> None:
        self.own_group = own_group
        self.process: subprocess.Popen[bytes] | None = None
        self.pending: list[int] = []  # sent to rig while the program was starting: passed on once it runs
        self.passed: list[int] = []
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def run(self, process: subprocess.Popen[bytes]) -> int:
        """Wait for ``process``; its exit status."""
        with self._lock:
            self.process, pending = process, self.pending
        for signum in pending:
            self.forward(signum)
        return exit_status(process.wait())

    def forward(self, signum: int) -> None:
        """Pass ``signum`` on (from the forwarding thread); the first one arms the kill."""
        with self._lock:
            if self.process is None:
                self.pending.append(signum)
                return
            self.passed.append(signum)
            if self._timer is None:
                self._timer = threading.Timer(GRACE_SECONDS, self.kill)
                self._timer.daemon = True
                self._timer.start()
        self._send(signum)

    def kill(self) -> None:
        self._send(signal.SIGKILL)

    def end(self) -> None:
        """The program is done: no kill is due any more, but what it left in its group after a
        signal is killed now (a background child ignoring SIGINT, say)."""
        with self._lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        if self.passed and self.own_group:
            self._send(signal.SIGKILL)

    def _send(self, signum: int) -> None:
        process = self.process
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if self.own_group:  # the group outlives its leader while a member runs: its id is not reused
                os.killpg(process.pid, signum)
            else:
                process.send_signal(signum)  # nothing once the program is reaped


__all__ = ["GRACE_SECONDS", "run_attached"]

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
from collections.abc import Iterator, Mapping, Sequence

from rigcli.provider_kit.commands import exit_status
from rigcli.provider_kit.interactive import STDERR, forwarding_signals, is_terminal, write_all

NOT_FOUND, NOT_EXECUTABLE = 127, 126  # what a shell answers for a program it cannot find or run


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
    """Run ``argv`` on rig's stdin, stdout and stderr, in rig's process group (so the terminal is
    the program's as it is rig's, job control and window size included); its exit code.

    Signals sent to rig go to the program: SIGTERM and SIGHUP always, SIGINT and SIGQUIT only when
    they did not come from the terminal (which sends them to the program itself).
    """
    # Handlers first, then the program: once it runs (and may have printed its prompt) a Ctrl-\
    # from the terminal must not find rig still at SIGQUIT's default, which would end rig.
    started: list[subprocess.Popen[bytes]] = []
    pending: list[int] = []  # sent to rig while the program was starting: passed on once it runs

    def forward(signum: int) -> None:
        if not started:
            pending.append(signum)
            return
        with contextlib.suppress(ProcessLookupError):
            started[0].send_signal(signum)

    ignored = (signal.SIGINT, signal.SIGQUIT) if _in_terminal_foreground() else ()
    with forwarding_signals(forward, ignored=ignored):
        try:
            with _caught_while_starting(signal.SIGINT, signal.SIGQUIT):
                process = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), close_fds=True)
        except OSError as exc:
            code = NOT_FOUND if exc.errno == errno.ENOENT else NOT_EXECUTABLE
            write_all(STDERR, f"rig: {argv[0]}: {exc.strerror or exc}\n".encode(errors="replace"))
            return code
        started.append(process)
        for signum in pending:
            forward(signum)
        returncode = process.wait()
    return exit_status(returncode)


__all__ = ["run_attached"]

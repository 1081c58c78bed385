"""Child processes rig owns (ssh connections): their own process group, stopped on close, at exit and with rig."""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING

from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    import concurrent.futures

if TYPE_CHECKING:
    import ctypes
    import tempfile
else:
    ctypes = lazy_module("ctypes")
    tempfile = lazy_module("tempfile")


_PR_SET_PDEATHSIG = 1
STOP_GRACE = 1.0  # seconds between SIGTERM and SIGKILL


class OwnedProcess:
    """One child in a process group of its own; ``stop`` signals the whole group (ssh's ProxyCommand too)."""

    def __init__(self, popen: subprocess.Popen[bytes], stderr: IO[bytes]) -> None:
        self.popen = popen
        self._stderr = stderr
        self._lock = threading.Lock()
        self._stopped = False

    @property
    def pid(self) -> int:
        return self.popen.pid

    def wait(self, timeout: float) -> int | None:
        """The exit status, or None while it still runs after ``timeout`` seconds."""
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stderr_text(self) -> str:
        """What the process wrote to stderr so far (kept in a file, so it can never block on a full pipe)."""
        with self._lock:
            if self._stderr.closed:
                return ""
            self._stderr.seek(0)
            return self._stderr.read(64 * 1024).decode("utf-8", errors="replace")

    def stop(self) -> None:
        """SIGTERM to the group, SIGKILL after a grace period; reaped before it returns. Safe to repeat."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        with _LIVE_LOCK:
            _LIVE.discard(self)
        # Signalled only while unreaped: a reaped pid (and so its group id) could belong to someone else.
        if self.popen.poll() is None:
            _killpg(self.pid, signal.SIGTERM)
            if self.wait(STOP_GRACE) is None:
                _killpg(self.pid, signal.SIGKILL)
                self.popen.wait()
        with self._lock:
            self._stderr.close()


def _killpg(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


@functools.cache
def _prctl() -> Callable[[int, int], int] | None:
    if not sys.platform.startswith("linux"):
        return None

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    found: Callable[[int, int], int] = prctl
    return found


def _die_with_parent() -> Callable[[], None] | None:
    """A preexec hook asking Linux to SIGKILL the child when its parent thread dies (rig killed with -9)."""
    prctl = _prctl()
    if prctl is None:
        return None
    parent, sigkill = os.getpid(), int(signal.SIGKILL)

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, sigkill)
        if os.getppid() != parent:  # rig died between fork and prctl: nobody would ever stop us
            os._exit(1)

    return hook


class _Spawner:
    """Starts children from one thread that lives as long as rig.

    PR_SET_PDEATHSIG fires when the *thread* that forked the child ends, not the process; rig
    runs handlers on short-lived threads, so forking from them would kill ssh connections that
    the pool still holds. This thread only ends when the process does.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], OwnedProcess], concurrent.futures.Future[OwnedProcess]]]
        self._jobs = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def run(self, start: Callable[[], OwnedProcess]) -> OwnedProcess:
        import concurrent.futures  # only an ssh endpoint starts processes: nobody else pays for it

        future: concurrent.futures.Future[OwnedProcess] = concurrent.futures.Future()
        with self._lock:
            # After a fork the thread object exists but its thread does not: start a new one.
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="rig-docker-spawner", daemon=True)
                self._thread.start()
        self._jobs.put((start, future))
        return future.result()

    def _loop(self) -> None:
        while True:
            start, future = self._jobs.get()
            try:
                future.set_result(start())
            except BaseException as exc:  # handed to the caller's thread
                future.set_exception(exc)


_SPAWNER = _Spawner()
_LIVE: set[OwnedProcess] = set()
_LIVE_LOCK = threading.Lock()


def spawn(argv: Sequence[str]) -> OwnedProcess:
    """Start ``argv`` with piped stdin/stdout in its own session; it is stopped at exit if nobody did before."""

    def start() -> OwnedProcess:

        stderr = tempfile.TemporaryFile()
        try:
            popen = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,  # no terminal: Ctrl-C reaches rig only, which stops us in order
                # Safe despite threads: the hook only calls prctl, and it runs on the spawner thread's fork.
                preexec_fn=_die_with_parent(),
                bufsize=0,
            )
        except BaseException:
            stderr.close()
            raise
        process = OwnedProcess(popen, stderr)
        with _LIVE_LOCK:
            _LIVE.add(process)
        return process

    return _SPAWNER.run(start)


def stop_all() -> None:
    """Stop every child still running (at exit, after the clients had their chance to close cleanly)."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for process in live:
        process.stop()


def live_pids() -> list[int]:
    with _LIVE_LOCK:
        return sorted(process.pid for process in _LIVE)


atexit.register(stop_all)

__all__ = ["OwnedProcess", "live_pids", "spawn", "stop_all"]

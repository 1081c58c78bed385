"""No child survives rig: every process started while project code runs is found and stopped at the end.

What rig's own providers start runs in a process group of its own that the provider kills on
timeout or interrupt. That cannot cover the rest: a handler's ``subprocess.run``, ``local.run``
(attached to the terminal, so it must stay in the terminal's foreground group or it would stop
on its first read), and whatever those start in turn. So once project code is about to run the
CLI *arms* a ChildGuard:

- ``RIG_CHILD_OF=<token>`` is put into rig's environment, so everything started from then on
  carries it, however deep and whatever group or session it moves to, unless it drops rig's
  environment on purpose. ``/proc/<pid>/environ`` shows it;
- a watchdog (this file run as a script: ``python -I -S children.py TOKEN GRACE SINCE``) holds
  the read end of a pipe only rig writes to. When rig ends in any way, SIGKILL included, the pipe
  closes and the watchdog stops every process that carries the token (SIGTERM, then SIGKILL);
- at every exit rig sees (success, failure, interrupt), ``close()`` does the same itself, and also
  stops processes that dropped the variable but still descend from rig (started after arming).

Rejected: PR_SET_PDEATHSIG fires when the *thread* that forked the child ends (handlers run on
short-lived threads), is cleared for grandchildren (``sh -c 'sleep 600 &'`` escapes), and needs a
``preexec_fn``, which is not safe with threads. PR_SET_CHILD_SUBREAPER would make every orphan a
zombie of rig until it exits and changes reaping for every library in the process. Patching
``subprocess.Popen`` misses ``os.system``, ``os.posix_spawn`` and grandchildren.

Limits: Linux only (``/proc``); a process that drops rig's environment escapes a SIGKILLed rig.
A process meant to outlive rig (the browser a URL is opened in) is started with
``detached_env()``, whose empty token marks it as nobody's.
"""

from __future__ import annotations

import os
import sys
import time

# The watchdog runs this file in a fresh interpreter at every command that runs project code, while
# rig's own work goes on: it imports no more than it needs (typing and contextlib would double its
# start-up cost, taken from the commands it guards).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping
    from signal import Signals
    from subprocess import Popen

TOKEN_VARIABLE = "RIG_CHILD_OF"
GRACE_SECONDS = 2.0  # between SIGTERM and SIGKILL
_POLL_SECONDS = 0.02
_KILL_ROUNDS = 5  # after SIGKILL, look again this often for processes started meanwhile


def supported() -> bool:
    return sys.platform.startswith("linux") and os.path.isdir("/proc/self")


def detached_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: rig's) for a process that must outlive rig: it is nobody's child."""
    return {**(os.environ if env is None else env), TOKEN_VARIABLE: ""}


def _boot_ticks() -> int:
    """Now, in the unit of ``starttime`` in /proc/<pid>/stat (clock ticks since boot)."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


def _stat(pid: str) -> tuple[int, bytes, int] | None:
    """(parent pid, state, start time) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), fields[0], int(fields[19])


def _environ(pid: int) -> list[bytes] | None:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return handle.read().split(b"\0")
    except OSError:  # gone, or not ours to read (then it is not ours to stop either, by token)
        return None


def find(token: str, *, root: int | None = None, since: int = 0, exclude: Collection[int] = ()) -> list[int]:
    """Live processes started at or after ``since`` that carry ``token``, plus (given ``root``) those
    that descend from ``root`` and carry no token variable at all. Never ``root`` or ``exclude``.

    ``since`` is when the token was made: nothing older can carry it, so only newer processes'
    environments are read (reading every process's costs milliseconds at every command's end)."""
    processes: dict[int, tuple[int, bytes, int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            stat = _stat(name)
            if stat is not None:
                processes[int(name)] = stat
    wanted = f"{TOKEN_VARIABLE}={token}".encode()
    marker = f"{TOKEN_VARIABLE}=".encode()
    found = []
    for pid, (_, state, started) in processes.items():
        if pid == root or pid in exclude or state in (b"Z", b"X") or started < since:
            continue
        environ = _environ(pid)
        if environ is not None and wanted in environ:
            found.append(pid)
            continue
        unmarked = environ is None or not any(entry.startswith(marker) for entry in environ)
        if root is not None and unmarked and _descends(pid, root, processes):
            found.append(pid)
    return sorted(found)


def _descends(pid: int, root: int, processes: Mapping[int, tuple[int, bytes, int]]) -> bool:
    seen = set()
    while pid in processes and pid not in seen:
        seen.add(pid)
        pid = processes[pid][0]
        if pid == root:
            return True
    return False


def _send(pids: Collection[int], sig: Signals) -> None:
    for pid in pids:
        try:  # noqa: SIM105 - not contextlib: see the imports
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def stop(search: Callable[[], list[int]], grace: float = GRACE_SECONDS) -> None:
    """SIGTERM what ``search`` finds (and what it finds later), SIGKILL what is left after ``grace``."""
    import signal  # here, not at the top: every command that loads a project imports this module

    signalled: set[int] = set()
    deadline = time.monotonic() + grace
    while True:
        alive = search()
        if not alive:
            return
        fresh = [pid for pid in alive if pid not in signalled]
        _send(fresh, signal.SIGTERM)
        _send(fresh, signal.SIGCONT)  # a stopped process only acts on SIGTERM once continued
        signalled.update(fresh)
        if time.monotonic() >= deadline:
            break
        time.sleep(_POLL_SECONDS)
    for _ in range(_KILL_ROUNDS):
        _send(alive, signal.SIGKILL)
        time.sleep(_POLL_SECONDS)
        alive = search()
        if not alive:
            return


class ChildGuard:
    """Marks what rig starts from ``arm()`` on, and stops all of it at ``close()`` (or via the watchdog)."""

    def __init__(self, grace: float = GRACE_SECONDS) -> None:
        self.grace = grace
        self.token: str | None = None
        self._since = 0
        self._previous: str | None = None
        self._planned: str | None = None  # the token the watchdog watches for, once it runs
        self._watchdog: Popen[bytes] | None = None

    def prepare(self) -> None:
        """Start the watchdog ahead of ``arm()``: a command that is sure to run project code lets it
        start while rig still loads, instead of beside the project code's first work (two cores, and
        a container start needs them). Nothing carries its token until ``arm()``."""
        if self._watchdog is not None or self.token is not None or not supported():
            return
        self._planned = f"{os.getpid()}-{os.urandom(8).hex()}"
        self._watchdog = _start_watchdog(self._planned, self.grace, _boot_ticks() - 1)

    def arm(self) -> None:
        """From now on, processes started here are rig's children; idempotent, a no-op off Linux."""
        if self.token is not None or not supported():
            return
        self.prepare()  # makes the token, whether or not a watchdog could start
        token = self._planned
        assert token is not None
        self._since = _boot_ticks() - 1  # starttime is rounded down to a tick
        self._previous = os.environ.get(TOKEN_VARIABLE)
        os.environ[TOKEN_VARIABLE] = token
        self.token = token

    def children(self) -> list[int]:
        if self.token is None:
            return []
        watchdog = () if self._watchdog is None else (self._watchdog.pid,)
        return find(self.token, root=os.getpid(), since=self._since, exclude=watchdog)

    def close(self) -> None:
        """Stop every child (SIGTERM, SIGKILL after the grace period) and disarm; idempotent."""
        try:
            if self.token is not None:
                stop(self.children, self.grace)
        finally:
            if self.token is not None:
                if self._previous is None:
                    os.environ.pop(TOKEN_VARIABLE, None)
                else:
                    os.environ[TOKEN_VARIABLE] = self._previous
            self.token = self._planned = None
            if self._watchdog is not None and self._watchdog.stdin is not None:
                try:  # noqa: SIM105 - not contextlib: see the imports
                    self._watchdog.stdin.close()  # it looks once more, finds nothing, and exits
                except OSError:
                    pass
            self._watchdog = None


def _start_watchdog(token: str, grace: float, since: int) -> Popen[bytes] | None:
    if not sys.executable:
        return None
    import subprocess  # only commands that run project code get here

    try:
        return subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__), token, str(grace), str(since)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,  # holding rig's stdout would keep `rig ... | cat` waiting
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # the terminal's SIGHUP and Ctrl-C, or kill -- -PGID, reach rig only
            env=detached_env(),
        )
    except OSError:
        return None


def _watch(token: str, grace: float, since: int) -> None:
    import signal

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)  # our job starts when rig is gone
    try:
        while sys.stdin.buffer.read(65536):
            pass
    except OSError:
        pass
    stop(lambda: find(token, since=since), grace)


if __name__ == "__main__":
    _watch(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 0)


__all__ = ["GRACE_SECONDS", "TOKEN_VARIABLE", "ChildGuard", "detached_env", "find", "stop", "supported"]

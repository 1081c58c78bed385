"""Which process, user and host is this, and is another process on this host still alive."""

from __future__ import annotations

import functools
import os
import pwd

from rigcli.records import Liveness, LockHolder, NodeRun, describe_holder


@functools.lru_cache(maxsize=1)
def this_host() -> str:
    # What socket.gethostname() answers, without importing socket on every command.
    return os.uname().nodename


@functools.lru_cache(maxsize=1)
def this_user() -> str:
    """The OS user (``$USER``/``$LOGNAME`` first, like ``whoami`` for people), or the uid if unknown."""
    # getpass.getuser()'s order, without importing getpass (and termios) on every command.
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        if os.environ.get(name):
            return os.environ[name]
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except (OSError, KeyError, ImportError):  # no passwd entry (some containers)
        return str(os.getuid())


def this_owner() -> str:
    """``user@host``: who made a workspace, shown to teammates sharing the state."""
    return f"{this_user()}@{this_host()}"


def pid_alive(pid: int) -> bool:
    """True when ``pid`` names a live process on this host (zombies count as alive until reaped)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, it is just not ours
    return True


def left_by_dead_process(run: NodeRun) -> bool:
    """A ``running`` run whose process on this host has exited: cut off mid-way, in doubt.

    A run recorded on another host cannot be judged from here and counts as still running.
    """
    if run.status != "running":
        return False
    if not run.pid:
        return True  # no owner recorded: nobody is going to finish it
    if run.host not in (None, this_host()):
        return False
    return not pid_alive(run.pid)


def is_ours(run: NodeRun) -> bool:
    """Recorded by this very process (a run of the command in progress)."""
    return run.pid == os.getpid() and run.host in (None, this_host())


def judge_liveness(run: NodeRun, holder: LockHolder | None) -> Liveness:
    """Judge a ``running`` run of another process by its pid and the store's writer lock.

    ``holder`` is who holds the lock of the store the run is in (None: nobody). A rig records a
    run only while it holds that lock and holds it until the run is finished, so a run whose
    process does not hold the lock was cut off, whichever host it ran on. A holder that could
    not be identified (pid 0) proves nothing: then only a pid on this host can be checked.
    """
    who = f"rig pid {run.pid} on {run.host or 'an unknown host'}"
    if not run.pid:
        return Liveness(False, "no rig process was recorded for it")
    if run.host in (None, this_host()) and not pid_alive(run.pid):
        return Liveness(False, f"{who} has exited")
    if holder is not None and holder.pid:
        if (holder.pid, holder.host) == (run.pid, run.host or holder.host):
            return Liveness(True, f"{who} holds the state lock", holder)
        return Liveness(False, f"{who} does not hold the state lock ({describe_holder(holder)} does)")
    if holder is None:
        return Liveness(False, f"{who} does not hold the state lock (nobody does)")
    return Liveness(True, f"{who} may still be running it (the lock holder is not known yet)")


__all__ = [
    "is_ours",
    "judge_liveness",
    "left_by_dead_process",
    "pid_alive",
    "this_host",
    "this_owner",
    "this_user",
]

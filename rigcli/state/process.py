"""Which process, user and host is this, and is another process on this host still alive."""

from __future__ import annotations

import functools
import os

from rigcli.records import NodeRun


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
        import pwd

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


__all__ = ["left_by_dead_process", "pid_alive", "this_host", "this_owner", "this_user"]

"""Which process and host is this, and is another process on this host still alive."""

from __future__ import annotations

import functools
import os
import socket

from rigcli.records import NodeRun


@functools.lru_cache(maxsize=1)
def this_host() -> str:
    return socket.gethostname()


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


__all__ = ["left_by_dead_process", "pid_alive", "this_host"]

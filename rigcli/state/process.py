"""Which process is this, and is another one on this host still alive."""

from __future__ import annotations

import functools
import os
import socket


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


__all__ = ["pid_alive", "this_host"]

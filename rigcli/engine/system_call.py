"""``os.system`` for project code: the same command and result, without POSIX system()'s deafness to Ctrl-C.

POSIX system() sets SIGINT and SIGQUIT to "ignore" in the whole calling process while its
command runs, so that a shell survives the Ctrl-C meant for its command. rig is that calling
process: a Ctrl-C (or ``kill -INT``) while a handler sits in ``os.system`` was thrown away, rig
went on and recorded the run as if nobody had asked it to stop. While project code may run,
``os.system`` is therefore this function: ``/bin/sh -c COMMAND`` started with posix_spawn (the
child gets default signal handling, as system()'s does), waited for, and its wait status returned
exactly as ``os.system`` returns it. rig's own signal handling stays in place throughout.
"""

from __future__ import annotations

import os
import posix
import threading
from typing import Union

Command = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]  # what os.system takes

_SHELL = "/bin/sh"
_NOT_RUN = 127 << 8  # what system() returns when the shell could not be run
_installed = False
_lock = threading.Lock()


def system(command: Command) -> int:
    """Run ``command`` with ``/bin/sh -c``; its wait status, like ``os.system`` on POSIX."""
    try:
        pid = os.posix_spawn(_SHELL, [_SHELL, "-c", os.fsdecode(command)], os.environ)
    except OSError:
        return _NOT_RUN
    _, status = os.waitpid(pid, 0)  # retried on EINTR; signals are rig's main thread's business
    return status


def install() -> None:
    """Route ``os.system`` through ``system`` from now on (idempotent; POSIX only)."""
    global _installed
    if os.name != "posix" or not hasattr(os, "posix_spawn"):
        return
    with _lock:
        if _installed:
            return
        _installed = True
        os.system = system

        posix.system = system


__all__ = ["install", "system"]

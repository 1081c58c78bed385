"""A wider pipe for bulk output: ``rig logs`` copying megabytes of stored output to a reader.

A Linux pipe holds 64 KiB; a writer with 50 MB to hand over blocks, and the reader wakes, every
64 KiB, ~760 round trips through the scheduler. At 1 MiB (the unprivileged maximum,
``/proc/sys/fs/pipe-max-size``) it is ~50: ``rig logs TASK`` of a 50 MB run to a pipe took ~10% less
time (median of 15 interleaved runs, 2 cores). Raising a pipe's size changes nothing a reader can
see but when it wakes; where it cannot be raised (not a pipe, not Linux, over a user's pipe
quota) nothing changes.
"""

from __future__ import annotations

import fcntl

WIDE_PIPE_BYTES = 1 << 20
_SET_PIPE_SIZE = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux only


def widen_pipe(fd: int) -> bool:
    """Ask for a 1 MiB buffer on ``fd`` if it is a pipe; True if it now has one (refused: nothing changes)."""
    if _SET_PIPE_SIZE is None:
        return False
    try:
        return int(fcntl.fcntl(fd, _SET_PIPE_SIZE, WIDE_PIPE_BYTES)) >= WIDE_PIPE_BYTES
    except OSError:
        return False  # a terminal, a file, /dev/null, or a user over /proc/sys/fs/pipe-user-pages-soft

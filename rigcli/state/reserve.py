"""Room to finish the run journal on a full disk: a reserve file beside the database, given up when space runs out.

A task that fills the disk fails, and recording that failure is one more write. With no byte
left, SQLite cannot append to its WAL and the run would stay ``running``. So a writer keeps
``<state>.reserve`` (RESERVE_BYTES, allocated for real) while there is room, and deletes it right
before a write when the filesystem has less than that left: the journal's last few writes then
have the reserve's room. A run is only started while the reserve exists (``room_for_a_run``), so
a run that started can always be finished.
"""

from __future__ import annotations

import contextlib
import os

RESERVE_BYTES = 256 * 1024
_ROOMY = 2 * RESERVE_BYTES  # make a reserve only where it cannot be what fills the disk


def reserve_path(state_path: str) -> str:
    return f"{state_path}.reserve"


def _free_bytes(directory: str) -> int | None:
    try:
        stat = os.statvfs(directory)
    except OSError:
        return None
    return stat.f_bavail * stat.f_frsize


def before_write(state_path: str) -> None:
    """Give the reserve up when space is short, or make it when there is plenty; never raises."""
    path = reserve_path(state_path)
    free = _free_bytes(os.path.dirname(path) or ".")
    if free is None:
        return
    exists = os.path.exists(path)
    if exists and free < RESERVE_BYTES:
        with contextlib.suppress(OSError):
            os.unlink(path)
    elif not exists and free >= _ROOMY:
        _make(path)


def room_for_a_run(state_path: str) -> bool:
    """True when a run started now can be finished even if its task fills the disk."""
    before_write(state_path)
    if os.path.exists(reserve_path(state_path)):
        return True
    free = _free_bytes(os.path.dirname(state_path) or ".")
    return free is None or free >= _ROOMY  # cannot tell, or plenty of room without one


def _make(path: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return  # another rig made it meanwhile, or the directory is read-only: nothing to keep
    try:
        try:
            os.posix_fallocate(fd, 0, RESERVE_BYTES)  # blocks on disk, not a sparse file
        except (AttributeError, OSError):
            os.write(fd, b"\0" * RESERVE_BYTES)
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        return
    os.close(fd)


__all__ = ["RESERVE_BYTES", "before_write", "reserve_path", "room_for_a_run"]

"""One writer per state database: an flock on ``<state>.lock`` that says who holds it.

The kernel drops an flock when its holder dies, so a crashed rig never wedges the state; the
holder info it leaves behind in the file is how the next writer notices and reports the takeover.
Locking twice from one process is refused at once rather than deadlocking on our own flock: a
second thread waits for the first (or fails with ``wait=False``), the same thread gets a
StateError, since nested writers are a bug.

Waiting polls (a non-blocking try every ``POLL_SECONDS``) instead of blocking in ``flock``: a
blocked call cannot notice that the command was interrupted meanwhile, and the event loop's
thread may be the one waiting. ``cancelled()`` is asked between tries; once it says so the wait
ends with InterruptedRunError and nothing has been taken.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import field

from rigcli.errors import InterruptedRunError, StateError, StateLockedError
from rigcli.records import LockHolder, describe_holder, holder_from_json, unknown_holder, utc_now
from rigcli.speed.records import lazy_dataclass
from rigcli.state.process import pid_alive, this_host, this_user

# How long to wait for a holder that has the flock but has not written its info yet.
_INFO_GRACE_SECONDS = 1.0
# Between tries while waiting for a holder: how late a waiter notices a release or an interrupt.
POLL_SECONDS = 0.05


HolderCallback = Callable[[LockHolder], object]
Cancelled = Callable[[], bool]


@lazy_dataclass
class _InProcess:
    """The writer lock between threads of this process, for one state location."""

    mutex: threading.Lock = field(default_factory=threading.Lock)
    owner: int | None = None  # thread ident
    holder: LockHolder | None = None


_registry_mutex = threading.Lock()
_registry: dict[str, _InProcess] = {}


def _locked_error(state_path: str, holder: LockHolder) -> StateLockedError:
    msg = (
        f"State database {state_path} is locked by {describe_holder(holder)}; "
        "run again without --no-wait to wait for it"
    )
    return StateLockedError(msg)


def _read_holder(fd: int) -> LockHolder | None:
    try:
        data = json.loads(os.pread(fd, 65536, 0).decode("utf-8"))
    except ValueError:
        return None  # empty (released cleanly) or being written
    return holder_from_json(data)


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _current_holder(fd: int) -> LockHolder | None:
    """Who holds the flock, or None if it turned out to be free (and is now ours)."""
    deadline = time.monotonic() + _INFO_GRACE_SECONDS
    while True:
        holder = _read_holder(fd)
        if holder is not None or time.monotonic() >= deadline:
            return holder or unknown_holder()
        time.sleep(0.02)
        if _try_flock(fd):
            return None


def wait_until(acquire: Callable[[], bool], cancelled: Cancelled | None, state_path: str) -> None:
    """Try ``acquire`` until it succeeds; between tries, give up if ``cancelled()`` says so."""
    while not acquire():
        if cancelled is not None and cancelled():
            raise InterruptedRunError(f"Interrupted while waiting for the state lock on {state_path}")
        time.sleep(POLL_SECONDS)


@contextmanager
def in_process(
    state_path: str,
    *,
    wait: bool,
    on_wait: HolderCallback | None,
    key: str | None = None,
    cancelled: Cancelled | None = None,
) -> Iterator[tuple[_InProcess, bool]]:
    """Serialise threads of this process; yields the entry and whether on_wait was already called.

    ``key`` names the lock (default: the real path of ``state_path``, which names it in messages).
    Set ``entry.holder`` once the lock is held, so a waiting thread can say who holds it.
    """
    with _registry_mutex:
        entry = _registry.setdefault(key or os.path.realpath(state_path), _InProcess())
    me = threading.get_ident()
    if entry.owner == me:
        msg = f"State lock on {state_path} is already held by this thread; nested writers are not supported"
        raise StateError(msg)
    waited = False
    if not entry.mutex.acquire(blocking=False):
        holder = entry.holder or unknown_holder()
        if not wait:
            raise _locked_error(state_path, holder)
        if on_wait is not None:
            on_wait(holder)
        waited = True
        wait_until(lambda: entry.mutex.acquire(timeout=POLL_SECONDS), cancelled, state_path)
    entry.owner = me
    try:
        yield entry, waited
    finally:
        entry.owner = None
        entry.holder = None
        entry.mutex.release()


def _open_lock_file(lock_path: str) -> int:
    """The lock file's descriptor; a path that cannot be one is a clear error, not a crash."""
    try:
        os.makedirs(os.path.dirname(lock_path) or ".", exist_ok=True)
        return os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    except IsADirectoryError:
        raise StateError(
            f"Cannot take the state lock: {lock_path} is a directory, not a lock file (remove it and try again)"
        ) from None
    except OSError as exc:
        raise StateError(f"Cannot take the state lock {lock_path}: {exc.strerror or exc}") from None


@contextmanager
def state_lock(
    state_path: str,
    command: str,
    *,
    wait: bool = True,
    on_wait: HolderCallback | None = None,
    on_takeover: HolderCallback | None = None,
    cancelled: Cancelled | None = None,
) -> Iterator[LockHolder]:
    """Hold the writer lock of ``state_path`` for the ``with`` body; yields our own holder info.

    Held elsewhere: ``wait=False`` raises StateLockedError naming the holder; ``wait=True`` calls
    ``on_wait(holder)`` once, then waits until it is free or ``cancelled()`` (InterruptedRunError).
    ``on_takeover(previous)`` reports a holder that died while holding it.
    """
    lock_path = f"{state_path}.lock"
    with in_process(state_path, wait=wait, on_wait=on_wait, cancelled=cancelled) as (entry, waited):
        fd = _open_lock_file(lock_path)
        try:
            if not _try_flock(fd):
                holder = _current_holder(fd)
                if holder is not None:
                    if not wait:
                        raise _locked_error(state_path, holder)
                    if on_wait is not None and not waited:
                        on_wait(holder)
                    wait_until(lambda: _try_flock(fd), cancelled, state_path)
            previous = _read_holder(fd)
            if previous is not None and on_takeover is not None:
                on_takeover(previous)
            mine = LockHolder(
                pid=os.getpid(), host=this_host(), user=this_user(), command=command, started_at=utc_now()
            )
            with contextlib.suppress(OSError):  # a full disk: the flock alone still keeps others out
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps(mine.to_json()).encode("utf-8"), 0)
            entry.holder = mine
            try:
                yield mine
            finally:
                # Emptied on a clean release: holder info found later means its owner died.
                os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # releases the flock


def peek_holder(state_path: str) -> LockHolder | None:
    """Who holds ``state_path``'s lock, read without touching the flock (``rig ls``/``doctor``).

    A holder that died leaves its info behind until the next writer takes over, so info of a
    process that is gone from this host counts as free.
    """
    with _registry_mutex:
        entry = _registry.get(os.path.realpath(state_path))
    if entry is not None and entry.holder is not None:
        return entry.holder
    try:
        fd = os.open(f"{state_path}.lock", os.O_RDONLY)
    except OSError:
        return None
    try:
        holder = _read_holder(fd)
    finally:
        os.close(fd)
    if holder is None or (holder.host == this_host() and not pid_alive(holder.pid)):
        return None
    return holder


__all__ = ["POLL_SECONDS", "Cancelled", "HolderCallback", "in_process", "peek_holder", "state_lock", "wait_until"]

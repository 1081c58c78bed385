"""One writer per schema on PostgreSQL: a session advisory lock, held on the connection the writer uses.

Why this can never be left stuck: a session-level ``pg_advisory_lock`` belongs to the server
session that took it, and the server ends that session when its client goes away — a crash or
SIGKILL closes the socket at once, a vanished network is noticed by TCP keepalives (set on both
ends, ``connection.py``). There is no lock row to clean up and nothing like ``force-unlock``.

Who holds it: the holder writes ``{pid, host, user, command, started_at, backend_pid}`` into
``runtime_metadata`` under ``lock.holder`` (``lock.holder:<fragment>`` in the fragments schema)
right after acquiring, and deletes it on a clean release. Readers believe that row only while
``pg_locks`` shows the advisory lock granted to that very ``backend_pid``, so holder info cannot
go stale; a row left behind by a holder that died is reported once as a takeover, like SQLite's.
Waiting polls ``pg_try_advisory_lock`` with short sleeps in the calling thread, so a signal
(which rig turns into an exception while no event loop runs) ends the wait at once.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rigcli.errors import InterruptedRunError, StateLockedError
from rigcli.records import LockHolder, describe_holder, holder_from_json, unknown_holder, utc_now
from rigcli.state.dialect import Connection
from rigcli.state.lock import Cancelled, HolderCallback
from rigcli.state.postgres.connection import PgConnection, advisory_key
from rigcli.state.process import pid_alive, this_host, this_user

PROJECT_SCOPE = "project"
POLL_SECONDS = 0.2
INFO_GRACE_SECONDS = 1.0  # a holder that has the lock but has not written its info yet
# A holder process that is gone from this host: the server ends its session as soon as it reads
# the closed socket, usually within milliseconds; waiting that out beats a spurious exit 4.
DEAD_HOLDER_GRACE_SECONDS = 5.0
# The holder says who it is, in one statement (autocommit makes it a transaction of its own): its
# info for other rigs, and its session's application_name for people looking at pg_stat_activity.
_ANNOUNCE = (
    'INSERT INTO runtime_metadata ("key", value_json) '
    "SELECT ?, ? FROM (SELECT set_config('application_name', ?, false)) AS named "
    'ON CONFLICT("key") DO UPDATE SET value_json = excluded.value_json'
)


def holder_key(scope: str) -> str:
    return "lock.holder" if scope == PROJECT_SCOPE else f"lock.holder:{scope}"


def _stored(db: Connection, scope: str) -> dict[str, object] | None:
    row = db.execute('SELECT value_json FROM runtime_metadata WHERE "key" = ?', (holder_key(scope),)).fetchone()
    if row is None:
        return None
    try:
        data = json.loads(row[0])
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _granted_to(db: Connection, schema: str, scope: str) -> int | None:
    """The server pid of the session holding the advisory lock, or None when it is free."""
    row = db.execute(
        "SELECT pid FROM pg_catalog.pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 "
        "AND database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database()) "
        "AND classid::bigint = ? AND objid::bigint = ?",
        advisory_key(schema, scope),
    ).fetchone()
    return None if row is None else int(row[0])


def current_holder(db: Connection, schema: str, scope: str) -> LockHolder | None:
    """Who holds the writer lock now (pid 0 when the holder has not said yet), or None; never waits."""
    backend = _granted_to(db, schema, scope)
    if backend is None:
        return None
    stored = _stored(db, scope)
    if stored is not None and stored.get("backend_pid") == backend:
        return holder_from_json(stored) or unknown_holder()
    return unknown_holder()


def _holder_with_grace(db: Connection, schema: str, scope: str) -> LockHolder | None:
    deadline = time.monotonic() + INFO_GRACE_SECONDS
    while True:
        holder = current_holder(db, schema, scope)
        if holder is None or holder.pid or time.monotonic() >= deadline:
            return holder
        time.sleep(0.05)


def _gone(holder: LockHolder) -> bool:
    return bool(holder.pid) and holder.host == this_host() and not pid_alive(holder.pid)


def _try_lock(db: Connection, schema: str, scope: str) -> bool:
    return bool(db.execute("SELECT pg_try_advisory_lock(?, ?)", advisory_key(schema, scope)).fetchone()[0])


def locked_error(where: str, holder: LockHolder) -> StateLockedError:
    msg = f"State database {where} is locked by {describe_holder(holder)}; run again without --no-wait to wait for it"
    return StateLockedError(msg)


def _release(db: PgConnection, schema: str, scope: str, info: str) -> bool:
    """Say we are gone, then unlock; on a broken connection neither is needed (see the module doc).
    True once the lock is surely released on a connection that can go on serving."""
    try:
        if db.in_transaction:  # a write cut short by an exception
            db.execute("ROLLBACK")
        db.execute('DELETE FROM runtime_metadata WHERE "key" = ? AND value_json = ?', (holder_key(scope), info))
        db.execute("SELECT pg_advisory_unlock(?, ?)", advisory_key(schema, scope))
    except Exception:  # the connection broke: the server ends the session, and the lock with it
        return False
    return True


@contextmanager
def advisory_lock(
    connect: Callable[[], PgConnection],
    *,
    done: Callable[[PgConnection], None] = PgConnection.close,
    where: str,
    schema: str,
    scope: str,
    command: str,
    wait: bool,
    on_wait: HolderCallback | None,
    on_takeover: HolderCallback | None,
    cancelled: Cancelled | None = None,
    waited: bool = False,
) -> Iterator[tuple[PgConnection, LockHolder]]:
    """Hold (schema, scope)'s writer lock on the connection ``connect`` gives; yields it and our holder
    info, and hands the connection to ``done`` afterwards: unlocked, or never locked. A connection
    that may still hold the lock (the release failed, or an error came between taking the lock
    and the body) is closed instead: only ending its session is sure to free the lock."""
    db = connect()
    dying_until = time.monotonic() + DEAD_HOLDER_GRACE_SECONDS
    unlocked = True
    try:
        while not _try_lock(db, schema, scope):
            holder = _holder_with_grace(db, schema, scope)
            if holder is None:
                continue  # released between our try and our look: try again at once
            if _gone(holder) and time.monotonic() < dying_until:
                time.sleep(0.05)  # its session ends a moment after the process: no need to report it
                continue
            if not wait:
                raise locked_error(where, holder)
            if on_wait is not None and not waited:
                on_wait(holder)
                waited = True
            if cancelled is not None and cancelled():
                raise InterruptedRunError(f"Interrupted while waiting for the state lock on {where}")
            time.sleep(POLL_SECONDS)
        unlocked = False
        previous = holder_from_json(_stored(db, scope))
        if previous is not None and on_takeover is not None:
            on_takeover(previous)  # its holder died without releasing; the server already freed the lock
        mine = LockHolder(pid=os.getpid(), host=this_host(), user=this_user(), command=command, started_at=utc_now())
        backend = int(db.raw.info.backend_pid)
        info = json.dumps({**mine.to_json(), "backend_pid": backend})
        session_name = f"rig {command} pid {os.getpid()}"[:63]  # what pg_stat_activity shows: 63 bytes at most
        db.execute(_ANNOUNCE, (holder_key(scope), info, session_name))
        try:
            yield db, mine
        finally:
            unlocked = _release(db, schema, scope, info)
    finally:
        if unlocked:
            done(db)
        else:
            db.close()


__all__ = ["PROJECT_SCOPE", "advisory_lock", "current_holder", "holder_key", "locked_error"]

"""The bound on a statement that never returns: one thread per process cuts a connection whose statement outlived it.

libpq has no read timeout, and a server that keeps the connection open but stops answering (a
stopped server process, a pooler that never hands over a server connection, a middlebox that
went quiet) holds TCP keepalives up too. So each statement is armed here with its deadline
(``PgConnection``: RIG_READ_TIMEOUT, RIG_LONG_TIMEOUT for a bulk write) and disarmed when it
returns; one that is still waiting at its deadline has its socket shut down, which ends psycopg's
wait at once with an error that ``PgConnection`` reports as the bound running out. The server
ends the session when it notices, with any lock it held. A statement that waits on purpose (a
migration waiting for another's transaction lock) is not armed.

Arming costs a lock and a dict entry: the thread is woken only when a deadline comes sooner than
the one it sleeps until, and it starts with the first statement.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from typing import Protocol

from rigcli.timeouts import Bound


class Cuttable(Protocol):
    """A connection the watchdog can cut: ``cut_off`` shuts its socket down, from another thread."""

    def cut_off(self, bound: Bound) -> None: ...


class Watchdog:
    """Deadlines of the statements running now, and the thread that cuts those that pass theirs."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._due: dict[Cuttable, tuple[float, Bound]] = {}
        self._until = float("inf")  # when the thread wakes next (inf: when something is armed)
        self._thread: threading.Thread | None = None

    def arm(self, connection: Cuttable, bound: Bound) -> None:
        deadline = time.monotonic() + bound.seconds
        with self._cond:
            self._due[connection] = (deadline, bound)
            if self._thread is None or not self._thread.is_alive():  # the first statement, or after a fork
                self._thread = threading.Thread(target=self._watch, name="rig-pg-watchdog", daemon=True)
                self._thread.start()
            elif deadline < self._until:
                self._cond.notify()

    def disarm(self, connection: Cuttable) -> None:
        with self._cond:
            self._due.pop(connection, None)

    def _watch(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                for connection, (deadline, bound) in list(self._due.items()):
                    if deadline <= now:
                        del self._due[connection]
                        with contextlib.suppress(Exception):  # a connection closing meanwhile needs no cut
                            connection.cut_off(bound)
                self._until = min((deadline for deadline, _ in self._due.values()), default=float("inf"))
                self._cond.wait(None if self._until == float("inf") else self._until - now)


def shut_down(fd: int) -> None:
    """End every wait on the socket ``fd`` (both directions), without closing it under its owner."""
    with socket.socket(fileno=os.dup(fd)) as duplicate:
        duplicate.shutdown(socket.SHUT_RDWR)


WATCHDOG = Watchdog()

__all__ = ["WATCHDOG", "Cuttable", "Watchdog", "shut_down"]

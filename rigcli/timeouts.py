"""How long rig waits on anything outside its process: each bound, its default, the variable that changes it.

Every request rig makes to something outside the process — a Docker or Podman daemon (unix
socket, tcp, TLS, ssh), a swarm node, a registry, PostgreSQL — is bounded twice: reaching the
other end, and waiting for its answer. This module alone reads the variables; each is a number
of seconds greater than 0 (``30``, ``2.5``):

``RIG_CONNECT_TIMEOUT`` (default 10 s)
    reaching the other end: a tcp or unix-socket connect, a TLS handshake, ssh's own
    ``ConnectTimeout``, PostgreSQL's ``connect_timeout`` (unless the URL or ``PGCONNECT_TIMEOUT``
    sets one).
``RIG_READ_TIMEOUT`` (default 60 s)
    each wait for an answer, or the next part of one, once a request is sent: Docker Engine API
    requests, registry requests, a PostgreSQL statement.
``RIG_CHECK_TIMEOUT`` (default 5 s)
    the questions ``rig plan`` and ``rig ls`` ask a daemon: the provider's check, whether a
    cached snapshot is still there, ``rig doctor``'s report, and (at most 2 s of it) the
    live-status probe. A daemon that did not answer one of these is not asked another in the
    same command: the first answer stands.
``RIG_LONG_TIMEOUT`` (default 1800 s)
    what is long by nature: a commit, a push or pull, an image import.

Unbounded on purpose: the output of a running command (a task's ``exec``, ``rig exec``/``rig
shell``), which may be quiet as long as it likes (its own ``timeout=`` and Ctrl-C end it), and
the wait for another rig's writer lock, which has its own rules (``--no-wait``).

Running out of a bound is an uncertain answer, never "gone": a workspace's live state is
``unknown`` with the endpoint and the bound in its detail, an artifact that cannot be checked is
not taken as missing, and anything else is one error line naming both, exit 1.
"""

from __future__ import annotations

import os

from rigcli.errors import RigError

CONNECT_VARIABLE = "RIG_CONNECT_TIMEOUT"
READ_VARIABLE = "RIG_READ_TIMEOUT"
CHECK_VARIABLE = "RIG_CHECK_TIMEOUT"
LONG_VARIABLE = "RIG_LONG_TIMEOUT"
DEFAULTS = {CONNECT_VARIABLE: 10.0, READ_VARIABLE: 60.0, CHECK_VARIABLE: 5.0, LONG_VARIABLE: 1800.0}


class TimeoutSettingError(RigError):
    """A bound's variable is set to something that is not a number of seconds."""


class Bound:
    """How long one wait may take, and the variable that says so (a plain class: no dataclasses)."""

    __slots__ = ("seconds", "variable")

    def __init__(self, seconds: float, variable: str) -> None:
        self.seconds = seconds
        self.variable = variable

    def at_most(self, seconds: float) -> Bound:
        """This bound, shortened to ``seconds`` when it is longer (still named by its variable)."""
        return self if self.seconds <= seconds else Bound(seconds, self.variable)

    def plus(self, seconds: float) -> Bound:
        """This bound with ``seconds`` more (a request that itself waits that long before answering)."""
        return Bound(self.seconds + seconds, self.variable)

    def __repr__(self) -> str:
        return f"Bound({self.seconds!r}, {self.variable!r})"

    def __str__(self) -> str:
        """``5s (RIG_CHECK_TIMEOUT)``: how messages name it."""
        return f"{self.seconds:g}s ({self.variable})"


def bound(variable: str) -> Bound:
    """The bound ``variable`` sets now, or its default; a one-line error for a value that is not seconds."""
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return Bound(DEFAULTS[variable], variable)
    try:
        seconds = float(raw)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise TimeoutSettingError(
            f"{variable}={raw!r} is not a number of seconds greater than 0 (the default is {DEFAULTS[variable]:g})"
        )
    return Bound(seconds, variable)


def connect_bound() -> Bound:
    """Reaching the other end (connect, TLS handshake, ssh's ConnectTimeout, PostgreSQL's connect_timeout)."""
    return bound(CONNECT_VARIABLE)


def read_bound() -> Bound:
    """Each wait for an answer once a request is sent."""
    return bound(READ_VARIABLE)


def check_bound() -> Bound:
    """The brief questions of ``rig plan``, ``rig ls`` and ``rig doctor``."""
    return bound(CHECK_VARIABLE)


def long_bound() -> Bound:
    """Commit, push, pull, image import."""
    return bound(LONG_VARIABLE)


__all__ = [
    "CHECK_VARIABLE",
    "CONNECT_VARIABLE",
    "DEFAULTS",
    "LONG_VARIABLE",
    "READ_VARIABLE",
    "Bound",
    "TimeoutSettingError",
    "bound",
    "check_bound",
    "connect_bound",
    "long_bound",
    "read_bound",
]

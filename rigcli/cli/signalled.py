"""The first SIGINT, SIGTERM or SIGHUP of a command, from rig's first line to its exit code.

``main`` calls ``catch`` before it imports anything of the command's, so from then on none of
these signals ends rig by its default action (SIGTERM and SIGHUP would kill it without a word,
SIGINT raise a bare KeyboardInterrupt). Until the engine's own handling takes over
(``interrupts.py``, which notes here too), a signal is noted and unwinds the main thread as
``Interrupted``. On its way out that exception may become something else — Python wraps it in a
RuntimeError when it lands in a ``__set_name__`` of a class body, a plugin loader reports a
failed import, project code catches it — so what the command ends with is decided by the note,
not by the exception: once a signal came, the command exits 128 + its number with the one line
``interrupted`` (``error_handler.run_guarded``), whatever was raised or returned.

A second signal leaves at once with that code. While click parses a command line
(``deferred``) the first one is only noted, and raised when the command's body starts: click
would turn it into its own "Aborted" with a blank line. Once the command's code is decided
(``finished``), a late first signal changes nothing and raises nothing; and once the interpreter
shuts down (``atexit``), these signals are ignored: Python gives its own handlers back to their
default actions as it ends, and a signal then would kill a command that has completed.

It imports nothing but ``_signal`` (``speed/signals.py``): ``main`` imports it first, and until
``catch`` runs a signal still does what Python's defaults say.
"""

from __future__ import annotations

import atexit
import os
import sys

from rigcli.speed.signals import SIG_IGN, SIGHUP, SIGINT, SIGTERM, signal

# Not typing.TYPE_CHECKING: every command line imports this module (mypy reads any such name as True).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType

SIGNALS = (SIGHUP, SIGINT, SIGTERM)
# Not signal.Signals(n).name: no enum on this path.
_NAMES: dict[int, str] = {SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGTERM: "SIGTERM"}


class Interrupted(KeyboardInterrupt):
    """A signal unwinding the main thread; ``exit_code`` is 128 + its number."""

    def __init__(self, signum: int) -> None:
        super().__init__(_NAMES.get(signum, str(signum)))
        self.signum = signum
        self.exit_code = 128 + signum


class _Note:
    """What this process has been sent so far, and what a signal may do now."""

    def __init__(self) -> None:
        self.first: int | None = None
        self.seen = 0  # signals this module's own handler ran for (``interrupts.py`` counts its own)
        self.deferring = 0  # > 0: note the signal, raise it later (``deferred``)
        self.done = False  # the exit code is decided: note only


_note = _Note()
_reported_unraisable = sys.unraisablehook  # where ``_unraisable`` sends what is not a signal of ours


def first() -> int | None:
    """The number of the first signal this command got, or None."""
    return _note.first


def note(signum: int) -> bool:
    """Record ``signum`` (from a handler); True when it is the first."""
    if _note.first is not None:
        return False
    _note.first = signum
    return True


def catch() -> None:
    """From now on SIGINT, SIGTERM and SIGHUP are noted and raised as ``Interrupted`` (see above).
    Called once per command line, on the main thread (another thread cannot set handlers)."""
    global _note, _reported_unraisable
    _note = _Note()
    try:
        for signum in SIGNALS:
            signal(signum, _on_signal)
    except ValueError:  # not the main thread (rig called by a program of its own): leave them be
        return
    if sys.unraisablehook is not _unraisable:
        _reported_unraisable, sys.unraisablehook = sys.unraisablehook, _unraisable
        atexit.register(_ignore_from_now_on)  # once per process, as the hook


def _ignore_from_now_on() -> None:
    """The interpreter ends: the command's code is decided and its threads are gone."""
    for signum in SIGNALS:
        try:
            signal(signum, SIG_IGN)
        except ValueError:  # not the main thread
            return


def check() -> None:
    """Raise ``Interrupted`` now if a signal came while it could not be raised."""
    if _note.first is not None and not _note.done:
        raise Interrupted(_note.first)


def finished() -> None:
    """The command's exit code is decided: a first signal from now on is not raised (a second still
    leaves at once)."""
    _note.done = True


class deferred:
    """While the block runs a first signal is only noted; ``check`` raises it afterwards."""

    def __enter__(self) -> None:
        _note.deferring += 1

    def __exit__(self, *exc: object) -> None:
        _note.deferring -= 1


class raising:
    """Inside a ``deferred`` block (click calling the command's body): signals raise again, and one
    already noted is raised on entry."""

    def __enter__(self) -> None:
        self._saved, _note.deferring = _note.deferring, 0
        try:
            check()
        except BaseException:
            _note.deferring = self._saved
            raise

    def __exit__(self, *exc: object) -> None:
        _note.deferring = self._saved


def _on_signal(signum: int, frame: FrameType | None) -> None:
    note(signum)
    # Counted here, not by ``note``: a signal the engine's watcher read just before it gave the
    # handlers back may still have its Python handler pending, and that is this one.
    _note.seen += 1
    first = _note.first or signum
    if _note.seen > 1:
        os._exit(128 + first)  # the second signal: leave now
    if _note.done or _note.deferring:
        return
    raise Interrupted(first)


def _unraisable(unraisable: sys.UnraisableHookArgs) -> None:
    """A signal raised where Python cannot propagate it (a ``__del__``, a weakref callback) is not
    worth a traceback: the note decides the exit code. Anything else is reported as usual."""
    if not isinstance(unraisable.exc_value, Interrupted):
        _reported_unraisable(unraisable)


def exit_code(code: int) -> int | None:
    """128 + the first signal when one came and ``code`` does not already say so; else None."""
    signum = _note.first
    if signum is None or code == 128 + signum:
        return None
    return 128 + signum


__all__ = [
    "SIGNALS",
    "Interrupted",
    "catch",
    "check",
    "deferred",
    "exit_code",
    "finished",
    "first",
    "note",
    "raising",
]

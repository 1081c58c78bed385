"""Signal numbers and handlers straight from ``_signal``, the extension module ``signal`` wraps.

``import signal`` re-exports ``_signal`` and wraps its numbers and handlers in enums (``Signals``,
``Handlers``, ``Sigmasks``) that ``IntEnum._convert_`` builds from the module's namespace: ~1.8M
instructions of every command that loads a project, which only installs three handlers and gives
them back, and, with ``enum`` itself, ~10M of an ``rig exec`` answered from the cache. The numbers here are the same
ints; ``signal`` returns the previous handler as the same object (an int where ``signal`` would
give an equal enum member, which it accepts back). ``signal_name`` imports ``signal`` for the one
name a message needs.
"""

from __future__ import annotations

# Not typing.TYPE_CHECKING: what imports this module may import no typing (rigcli/__init__.py).
TYPE_CHECKING = False

if TYPE_CHECKING:
    from signal import SIG_IGN, SIGCONT, SIGHUP, SIGINT, SIGKILL, SIGQUIT, SIGTERM, SIGWINCH, set_wakeup_fd, signal
else:
    try:
        from _signal import SIG_IGN, SIGCONT, SIGHUP, SIGINT, SIGKILL, SIGQUIT, SIGTERM, SIGWINCH, set_wakeup_fd, signal
    except ImportError:  # an interpreter without it: the wrapper's own
        from signal import SIG_IGN, SIGCONT, SIGHUP, SIGINT, SIGKILL, SIGQUIT, SIGTERM, SIGWINCH, set_wakeup_fd, signal


def signal_name(signum: int) -> str:
    """``SIGINT`` for 2: what ``signal.Signals(signum).name`` says."""
    import signal as named

    return named.Signals(signum).name


__all__ = [
    "SIGCONT",
    "SIGHUP",
    "SIGINT",
    "SIGKILL",
    "SIGQUIT",
    "SIGTERM",
    "SIGWINCH",
    "SIG_IGN",
    "set_wakeup_fd",
    "signal",
    "signal_name",
]

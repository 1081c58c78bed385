"""``rig shell`` on a local machine: the user's own shell, run on the host in the machine's directory."""

from __future__ import annotations

import os


def login_shell() -> list[str]:
    """The user's own shell (``$SHELL``), else ``sh``."""
    return [os.environ.get("SHELL") or "/bin/sh"]


__all__ = ["login_shell"]

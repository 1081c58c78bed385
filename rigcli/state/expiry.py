"""Which workspaces are due to expire, as SQL: the one condition the store and the state file readers ask."""

from __future__ import annotations

# A create still running is never due (its status is "creating"); a failed reap is due again at its
# retry time, or at once for ``rig reap`` (``failed_too``).
DUE_STATUSES = "'ready', 'failed', 'reap-failed'"


def due_condition(*, failed_too: bool = False) -> str:
    """The ``WHERE`` clause of workspaces due by the bound parameter (``utc_now()`` text); uses ``reap_at``."""
    retry = " OR status = 'reap-failed'" if failed_too else ""
    return f"(reap_at <= ?{retry}) AND status IN ({DUE_STATUSES})"


__all__ = ["DUE_STATUSES", "due_condition"]

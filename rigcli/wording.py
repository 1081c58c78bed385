"""How rig words a count in a message: "1 line", "2 lines"; imports nothing, so any room may use it."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, the noun plural unless the count is one (``plural``: when not noun + "s")."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


__all__ = ["counted"]

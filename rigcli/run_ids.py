"""Run ids as people see them; imports nothing, so every writer of them can use it."""

from __future__ import annotations


def short_run_id(run_id: str) -> str:
    """A run id as people see it: its last 8 characters. Run ids start with their creation time
    (so they sort in creation order, state/runs.py) and end with random ones."""
    return run_id[-8:]


__all__ = ["short_run_id"]

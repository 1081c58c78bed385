"""Run and apply ids: how they are made, shown and named; imports nothing, so every writer of them can use it
(the cache's as the engine's).

An id is 12 random hex digits, then the nanoseconds since the epoch (16 hex digits): people see its
first 8 characters and type any beginning of it (at least ``MIN_REF``), as with git or docker. An
older rig made ids of 32 characters the other way round (the time first, shared by every id made in
the same few seconds) and showed their last 8: such an id is still shown, and found, by its end.
"""

from __future__ import annotations

import os
import time

SHOWN = 8  # characters of an id people see
MIN_REF = 4  # the fewest characters that name an id
LEGACY_LENGTH = 32  # ids an older rig made: time first, shown by their end (new ids are 28 long)
_HEX = frozenset("0123456789abcdef")


def new_run_id() -> str:
    """A fresh id: random first (so that its beginning tells it apart), then the time it was made."""
    return f"{os.urandom(6).hex()}{time.time_ns():016x}"


def is_legacy(run_id: str) -> bool:
    return len(run_id) == LEGACY_LENGTH


def short_run_id(run_id: str) -> str:
    """A run id as people see it: its first 8 characters (an older rig's id: its last 8)."""
    return run_id[-SHOWN:] if is_legacy(run_id) else run_id[:SHOWN]


def id_ref(ref: str) -> str | None:
    """``ref`` as the beginning (or whole) of an id, in lower case; None when it cannot be one:
    fewer than ``MIN_REF`` characters, more than an id has, or not hex."""
    text = ref.strip().lower()
    if not MIN_REF <= len(text) <= LEGACY_LENGTH or not _HEX.issuperset(text):
        return None
    return text


def names(ref: str, run_id: str) -> bool:
    """Whether ``ref`` names ``run_id``: the id itself, or its beginning (an older rig's id: also its end)."""
    text = id_ref(ref)
    if text is None:
        return False
    return run_id.startswith(text) or (is_legacy(run_id) and run_id.endswith(text))


def not_an_id(ref: str) -> str:
    """Why ``ref`` names no id, when ``id_ref`` refuses it."""
    return f"{ref!r} is not a run id: give at least {MIN_REF} of its first characters (hex digits)"


def told_apart(run_ids: list[str]) -> list[str]:
    """Each id as briefly as it is shown, or longer where that is what tells it from the others (for
    an error that lists the ids a prefix could mean)."""
    shown: list[str] = []
    for run_id in run_ids:
        if is_legacy(run_id):
            shown.append(short_run_id(run_id))
            continue
        length = SHOWN
        while length < len(run_id) and any(other != run_id and other.startswith(run_id[:length]) for other in run_ids):
            length += 1
        shown.append(run_id[:length])
    return shown


__all__ = [
    "LEGACY_LENGTH",
    "MIN_REF",
    "id_ref",
    "is_legacy",
    "names",
    "new_run_id",
    "not_an_id",
    "short_run_id",
    "told_apart",
]

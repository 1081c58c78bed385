"""The marker a rig leaves beside a damaged SQLite state file (``<database>.damaged``), and reading it.

Apart from ``damage.py`` (which writes it and checks the file) so that ``rig logs TASK`` answered
from the cache can ask whether a state file is marked without importing the sqlite3 package's wrapper.
"""

from __future__ import annotations

from rigcli.speed.lazy_modules import lazy_module

TYPE_CHECKING = False  # not typing's: read on the way of a command answered from the cache (mypy reads it as True)
if TYPE_CHECKING:
    import json
else:
    json = lazy_module("json")


MARKER_SUFFIX = ".damaged"


def marker(path: str) -> str:
    return path + MARKER_SUFFIX


def marked(path: str) -> str | None:
    """The reason recorded by the rig that found the damage, or None when there is no marker."""
    try:
        with open(marker(path), encoding="utf-8") as handle:
            record = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return "marked damaged"
    reason = record.get("reason") if isinstance(record, dict) else None
    return str(reason) if reason else "marked damaged"


__all__ = ["MARKER_SUFFIX", "marked", "marker"]

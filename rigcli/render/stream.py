"""``--json-stream``: every engine event as one JSON object on its own line, as it happens.

Each line is ``{"type", "time", ...the event's fields}`` (DESIGN §7 names, snake_case,
docs/json-and-exit-codes.md lists them); ``time`` is when rig saw the event, ISO-8601 UTC. The
command's document follows as the last line (``{"type": "summary", ...}``, written by
``cli/output.py``). Events reach here masked by the bus, and JSON escapes every control
character, so nothing needs sanitizing.
"""

from __future__ import annotations

from collections.abc import Callable

from rigcli.events import Event
from rigcli.records import utc_now


class JsonStreamRenderer:
    """Writes each event it is handed through ``write`` (one object, one line)."""

    def __init__(self, write: Callable[[dict[str, object]], None]) -> None:
        self.write = write

    def handle(self, event: Event) -> None:
        data = event.to_json()
        kind = data.pop("type", event.kind)
        self.write({"type": kind, "time": utc_now(), **data})


__all__ = ["JsonStreamRenderer"]

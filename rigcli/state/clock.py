"""UTC timestamps as stored in state: ISO-8601 text that sorts, plus a forgiving parser."""

from __future__ import annotations

import re
from datetime import datetime, timezone

# What an unreadable timestamp means: older than any cache TTL, so the entry is treated as stale.
VERY_OLD = datetime(1970, 1, 1, tzinfo=timezone.utc)

# Python 3.10's fromisoformat accepts neither "Z" nor fractions other than 3 or 6 digits;
# rows edited by hand or by other tools (JavaScript's toISOString) use both.
_ISO = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<time>\d{2}:\d{2}(?::\d{2})?)"
    r"(?:\.(?P<fraction>\d+))?(?P<zone>Z|z|[+-]\d{2}:?\d{2})?$"
)


def utc_now() -> str:
    """Now, as stored: ``2026-05-10T00:00:00.000000+00:00`` (fixed width, so text order is time order)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def parse_timestamp(text: str | None) -> datetime:
    """Parse a stored timestamp into an aware UTC datetime; anything unreadable is ``VERY_OLD``."""
    if not text:
        return VERY_OLD
    match = _ISO.match(text.strip())
    if match is None:
        return VERY_OLD
    fraction = (match["fraction"] or "")[:6].ljust(6, "0")
    zone = match["zone"] or "+00:00"
    if zone in ("Z", "z"):
        zone = "+00:00"
    elif ":" not in zone:
        zone = f"{zone[:3]}:{zone[3:]}"
    clock = match["time"] if match["time"].count(":") == 2 else f"{match['time']}:00"
    try:
        parsed = datetime.fromisoformat(f"{match['date']}T{clock}.{fraction}{zone}")
    except ValueError:
        return VERY_OLD
    return parsed.astimezone(timezone.utc)


def age_seconds(text: str | None, *, now: datetime | None = None) -> float:
    """Seconds since a stored timestamp (huge for unreadable ones, negative for future ones)."""
    reference = now if now is not None else datetime.now(timezone.utc)
    return (reference - parse_timestamp(text)).total_seconds()


__all__ = ["VERY_OLD", "age_seconds", "parse_timestamp", "utc_now"]

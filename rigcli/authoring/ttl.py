"""Parse ``cache_ttl`` values: seconds, a timedelta, or "500ms|30s|10m|6h|7d"; 0 means always run."""

from __future__ import annotations

import math
import re
from datetime import timedelta

from rigcli.errors import ConfigError

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PATTERN = re.compile(r"^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$", re.IGNORECASE)
CacheTtl = float | timedelta | str | None  # seconds (int or float), a timedelta, "30s"; None: forever
TTL_FORMAT_MESSAGE = 'cache_ttl must be a number of seconds, a timedelta, or a string like "30s", "10m", "6h" or "7d"'


def parse_ttl(value: object) -> float | None:
    """Return the TTL in seconds (None for "cache forever")."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ConfigError(TTL_FORMAT_MESSAGE)
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        match = _PATTERN.match(value.strip())
        if not match:
            raise ConfigError(f"{TTL_FORMAT_MESSAGE}, not {value!r}")
        seconds = float(match.group(1)) * _UNITS[match.group(2).lower()]
    else:
        raise ConfigError(TTL_FORMAT_MESSAGE)
    if not math.isfinite(seconds) or seconds < 0:
        raise ConfigError("cache_ttl must be a finite non-negative duration")
    return seconds


__all__ = ["CacheTtl", "parse_ttl"]

"""Parse ``cache_ttl`` values: seconds, a timedelta, or "500ms|30s|10m|6h|7d"; 0 means always run."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, TypeAlias

from rigcli.errors import ConfigError
from rigcli.speed.lazy_modules import lazy_module

if TYPE_CHECKING:
    from datetime import timedelta

if TYPE_CHECKING:
    import datetime as datetime_module
else:
    datetime_module = lazy_module("datetime")


_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PATTERN = r"^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$"  # compiled on first use, by re's own cache
# seconds (int or float), a timedelta, "30s"; None: forever. A string: datetime is imported only for a timedelta.
CacheTtl: TypeAlias = "float | timedelta | str | None"
# A workspace's lifetime (ttl, idle_stop): a century is more than any machine needs, and keeps
# "now + lifetime" a date (a larger one would not fit in one, and fail only once the apply had run).
MAX_LIFETIME_DAYS = 36500
TTL_FORMAT_MESSAGE = 'cache_ttl must be a number of seconds, a timedelta, or a string like "30s", "10m", "6h" or "7d"'
# An option's value is a word on the command line: Python's types mean nothing there.
OPTION_FORMAT_MESSAGE = '{what} must be a duration like "30s", "10m", "6h" or "7d", or a number of seconds'


def parse_ttl(value: object, what: str = "cache_ttl") -> float | None:
    """Return the TTL in seconds (None for "cache forever"); ``what`` names the setting in errors."""
    if value is None:
        return None
    is_option = what.startswith("--")
    message = OPTION_FORMAT_MESSAGE.format(what=what) if is_option else TTL_FORMAT_MESSAGE.replace("cache_ttl", what, 1)
    if isinstance(value, bool):
        raise ConfigError(message)
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        match = re.match(_PATTERN, value.strip(), re.IGNORECASE)
        if not match:
            raise ConfigError(f"{message}, not {value!r}")
        seconds = float(match.group(1)) * _UNITS[match.group(2).lower()]
    else:
        if not isinstance(value, datetime_module.timedelta):
            raise ConfigError(message)
        seconds = value.total_seconds()
    if not math.isfinite(seconds) or seconds < 0:
        raise ConfigError(f"{what} must be a finite non-negative duration")
    return seconds


def parse_lifetime(value: object, what: str) -> float | None:
    """A workspace's ``ttl`` or ``idle_stop`` (``rig fork --ttl``): a ``cache_ttl``-style duration
    that must be positive (None: never)."""
    seconds = parse_ttl(value, what)
    if seconds is not None and seconds <= 0:
        raise ConfigError(f"{what} must be a positive duration, not {value!r}")
    if seconds is not None and seconds > MAX_LIFETIME_DAYS * _UNITS["d"]:
        raise ConfigError(f"{what} must be at most {MAX_LIFETIME_DAYS}d (100 years), not {value!r}")
    return seconds


__all__ = ["MAX_LIFETIME_DAYS", "CacheTtl", "parse_lifetime", "parse_ttl"]

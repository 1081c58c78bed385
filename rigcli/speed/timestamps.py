"""A stored timestamp read without ``datetime`` or ``re``: ``rig ls``'s ages and expiries when answered from the cache.

rig stores every time as ``utc_now()`` writes it, ``2026-05-10T00:00:00.000000+00:00`` (fixed width,
UTC). ``records.parse_timestamp`` reads any ISO-8601 with a regular expression into a ``datetime``;
importing the records for it costs ``rig ls`` more than the rest of printing fifty rows. This reads
only that one spelling (a valid date and time in it) and says None for anything else, which the
caller then reads the engine.
"""

from __future__ import annotations

_DIGITS = frozenset("0123456789")
# Positions of the separators in 2026-05-10T00:00:00.000000+00:00.
_SEPARATORS = ((4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "."))
_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def stored_epoch(text: str) -> float | None:
    """Seconds since 1970 of a timestamp in rig's stored spelling; None for any other text."""
    if len(text) != 32 or not text.endswith("+00:00"):
        return None
    if any(text[index] != separator for index, separator in _SEPARATORS):
        return None
    digits = text[:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19] + text[20:26]
    if not _DIGITS.issuperset(digits):
        return None
    year, month, day = int(text[:4]), int(text[5:7]), int(text[8:10])
    hour, minute, second, micro = int(text[11:13]), int(text[14:16]), int(text[17:19]), int(text[20:26])
    if year < 1 or not 1 <= month <= 12 or hour > 23 or minute > 59 or second > 59:
        return None
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not 1 <= day <= _DAYS_IN_MONTH[month - 1] + (1 if leap and month == 2 else 0):
        return None
    return _days_since_epoch(year, month, day) * 86400 + hour * 3600 + minute * 60 + second + micro / 1_000_000


def _days_since_epoch(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to the date (the proleptic Gregorian calendar, as ``datetime``)."""
    year -= month <= 2
    era = year // 400
    of_era = year - era * 400
    of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    of_era_days = of_era * 365 + of_era // 4 - of_era // 100 + of_year
    return era * 146097 + of_era_days - 719468


__all__ = ["stored_epoch"]

"""Instants of ISO 8601 text, read the way JavaScript's ``Date.parse`` reads the ECMAScript
date-time string format, in milliseconds since the epoch.

Only unambiguous forms are read: a date alone (UTC), or a date and time with ``Z`` or a
``±hh:mm`` offset. A time without a zone (local time in JavaScript), a calendar-invalid
date or any other text has no instant here, so a check built on it fails closed.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from typing import Final

__all__ = ["datetime_epoch_ms", "iso_epoch_ms", "iso_of_epoch_ms", "system_clock_ms"]

_ISO: Final = re.compile(
    r"([+-][0-9]{6}|[0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]+))?)?(Z|[+-][0-9]{2}:[0-9]{2}))?",
    re.ASCII,
)
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def iso_epoch_ms(text: str) -> int | None:
    """Milliseconds since the epoch for ``text``, or ``None`` when it names no instant."""
    match = _ISO.fullmatch(text)
    if match is None:
        return None
    year_text, month, day, hour, minute, second, fraction, zone = match.groups()
    year = int(year_text)
    if year_text == "-000000" or not 1 <= year <= 9999:
        return None
    try:
        moment = datetime(
            year,
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            tzinfo=UTC,
        )
    except ValueError:
        return None
    millis = int((fraction or "0")[:3].ljust(3, "0"))
    if zone is not None and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        zone_hours, zone_minutes = int(zone[1:3]), int(zone[4:6])
        if zone_hours > 23 or zone_minutes > 59:
            return None
        moment -= sign * timedelta(hours=zone_hours, minutes=zone_minutes)
    return (moment - _EPOCH) // timedelta(milliseconds=1) + millis


def datetime_epoch_ms(moment: datetime) -> int | None:
    """Milliseconds since the epoch of an aware ``datetime``; a naive one names no instant."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        return None
    return (moment - _EPOCH) // timedelta(milliseconds=1)


def iso_of_epoch_ms(ms: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS.mmmZ`` of an epoch instant, as ``Date.prototype.toISOString`` writes it."""
    moment = _EPOCH + timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def system_clock_ms() -> int:
    """The wall clock in epoch milliseconds."""
    return time.time_ns() // 1_000_000

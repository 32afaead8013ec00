"""Times from outside (a query parameter, a caller's datetime): ISO 8601 with an offset,
read as the instant they name, in UTC, so PostgreSQL can hold them (it takes offsets up to
±15:59 only) and none falls outside the times that can be stored.

    read_time(value, field) -> aware datetime in UTC   InvalidField naming `field`
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Final

from django.utils.dateparse import parse_datetime

from memory.errors import InvalidField

# An ISO 8601 date-time with its offset, ASCII digits only, at most microseconds: anything
# else is refused rather than guessed (a date alone, a local time, a seventh digit cut off).
_DATETIME: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:\d{2})", re.ASCII
)
# How much of a refused value's repr its message echoes.
_ECHO_CHARS: Final = 60
# The times that can be stored: Python's, in UTC (PostgreSQL's timestamptz holds more).
EARLIEST: Final = datetime.min.replace(tzinfo=UTC)
LATEST: Final = datetime.max.replace(tzinfo=UTC)


def _parsed(value: Any) -> datetime | None:
    """`value` as an aware datetime, or None when it is not one, or text that is not one."""
    parsed = None
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str) and _DATETIME.fullmatch(value):
        try:
            parsed = parse_datetime(value)
        except ValueError:  # well formed, but no such time (February 30th, 24:00, +99:99)
            parsed = None
    return parsed if parsed is not None and parsed.utcoffset() is not None else None


def _refusal(value: Any, field: str) -> str:
    """Why `value` is no time, echoing it; when a space stands where the offset's sign would
    (`...18 00:00`: a `+` sent unencoded in a query string arrives as a space), saying so."""
    shown = repr(value)
    if len(shown) > _ECHO_CHARS:
        shown = shown[:_ECHO_CHARS] + "..."
    message = (
        f"{field} must be an ISO 8601 date-time with its offset, like 2025-01-31T12:00:00Z; "
        f"got {shown}"
    )
    if isinstance(value, str):
        head, space, tail = value.rpartition(" ")
        if space and _DATETIME.fullmatch(f"{head}+{tail}"):
            message += (
                ": a space stands where the offset's sign would be, as an unencoded + in a "
                "query string arrives; write the + as %2B"
            )
    return message


def read_time(value: Any, field: str) -> datetime:
    """`value` (an aware datetime, or text like 2025-01-31T12:00:00Z, offset required) as
    the same instant in UTC; InvalidField naming `field` (its code: `invalid_time` for
    search's `since` and `until`) when it is no such time, or is one before EARLIEST or
    after LATEST once in UTC (9999-12-31T23:59-23:59 is in the year 10000)."""
    parsed = _parsed(value)
    if parsed is None:
        raise InvalidField(field, _refusal(value, field))
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        raise InvalidField(
            field,
            f"{field} is {value}: in UTC it falls outside the times that can be stored, "
            f"{EARLIEST.isoformat()} to {LATEST.isoformat()}",
            min=EARLIEST.isoformat(),
            max=LATEST.isoformat(),
        ) from None

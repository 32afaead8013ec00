"""A time from outside (`memory.times.read_time`) is read as the instant it names, in UTC,
text or a caller's datetime alike; one outside the times that can be stored once in UTC is
refused naming its field, before PostgreSQL sees it. A value that is no time is refused
echoing it, and told to write `+` as `%2B` when a space stands where an offset's sign would
(an unencoded `+` in a query string arrives as a space)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from memory.errors import InvalidField
from memory.times import EARLIEST, LATEST, read_time

EAST, WEST = timezone(timedelta(hours=23, minutes=59)), timezone(-timedelta(hours=23, minutes=59))


@pytest.mark.parametrize(
    "value",
    [
        "2000-01-01T20:00:00+20:00",  # an offset PostgreSQL cannot take (beyond ±15:59)
        "1999-12-31T04:01-19:59",
        datetime(2000, 1, 1, 23, 59, tzinfo=EAST),
    ],
)
def test_a_time_is_its_instant_in_utc(value: object) -> None:
    read = read_time(value, "since")
    assert read == datetime(2000, 1, 1, 0, 0, tzinfo=UTC)
    assert read.utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    "value",
    [
        "9999-12-31T23:59:59.999999-23:59",
        "0001-01-01T00:00:00+23:59",
        LATEST.replace(tzinfo=WEST),
        EARLIEST.replace(tzinfo=EAST),
    ],
)
def test_a_time_outside_the_stored_range_in_utc_is_refused_naming_its_field(
    value: object,
) -> None:
    with pytest.raises(InvalidField) as caught:
        read_time(value, "until")
    assert caught.value.code == "invalid_time"
    assert caught.value.details == [
        {"field": "until", "min": EARLIEST.isoformat(), "max": LATEST.isoformat()}
    ]
    assert "outside the times that can be stored" in caught.value.message


def test_the_first_and_last_storable_times_are_read() -> None:
    assert read_time(EARLIEST.isoformat(), "since") == EARLIEST
    assert read_time(LATEST.isoformat(), "since") == LATEST


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        ("2026-12-04T08:55:18 00:00", True),
        ("2026-12-04T08:55 05:30", True),
        ("2026-12-04T08:55:18.5 00:00", True),
        ("2026-12-04 08:55:18Z", False),  # a space, but not in an offset's place
        ("yesterday", False),
        (20261204, False),
    ],
)
def test_a_value_that_is_no_time_is_echoed(value: object, hint: bool) -> None:
    with pytest.raises(InvalidField) as caught:
        read_time(value, "since")
    assert caught.value.code == "invalid_time"
    assert f"got {value!r}" in caught.value.message
    assert ("%2B" in caught.value.message) is hint

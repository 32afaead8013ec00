"""A time the API takes (search's `since` and `until`) that is valid ISO 8601 but, in UTC,
falls outside the times that can be stored is 400 `invalid_time` naming its field, not the
generic `invalid_request` of a value PostgreSQL refused."""

from __future__ import annotations

import pytest

from memory.times import EARLIEST, LATEST
from tests.api.conftest import Api, error_of

# The latest time at the westmost offset is after 9999-12-31 in UTC; the earliest at the
# eastmost offset is before 0001-01-01.
OUT_OF_RANGE = ["9999-12-31T23:59:59.999999-23:59", "0001-01-01T00:00:00+23:59"]


@pytest.mark.parametrize("field", ["since", "until"])
@pytest.mark.parametrize("time", OUT_OF_RANGE)
def test_a_time_outside_the_stored_range_is_an_invalid_time_naming_its_field(
    api: Api, field: str, time: str
) -> None:
    response = api.get("search/", {"q": "release", field: time})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_time"
    assert [d["field"] for d in error["details"]] == [field]
    assert field in error["message"] and "UTC" in error["message"]
    (detail,) = error["details"]
    assert (detail["min"], detail["max"]) == (EARLIEST.isoformat(), LATEST.isoformat())


@pytest.mark.parametrize("field", ["since", "until"])
@pytest.mark.parametrize("time", ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z"])
def test_the_first_and_last_storable_times_are_read(api: Api, field: str, time: str) -> None:
    assert api.get("search/", {"q": "release", field: time}).status_code == 200

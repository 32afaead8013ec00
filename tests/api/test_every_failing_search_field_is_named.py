"""GET search/ reports every failing query parameter of one request together, `since` and
`until` among them: each in `details` with its `field` and `message`; the field's own code
when one field fails, `invalid_request` when fields with different codes fail."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api, error_of

TIME = "2026-12-03"  # a date alone: no time, no offset


@pytest.mark.parametrize(
    ("params", "fields"),
    [
        ({"since": TIME, "limit": "x"}, ["since", "limit"]),
        ({"since": TIME, "status": "bogus"}, ["status", "since"]),
        ({"until": "x", "type": "nope"}, ["type", "until"]),
        ({"limit": "0", "type": "nope"}, ["type", "limit"]),
    ],
)
def test_fields_with_different_codes_are_all_named(
    api: Api, params: dict[str, str], fields: list[str]
) -> None:
    response = api.get("search/", {"q": "zebra", **params})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert [d["field"] for d in error["details"]] == fields
    assert all(d["message"] for d in error["details"])


def test_since_and_until_both_failing_are_both_named(api: Api) -> None:
    response = api.get("search/", {"q": "zebra", "since": "x", "until": "y"})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_time"
    assert [d["field"] for d in error["details"]] == ["since", "until"]
    assert all("ISO 8601" in d["message"] for d in error["details"])


@pytest.mark.parametrize(
    ("params", "code"),
    [({"since": TIME}, "invalid_time"), ({"status": "bogus"}, "invalid_status")],
)
def test_one_failing_field_answers_its_own_code_and_message(
    api: Api, params: dict[str, str], code: str
) -> None:
    response = api.get("search/", {"q": "zebra", **params})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == code
    (detail,) = error["details"]
    assert detail["field"] == next(iter(params)) and detail["message"]

"""A query string with several bad parameters names every one of them, as a JSON body does:
one failing parameter answers its own code, several with different codes answer
`invalid_request`, and an unknown parameter is named together with the others that fail.
Each failure is a detail with its field and its message."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Api, error_of


def _failure(api: Api, path: str, query: str) -> dict[str, Any]:
    response = api.client.get(api.url(path) + "?" + query)
    assert response.status_code == 400
    return error_of(response)


def _fields(error: dict[str, Any]) -> set[str]:
    return {detail["field"] for detail in error["details"]}


def _each_detail_has_its_field_and_message(error: dict[str, Any]) -> bool:
    return all(set(d) == {"field", "message"} and d["message"] for d in error["details"])


@pytest.mark.parametrize(
    ("path", "query", "fields"),
    [
        ("search/", "q=caf%C3&type=%FF", {"q", "type"}),  # neither is UTF-8
        ("search/", "q=a%00&limit=1%00", {"q", "limit"}),  # both hold NUL
        ("events/", "thread=%FF&status=a%00", {"thread", "status"}),
        ("frames/", "limit=x&status=nope", {"limit", "status"}),
    ],
)
def test_two_bad_parameters_with_different_codes_are_an_invalid_request_naming_both(
    api: Api, path: str, query: str, fields: set[str]
) -> None:
    error = _failure(api, path, query)
    assert error["code"] == "invalid_request"
    assert _fields(error) == fields
    assert _each_detail_has_its_field_and_message(error)


@pytest.mark.parametrize(
    ("path", "query", "fields"),
    [
        ("events/", "colour=red&limit=0", {"colour", "limit"}),
        ("frames/", "limit=x&colour=red", {"colour", "limit"}),
        ("search/", "q=caf%C3&colour=%FF", {"colour", "q"}),  # neither is UTF-8
    ],
)
def test_an_unknown_parameter_is_named_together_with_the_other_failures(
    api: Api, path: str, query: str, fields: set[str]
) -> None:
    error = _failure(api, path, query)
    assert error["code"] == "invalid_request"
    assert _fields(error) == fields
    assert _each_detail_has_its_field_and_message(error)


@pytest.mark.parametrize(
    ("path", "query", "code", "field"),
    [
        ("search/", "q=caf%C3", "invalid_query", "q"),
        ("events/", "thread=a%00", "invalid_thread", "thread"),
        ("events/", "limit=0", "invalid_limit", "limit"),
        ("search/", "q=a&type=%FF", "invalid_type", "type"),
    ],
)
def test_a_single_bad_parameter_still_answers_its_own_code(
    api: Api, path: str, query: str, code: str, field: str
) -> None:
    error = _failure(api, path, query)
    assert error["code"] == code
    assert _fields(error) == {field}
    assert _each_detail_has_its_field_and_message(error)
    assert error["message"] == f"{field}: {error['details'][0]['message']}"

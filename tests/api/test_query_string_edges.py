"""Query strings a client can get wrong answer 400 with a stable code, never 500 or 404:
too many parameters (Django refuses past DATA_UPLOAD_MAX_NUMBER_FIELDS), and `format`,
which is an unknown parameter like any other (JSON is the only format)."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings

from tests.api.conftest import Api, error_of


@pytest.mark.parametrize("path", ["search/", "events/", "frames/"])
def test_too_many_parameters_is_a_400(api: Api, path: str) -> None:
    many = "&".join(f"p{n}=1" for n in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1))
    response = api.client.get(api.url(path) + "?q=a&" + many)
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_request"


def test_too_many_parameters_without_a_token_is_a_400_too(api: Api) -> None:
    many = "&".join(f"p{n}=1" for n in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1))
    response = api.client.get(api.url("search/") + "?" + many, HTTP_AUTHORIZATION="")
    assert response.status_code in (400, 401)
    assert error_of(response)["code"] in ("invalid_request", "not_authenticated")


@pytest.mark.parametrize("value", ["api", "openapi", "json"])
def test_format_is_an_unknown_parameter(api: Api, value: str) -> None:
    response = api.get("search/", {"q": "release", "format": value})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert {"field": "format"} in [{"field": d.get("field")} for d in error["details"]]


# An empty `cursor` in a list's query string is 400 `invalid_cursor`, as an empty value
# of every other parameter is refused (and as recall's empty `cursor` is): it is not silently
# read as "no cursor", which would restart the listing from its first page.


@pytest.mark.parametrize(
    "path", ["events/", "transactions/", "frames/", "relations/", "evaluations/"]
)
def test_an_empty_cursor_is_refused(api: Api, path: str) -> None:
    response = api.get(path, {"cursor": ""})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_cursor"
    assert [d["field"] for d in error["details"]] == ["cursor"]


def test_an_empty_recall_cursor_is_refused(api: Api) -> None:
    api.commit("(context-tx (derive goal (state open)))")
    response = api.post("recall/", {"frame_id": "goal", "cursor": ""})
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_cursor"


# A query parameter that is not UTF-8 once percent-decoded is refused with its field's own
# code, never searched as whatever Django's replacement characters leave (`q=caf%C3` would
# have searched for `caf`).


@pytest.mark.parametrize(
    ("path", "query", "code", "field"),
    [
        ("search/", "q=caf%C3", "invalid_query", "q"),
        ("search/", "q=%FF%FE", "invalid_query", "q"),
        ("search/", "q=%ED%A0%80", "invalid_query", "q"),  # a surrogate's UTF-8 form
        ("search/", "q=ok&type=%FF", "invalid_type", "type"),
        ("events/", "thread=%FF", "invalid_thread", "thread"),
        ("frames/", "status=%C3", "invalid_status", "status"),
    ],
)
def test_a_parameter_that_is_not_utf8_is_refused_with_its_fields_code(
    api: Api, path: str, query: str, code: str, field: str
) -> None:
    response = api.client.get(api.url(path) + "?" + query)
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == code
    assert error["message"].startswith(f"{field}: not UTF-8 once percent-decoded")
    assert error["details"] == [{"field": field, "message": error["message"][len(field) + 2 :]}]


def test_utf8_written_out_or_percent_encoded_is_searched_as_sent(api: Api) -> None:
    api.observe("café au lait")
    from memory.search.indexer import drain

    drain()
    encoded = api.client.get(api.url("search/") + "?q=caf%C3%A9").json()
    assert encoded["query"]["q"] == "café"
    assert [h["ref"] for h in encoded["hits"]] == ["@e1"]


# A query string with several bad parameters names every one of them, as a JSON body does:
# one failing parameter answers its own code, several with different codes answer
# `invalid_request`, and an unknown parameter is named together with the others that fail.
# Each failure is a detail with its field and its message.


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

"""A query parameter that is not UTF-8 once percent-decoded is refused with its field's own
code, never searched as whatever Django's replacement characters leave (`q=caf%C3` would
have searched for `caf`)."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api, error_of


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

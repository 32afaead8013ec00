"""Query strings a client can get wrong answer 400 with a stable code, never 500 or 404:
too many parameters (Django refuses past DATA_UPLOAD_MAX_NUMBER_FIELDS), and `format`,
which is an unknown parameter like any other (JSON is the only format)."""

from __future__ import annotations

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

"""The error shape everywhere under /api/ (R43): unknown URLs, methods, media types,
throttling, oversize bodies."""

from __future__ import annotations

import pytest

from api.throttling import ContextTokenRateThrottle
from memory.models import Event
from tests.api.conftest import Api, error_of


@pytest.mark.parametrize(
    "path",
    [
        "/api/nothing",
        "/api/v1/contexts/a%0Ab/",
        "/api/v1/contexts/alpha/nothing/",
        "/api/v2/",
        "/api/v1/contexts/alpha/x/y/z",
    ],
)
def test_unknown_urls_under_api_are_404_json(api: Api, path: str) -> None:
    for method in ("get", "post", "delete"):
        response = getattr(api.client, method)(path)
        assert response.status_code == 404
        assert response["Content-Type"].startswith("application/json")
        assert error_of(response)["code"] == "not_found"


def test_wrong_method_is_405(api: Api) -> None:
    for method, path in (
        ("delete", ""),
        ("put", "events/"),
        ("post", "frames/"),
        ("get", "recall/"),
    ):
        response = getattr(api.client, method)(api.url(path))
        assert response.status_code == 405, (method, path)
        assert error_of(response)["code"] == "method_not_allowed"


def test_form_encoded_body_is_415(api: Api) -> None:
    response = api.client.post(api.url("events/"), {"kind": "tool_result", "content": "x"})
    assert response.status_code == 415
    assert error_of(response)["code"] == "unsupported_media_type"


def test_declared_length_over_the_limit_is_413_before_reading(api: Api, settings) -> None:
    settings.MAX_REQUEST_BYTES = 1024
    response = api.post("transactions/", {"text": "(context-tx (derive a (x " + "y" * 2000 + ")))"})
    assert response.status_code == 413
    assert error_of(response)["code"] == "too_large"
    assert api.get("transactions/").json()["transactions"] == []


def test_nul_in_a_query_string_is_400(api: Api) -> None:
    response = api.get("frames/", {"status": "active\x00"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_status"  # the field's own code


def test_too_many_requests_is_429_with_retry_after(api: Api, monkeypatch) -> None:
    from django.core.cache import cache

    cache.clear()
    monkeypatch.setattr(ContextTokenRateThrottle, "rate", "3/min", raising=False)
    codes = [api.get().status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    response = api.get()
    error = error_of(response)
    assert error["code"] == "throttled"
    assert error["details"][0]["retry_after_seconds"] > 0
    assert "Retry-After" in response
    cache.clear()


# A bad value answers its field's own code wherever it is checked: a NUL in search's `q`
# is `invalid_query`, a `frozen` that is not a boolean `invalid_flag`, a bulk item's bad
# kind `invalid_kind` (as a single append's), and two items of one bulk append sharing an
# idempotency key name each other, not an event that was never written.


def test_a_nul_in_the_query_is_an_invalid_query(api: Api) -> None:
    response = api.get("search/", {"q": "rel\x00ease"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_query"


def test_a_frozen_flag_that_is_not_a_boolean_is_an_invalid_flag(api: Api) -> None:
    response = api.client.generic("PATCH", api.url(), '{"frozen": "yes"}', "application/json")
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_flag"


def test_a_bulk_items_bad_kind_is_an_invalid_kind(api: Api) -> None:
    response = api.post("events/", {"events": [{"kind": "transaction", "content": "x"}]})
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_kind"


def test_two_items_of_one_batch_with_one_key_name_each_other(api: Api) -> None:
    items = [
        {"kind": "tool_result", "content": "a", "idempotency_key": "k"},
        {"kind": "tool_result", "content": "b", "idempotency_key": "k"},
    ]
    response = api.post("events/", {"events": items})
    assert response.status_code == 409
    error = error_of(response)
    assert error["code"] == "idempotency_key_reused"
    assert error["details"] == [{"index": 1, "other_index": 0}]
    assert "@e" not in error["message"]
    assert not Event.objects.filter(context__slug="alpha").exists()

"""A bad value answers its field's own code wherever it is checked: a NUL in search's `q`
is `invalid_query`, a `frozen` that is not a boolean `invalid_flag`, a bulk item's bad
kind `invalid_kind` (as a single append's), and two items of one bulk append sharing an
idempotency key name each other, not an event that was never written."""

from __future__ import annotations

from memory.models import Event
from tests.api.conftest import Api, error_of


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

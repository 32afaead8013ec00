"""A query integer of more digits than any field takes is told it is too large, not that it
is no integer (it is digits alone); an event ref of more digits than any seq has is told
it is past the largest ref, not that it is no ref."""

from __future__ import annotations

from tests.api.conftest import Api, error_of


def test_an_overlong_query_integer_is_too_large(api: Api) -> None:
    seq = api.observe("invoice sent")["seq"]
    response = api.get(f"events/{seq}/", {"length": "9" * 114})
    assert response.status_code == 400, response.content
    error = error_of(response)
    assert error["code"] == "invalid_length"
    assert "Too large" in error["message"] and "digits alone" not in error["message"]


def test_an_overlong_event_ref_is_past_the_largest(api: Api) -> None:
    api.observe("invoice sent")
    response = api.post("recall/", {"frame_id": "@e" + "9" * 22})
    assert response.status_code == 400, response.content
    error = error_of(response)
    assert error["code"] == "invalid_ref"
    assert "past the largest event reference" in error["message"], error

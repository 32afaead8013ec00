"""A user message must say something: an empty or blank one (single or in a bulk append)
is 400 naming `content`, and nothing is written, since a user message opens a request (R3).
Other kinds may be empty (a tool can print nothing)."""

from __future__ import annotations

import pytest

from memory.models import Event
from tests.api.conftest import Api, error_of


@pytest.mark.parametrize("content", ["", "   \n\t", "\u200b", "\ufeff\u3000\u00a0"])
def test_an_empty_user_message_is_refused(api: Api, content: str) -> None:
    response = api.post("events/", {"kind": "user_message", "content": content})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert [detail["field"] for detail in error["details"]] == ["content"]
    assert not Event.objects.filter(context__slug="alpha", kind="user_message").exists()


def test_an_empty_user_message_in_a_bulk_append_writes_nothing(api: Api) -> None:
    events = [
        {"kind": "tool_result", "content": "ok"},
        {"kind": "user_message", "content": " "},
    ]
    response = api.post("events/", {"events": events})
    assert response.status_code == 400
    error = error_of(response)
    assert error["details"][0]["field"] == "events[1].content"
    assert not Event.objects.filter(context__slug="alpha").exists()


def test_an_empty_tool_result_is_kept(api: Api) -> None:
    response = api.post("events/", {"kind": "tool_result", "content": ""})
    assert response.status_code == 201

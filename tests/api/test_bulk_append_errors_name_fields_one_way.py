"""A bulk append's error names the failing field of an item the one way the API names a
place in a body everywhere else, `events[1].kind` (as `ops[2].body` in a transaction and
DRF's own `events[0].payload.a`): the same batch never answers `events.1.kind` for one
check and `events[0].content` for another."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Api, error_of

GOOD = {"kind": "tool_result", "content": "fine"}


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"kind": "bogus"}, "events[1].kind"),
        ({"kind": "tool_result", "content": 5}, "events[1].content"),
        ({"kind": "user_message", "content": " "}, "events[1].content"),
        ({"kind": "tool_result", "content": "a", "thread": "x y"}, "events[1].thread"),
        (
            {"kind": "tool_result", "content": "a", "idempotency_key": 3},
            "events[1].idempotency_key",
        ),
        ({"kind": "tool_result", "content": "a", "delivers": ["e1"]}, "events[1].delivers"),
        ({"kind": "tool_result", "content": "a", "colour": "red"}, "events[1].colour"),
        ("not an object", "events[1]"),
        # checked by the body's parser, before the items: the same style
        ({"kind": "tool_result", "content": "a\u0000"}, "events[1].content"),
        (
            {"kind": "tool_result", "content": "a", "payload": {"a": "\udc00"}},
            "events[1].payload.a",
        ),
    ],
)
def test_an_item_error_names_its_field_with_brackets(api: Api, item: Any, field: str) -> None:
    response = api.post("events/", {"events": [GOOD, item]})
    assert response.status_code == 400
    details = error_of(response)["details"]
    assert [d["field"] for d in details] == [field]

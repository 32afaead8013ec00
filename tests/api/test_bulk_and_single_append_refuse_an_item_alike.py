"""A bad event is refused with the same code and status whether it is appended alone or as
an item of a bulk append: both read it with the one model (`EventAppendIn`), and nothing is
written either way."""

from __future__ import annotations

from typing import Any

import pytest

from memory.models import Event
from tests.api.conftest import Api, error_of

GOOD = {"kind": "tool_result", "content": "fine"}
BAD_ITEMS: list[tuple[str, Any]] = [
    ("unknown kind", {"kind": "bogus", "content": "x"}),
    ("kind not text", {"kind": 3, "content": "x"}),
    ("content missing", {"kind": "tool_result"}),
    ("content not text", {"kind": "tool_result", "content": 5}),
    ("blank request", {"kind": "user_message", "content": " \u200b"}),
    ("thread with a space", {"kind": "tool_result", "content": "a", "thread": "x y"}),
    ("thread padded", {"kind": "tool_result", "content": "a", "thread": " main"}),
    ("thread empty", {"kind": "tool_result", "content": "a", "thread": ""}),
    ("key not text", {"kind": "tool_result", "content": "a", "idempotency_key": 3}),
    ("key too long", {"kind": "tool_result", "content": "a", "idempotency_key": "k" * 201}),
    ("key empty", {"kind": "tool_result", "content": "a", "idempotency_key": ""}),
    ("delivers not refs", {"kind": "tool_result", "content": "a", "delivers": ["e1"]}),
    ("delivers null", {"kind": "tool_result", "content": "a", "delivers": None}),
    ("delivers not a list", {"kind": "tool_result", "content": "a", "delivers": "@e1"}),
    ("unknown field", {"kind": "tool_result", "content": "a", "colour": "red"}),
    ("not an object", ["tool_result", "a"]),
]


@pytest.mark.parametrize(("why", "item"), BAD_ITEMS, ids=[why for why, _ in BAD_ITEMS])
def test_the_same_bad_item_gets_the_same_code_alone_and_in_a_batch(
    api: Api, why: str, item: Any
) -> None:
    alone = api.post("events/", item)
    batch = api.post("events/", {"events": [GOOD, item]})
    assert alone.status_code == batch.status_code == 400, (alone.json(), batch.json())
    assert error_of(alone)["code"] == error_of(batch)["code"], why
    assert error_of(batch)["details"][0]["index"] == 1
    assert not Event.objects.filter(context__slug="alpha").exists()

"""A call to a tool the agent does not have is refused `unknown_tool`, never registered as an
action that stays pending forever (R59)."""

from __future__ import annotations

from typing import Any

import pytest

from memory.agents.replies import take_apart_reply
from memory.contexts import create_context
from memory.errors import InvalidRequest
from memory.models import Event


@pytest.fixture
def ctx(db: Any) -> Any:
    return create_context("tools")


def test_a_made_up_tool_name_is_refused_with_the_nearest_name(ctx: Any) -> None:
    out = take_apart_reply(
        ctx.pk,
        {
            "text": "Checking.",
            "tool_calls": [
                {"id": "a", "name": "lookup_ordr", "arguments": {"id": 17}},
                {"id": "b", "name": "lookup_order", "arguments": {"id": 17}},
            ],
        },
        tools=["lookup_order", "refund"],
    )
    made_up, real = out["actions"][1], out["actions"][0]
    assert real["status"] == "registered" and real["name"] == "lookup_order"
    assert made_up["status"] == "refused"
    assert made_up["error"]["code"] == "unknown_tool"
    assert "did you mean lookup_order?" in made_up["error"]["message"]
    assert Event.objects.filter(context=ctx, kind="action").count() == 1
    assert "action lookup_ordr refused: unknown_tool" in out["feedback"]


def test_memory_tools_need_no_naming(ctx: Any) -> None:
    out = take_apart_reply(
        ctx.pk,
        {"tool_calls": [{"id": "s", "name": "search", "arguments": {"q": "x"}}]},
        tools=[],
    )
    assert out["reads"][0]["status"] == "ok"


@pytest.mark.parametrize("tools", ["refund", [""], [3], ["x" * 201]])
def test_malformed_tools_are_refused_before_anything_is_written(ctx: Any, tools: Any) -> None:
    with pytest.raises(InvalidRequest):
        take_apart_reply(ctx.pk, {"text": "hi"}, tools=tools)
    assert not Event.objects.filter(context=ctx).exists()

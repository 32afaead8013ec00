"""A pending action can be cancelled by the model (the `cancel_action` tool) or by a person;
the cancellation delivers it, so it leaves the state line's pending actions (R59)."""

from __future__ import annotations

from typing import Any

import pytest

from memory.agents.replies import take_apart_reply
from memory.contexts import create_context
from memory.errors import MorphzError
from memory.models import Context
from memory.timeline.actions import cancel_action
from memory.timeline.compile import compile_active_context
from memory.timeline.events import append_event


@pytest.fixture
def ctx(db: Any) -> Any:
    return create_context("cancels")


def _pending(ctx: Any) -> list[str]:
    state = compile_active_context(Context.objects.get(pk=ctx.pk))["context"]["state"]
    return [a["ref"] for a in state["pending_actions"]]


def test_the_model_cancels_a_pending_action(ctx: Any) -> None:
    out = take_apart_reply(ctx.pk, {"tool_calls": [{"id": "a", "name": "ship", "arguments": {}}]})
    action = out["actions"][0]["ref"]
    assert _pending(ctx) == [action]
    out = take_apart_reply(
        ctx.pk,
        {
            "tool_calls": [
                {
                    "id": "c",
                    "name": "cancel_action",
                    "arguments": {"ref": action, "reason": "customer withdrew"},
                }
            ]
        },
        tools=["ship"],
    )
    (entry,) = out["actions"]
    assert entry["status"] == "cancelled" and entry["cancels"] == action
    assert _pending(ctx) == []
    assert f"action {action} cancelled" in out["feedback"]
    compiled = compile_active_context(Context.objects.get(pk=ctx.pk))["text"]
    assert f"delivers {action}]" in compiled and "cancelled by agent: customer withdrew" in compiled


def test_a_person_cancels_and_a_second_cancel_is_refused(ctx: Any) -> None:
    out = take_apart_reply(ctx.pk, {"tool_calls": [{"id": "a", "name": "ship", "arguments": {}}]})
    action = out["actions"][0]["ref"]
    event = cancel_action(ctx.pk, action, reason="stuck", by="person:ana")
    assert event.content == "cancelled by person:ana: stuck"
    with pytest.raises(MorphzError) as caught:
        cancel_action(ctx.pk, action, by="agent")
    assert caught.value.code == "action_not_pending"
    request = append_event(ctx.pk, kind="user_message", content="hello").event
    with pytest.raises(MorphzError) as caught:
        cancel_action(ctx.pk, request.ref, by="agent")
    assert caught.value.code == "not_an_action"
    with pytest.raises(MorphzError) as caught:
        cancel_action(ctx.pk, "@e999", by="agent")
    assert caught.value.code == "unknown_ref"


def test_an_action_without_a_result_turns_stale_after_the_configured_ticks(
    ctx: Any, settings: Any
) -> None:
    from memory.timeline.evaluation import evaluate

    settings.MORPHZ_STALE_ACTION_TICKS = 2
    out = take_apart_reply(ctx.pk, {"tool_calls": [{"id": "a", "name": "ship", "arguments": {}}]})
    action = out["actions"][0]["ref"]
    for tick in range(3):
        append_event(ctx.pk, kind="external_fact", content=f"hour {tick} passed")
        result = evaluate(ctx.pk)
        (pending,) = result["context"]["state"]["pending_actions"]
        assert pending["ticks"] == tick + 1
        assert pending["stale"] is (tick + 1 >= 2)
    assert (
        f"pending actions: {action} ship (STALE: no result for 3 ticks; cancel_action if it "
        "never will)" in result["text"]
    )

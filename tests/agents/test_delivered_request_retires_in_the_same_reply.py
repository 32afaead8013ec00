"""Delivery (R57): the `(delivers @e17)` markers leave the text the user sees, and a request
delivered by a reply may be retired by a transaction of the same reply."""

from __future__ import annotations

from typing import Any

import pytest

from memory.agents.replies import take_apart_reply
from memory.contexts import create_context
from memory.models import Event, TransactionRecord


@pytest.fixture
def ctx(db: Any) -> Any:
    return create_context("deliver-and-retire")


def test_the_reply_that_delivers_a_request_may_retire_it(ctx: Any) -> None:
    from memory.timeline.events import append_event

    request = append_event(ctx.pk, kind="user_message", content="cancel order 17").event
    out = take_apart_reply(
        ctx.pk,
        {
            "text": f"Order 17 is cancelled.\n(delivers {request.ref})",
            "tool_calls": [
                {
                    "id": "t",
                    "name": "context_tx",
                    "arguments": {
                        "tx": f"(context-tx (derive order-17 (from {request.ref}) (state "
                        f"cancelled)) (retire {request.ref}))"
                    },
                }
            ],
        },
    )
    assert [t["status"] for t in out["transactions"]] == ["committed"], out["feedback"]
    assert not out["rejected"]
    request.refresh_from_db()
    assert request.request_state == "delivered" and not request.active
    message = Event.objects.get(context=ctx, seq=int(out["message"]["ref"][2:]))
    assert message.content == "Order 17 is cancelled."
    assert message.delivers == [request.seq]
    # The delivery comes first in history, so a replay of it commits the same way.
    assert int(out["transactions"][0]["ref"][2:]) > message.seq


def test_retiring_a_request_the_reply_does_not_deliver_is_still_refused(ctx: Any) -> None:
    from memory.timeline.events import append_event

    request = append_event(ctx.pk, kind="user_message", content="cancel order 17").event
    out = take_apart_reply(
        ctx.pk, {"text": f"Done. (context-tx (retire {request.ref}))", "tool_calls": []}
    )
    assert out["transactions"][0]["error"]["code"] == "request_pending"
    assert out["message"]["status"] == "withheld"
    assert "write (delivers" in out["transactions"][0]["error"]["message"]
    assert not TransactionRecord.objects.filter(context=ctx, status="committed").exists()

"""A reply is one unit (R57): a rejected transaction withholds the reply's actions and
message, a keyed resend of the fixed reply goes through whole, a transaction written twice
commits once."""

from __future__ import annotations

from typing import Any

import pytest

from memory.agents.replies import take_apart_reply
from memory.contexts import create_context
from memory.models import Event, TransactionRecord
from memory.timeline.events import append_event
from memory.tx.engine import submit_transaction


@pytest.fixture
def ctx(db: Any) -> Any:
    context = create_context("one-unit")
    submit_transaction(context.pk, text="(context-tx (derive order-17 (state open)))")
    return context


def _reply(request_ref: str, base: int) -> dict[str, Any]:
    tx = f"(context-tx (base-version {base}) (revise order-17 (state refunded)))"
    return {
        "text": f"Your refund is on its way. (delivers {request_ref})",
        "tool_calls": [
            {"id": "c1", "name": "context_tx", "arguments": {"tx": tx}},
            {"id": "c2", "name": "refund", "arguments": {"order": 17}},
            {"id": "c3", "name": "search", "arguments": {"q": "order"}},
        ],
    }


def _kinds(ctx: Any, after: int) -> list[str]:
    return list(
        Event.objects.filter(context=ctx, seq__gt=after)
        .order_by("seq")
        .values_list("kind", flat=True)
    )


def test_a_rejected_transaction_withholds_the_actions_and_the_message(ctx: Any) -> None:
    request = append_event(ctx.pk, kind="user_message", content="refund order 17").event
    submit_transaction(ctx.pk, text="(context-tx (revise order-17 (state disputed)))")
    out = take_apart_reply(ctx.pk, _reply(request.ref, base=1))  # stale: conflict
    assert out["rejected"] and out["conflict"]
    # Memory reads still run; nothing else of the reply is written.
    assert _kinds(ctx, request.seq + 1) == ["recall_result"]
    assert [a["status"] for a in out["actions"]] == ["withheld"]
    assert out["actions"][0]["error"]["code"] == "reply_rejected"
    assert out["message"]["status"] == "withheld" and out["message"]["ref"] is None
    request.refresh_from_db()
    assert request.request_state == "open"
    assert "reply NOT taken: 1 action(s) not registered (refund); its message" in out["feedback"]


def test_the_fixed_reply_resent_under_its_key_goes_through_whole(ctx: Any) -> None:
    request = append_event(ctx.pk, kind="user_message", content="refund order 17").event
    submit_transaction(ctx.pk, text="(context-tx (revise order-17 (state disputed)))")
    rejected = take_apart_reply(ctx.pk, _reply(request.ref, base=1), idempotency_key="turn-3")
    assert rejected["rejected"]
    fixed = take_apart_reply(ctx.pk, _reply(request.ref, base=2), idempotency_key="turn-3")
    assert [t["status"] for t in fixed["transactions"]] == ["committed"]
    assert [a["status"] for a in fixed["actions"]] == ["registered"]
    message = fixed["message"]
    assert message is not None and message["ref"] is not None and "error" not in message
    assert message["delivers"] == [request.ref]
    events = Event.objects.count()
    # Sent again (a lost response): the first outcome, nothing written.
    again = take_apart_reply(ctx.pk, _reply(request.ref, base=2), idempotency_key="turn-3")
    assert Event.objects.count() == events
    assert again["message"]["ref"] == fixed["message"]["ref"]
    assert again["actions"][0]["ref"] == fixed["actions"][0]["ref"]


def test_proceed_writes_the_actions_and_message_of_a_rejected_reply(ctx: Any) -> None:
    request = append_event(ctx.pk, kind="user_message", content="refund order 17").event
    submit_transaction(ctx.pk, text="(context-tx (revise order-17 (state disputed)))")
    out = take_apart_reply(ctx.pk, _reply(request.ref, base=1), on_rejection="proceed")
    assert out["rejected"]
    assert [a["status"] for a in out["actions"]] == ["registered"]
    assert out["message"]["delivers"] == [request.ref]


def test_a_transaction_given_twice_commits_once(ctx: Any) -> None:
    tx = "(context-tx (base-version 1) (revise order-17 (state shipped)))"
    records = TransactionRecord.objects.filter(context=ctx).count()
    out = take_apart_reply(
        ctx.pk,
        {
            "text": f"Shipped.\n```\n{tx}\n```",
            "tool_calls": [
                {"id": "t1", "name": "context_tx", "arguments": {"tx": tx}},
                {"id": "t2", "name": "context_tx", "arguments": {"tx": "  " + tx + "\n"}},
            ],
        },
    )
    first, second, third = out["transactions"]
    assert first["status"] == "committed"
    assert second["status"] == third["status"] == "duplicate"
    assert second["duplicate_of"] == 0 and second["ref"] == first["ref"]
    assert second["error"]["code"] == "duplicate_transaction"
    assert not out["conflict"] and not out["rejected"]
    assert TransactionRecord.objects.filter(context=ctx).count() == records + 1
    assert "given twice in this reply" in out["feedback"] and "conflict" not in out["feedback"]
    assert out["message"]["ref"] is not None  # a duplicate withholds nothing

"""A model reply sent again under the same idempotency key (a lost response, a crash half
way) writes none of its parts twice: the transaction, the memory read, the action and the
message each answer their first result (R49 for replies)."""

from __future__ import annotations

from typing import Any

import pytest

from memory.agents.replies import take_apart_reply
from memory.contexts import create_context
from memory.errors import InvalidRequest
from memory.models import Event, TransactionRecord
from memory.timeline.events import append_event
from memory.tx.engine import submit_transaction


@pytest.fixture
def ctx(db: Any) -> Any:
    context = create_context("reply-retries")
    submit_transaction(context.pk, text="(context-tx (derive release (goal ship-v1)))")
    return context


def _reply(request_ref: str) -> dict[str, Any]:
    return {
        "text": f"Packaging now. (delivers {request_ref})",
        "tool_calls": [
            {"id": "c1", "name": "context_tx", "arguments": {"tx": _TX}},
            {"id": "c2", "name": "recall", "arguments": {"frame_id": "release"}},
            # A search run again would find the first run's own result event.
            {"id": "c4", "name": "search", "arguments": {"q": "release"}},
            {"id": "c3", "name": "package", "arguments": {"target": "v1"}},
        ],
    }


_TX = "(context-tx (base-version 1) (revise release (goal ship-v1) (stage packaging)))"


def _refs(out: dict[str, Any]) -> list[Any]:
    return [
        [t["ref"] for t in out["transactions"]],
        [r["ref"] for r in out["reads"]],
        [a["ref"] for a in out["actions"]],
        out["message"]["ref"],
    ]


def test_a_retried_reply_writes_nothing_and_answers_the_first_refs(ctx: Any) -> None:
    request = append_event(ctx.pk, kind="user_message", content="package v1").event
    first = take_apart_reply(ctx.pk, _reply(request.ref), idempotency_key="turn-7")
    assert [t["status"] for t in first["transactions"]] == ["committed"]
    events, records = Event.objects.count(), TransactionRecord.objects.count()

    again = take_apart_reply(ctx.pk, _reply(request.ref), idempotency_key="turn-7")

    assert (Event.objects.count(), TransactionRecord.objects.count()) == (events, records)
    assert _refs(again) == _refs(first)
    assert again["transactions"][0]["status"] == "committed"
    assert [r["status"] for r in again["reads"]] == ["ok", "ok"]
    assert again["actions"][0]["status"] == "registered"
    assert again["message"]["delivers"] == [request.ref]


def test_without_a_key_a_second_send_writes_again(ctx: Any) -> None:
    request = append_event(ctx.pk, kind="user_message", content="package v1").event
    take_apart_reply(ctx.pk, _reply(request.ref))
    events = Event.objects.count()
    second = take_apart_reply(ctx.pk, _reply(request.ref))
    # The stale transaction is refused (base version 1 is past); the two reads run again
    # (that is what the key is for); the action and the message are withheld (R57).
    assert second["transactions"][0]["status"] == "rejected"
    assert Event.objects.count() == events + 2
    assert [a["status"] for a in second["actions"]] == ["withheld"]


def test_the_same_key_with_another_reply_refuses_the_changed_parts(ctx: Any) -> None:
    take_apart_reply(ctx.pk, {"text": "first words"}, idempotency_key="turn-8")
    events = Event.objects.count()
    out = take_apart_reply(ctx.pk, {"text": "other words"}, idempotency_key="turn-8")
    assert Event.objects.count() == events
    assert out["message"]["ref"] is None
    assert out["message"]["error"]["code"] == "idempotency_key_reused"
    assert "reply NOT recorded: idempotency_key_reused" in out["feedback"]


@pytest.mark.parametrize("key", ["", "k" * 181, 7])
def test_a_malformed_key_is_refused_before_anything_is_written(ctx: Any, key: Any) -> None:
    events = Event.objects.count()
    with pytest.raises(InvalidRequest):
        take_apart_reply(ctx.pk, {"text": "hello"}, idempotency_key=key)
    assert Event.objects.count() == events

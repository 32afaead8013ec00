"""Threads a model can use: each open request shows with its thread and the last message
the agent sent on that thread; a reply that delivers a request takes its thread."""

from __future__ import annotations

from typing import Any

import pytest

from memory.agents.replies import take_apart_reply
from memory.contexts import create_context
from memory.models import Context, Event
from memory.timeline.compile import compile_active_context
from memory.timeline.events import append_event


@pytest.fixture
def ctx(db: Any) -> Any:
    return create_context("two-customers")


def test_each_open_request_shows_its_thread_and_what_was_last_sent_there(ctx: Any) -> None:
    first = append_event(ctx.pk, kind="user_message", content="where is order 17?", thread="ana")
    answer = take_apart_reply(ctx.pk, {"text": f"It ships today. (delivers {first.event.ref})"})
    assert answer["message"]["thread"] == "ana"  # taken from the request it delivers
    again = append_event(ctx.pk, kind="user_message", content="and order 18?", thread="ana")
    bob = append_event(ctx.pk, kind="user_message", content="refund please", thread="bob")
    compiled = compile_active_context(Context.objects.get(pk=ctx.pk))
    message_ref = answer["message"]["ref"]
    assert (
        "open requests:\n"
        f'  {again.event.ref} thread=ana · you last sent {message_ref}: "It ships today."\n'
        f"  {bob.event.ref} thread=bob · you have sent nothing on this thread"
    ) in compiled["text"]
    requests = compiled["context"]["state"]["open_requests"]
    assert requests[0]["last_agent_message"] == {"ref": message_ref, "preview": "It ships today."}
    assert requests[1]["last_agent_message"] is None


def test_a_reply_names_its_thread_or_takes_that_of_what_it_delivers(ctx: Any) -> None:
    ana = append_event(ctx.pk, kind="user_message", content="hi", thread="ana").event
    bob = append_event(ctx.pk, kind="user_message", content="hi", thread="bob").event
    out = take_apart_reply(ctx.pk, {"text": "Hello Bob."}, thread="bob")
    assert Event.objects.get(context=ctx, seq=int(out["message"]["ref"][2:])).thread == "bob"
    # Two threads delivered at once: no one thread to take, so main.
    out = take_apart_reply(ctx.pk, {"text": "Hello both.", "delivers": [ana.ref, bob.ref]})
    assert out["message"]["thread"] == "main"

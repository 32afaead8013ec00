"""Near-miss syntax gets a hint, never silence (R59): `e58` for `@e58`, a field key with a
colon, `(delivers: …)`, an unquoted multi-word value read as a list."""

from __future__ import annotations

from typing import Any

import pytest

from memory.agents.replies import take_apart_reply
from memory.contexts import create_context
from memory.models import Frame
from memory.timeline.events import append_event


@pytest.fixture
def ctx(db: Any) -> Any:
    return create_context("near-misses")


def test_an_event_ref_without_its_at_sign_is_named(ctx: Any) -> None:
    log = append_event(ctx.pk, kind="tool_result", content="order log").event
    bare = log.ref[1:]
    out = take_apart_reply(ctx.pk, {"text": f"(context-tx (retire {bare}))"})
    error = out["transactions"][0]["error"]
    assert error["code"] == "unknown_ref"
    assert f"an event ref is written with @: {log.ref}" in error["message"]
    out = take_apart_reply(ctx.pk, {"text": f"(context-tx (derive x (from {bare}) (k v)))"})
    assert f"@: {log.ref}" in out["transactions"][0]["error"]["message"]


@pytest.mark.parametrize(
    "written", ["(delivers: @e1)", '(delivers ["@e1"])', "(delivers e1)", '(delivers "@e1")']
)
def test_a_delivery_that_delivers_nothing_gets_a_hint(ctx: Any, written: str) -> None:
    request = append_event(ctx.pk, kind="user_message", content="hello").event
    out = take_apart_reply(ctx.pk, {"text": f"Hello! {written}"})
    assert out["message"]["delivers"] == []
    assert "- hint: a delivery is written (delivers @e17)" in out["feedback"]
    request.refresh_from_db()
    assert request.request_state == "open"


def test_an_unquoted_multi_word_value_is_named_a_list(ctx: Any) -> None:
    out = take_apart_reply(
        ctx.pk,
        {"text": "(context-tx (derive case-17 (note customer wants refund) (tags [a b])))"},
    )
    (entry,) = out["transactions"]
    assert entry["status"] == "committed"
    assert Frame.objects.get(context=ctx, frame_id="case-17").body["note"] == [
        "customer",
        "wants",
        "refund",
    ]
    assert entry["notes"] == [
        "(note customer wants refund) is the list [customer wants refund] of 3 words; for "
        'one text write (note "customer wants refund")'
    ]
    assert "note: (note customer wants refund) is the list" in out["feedback"]


def test_a_field_key_with_a_colon_is_named(ctx: Any) -> None:
    out = take_apart_reply(ctx.pk, {"text": '(context-tx (derive case-18 (note: "late")))'})
    assert out["transactions"][0]["notes"] == [
        "field key note: has a colon in its name; a field is (note value)"
    ]

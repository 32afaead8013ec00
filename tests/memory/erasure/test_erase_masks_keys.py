"""Erasure (R64) masks the keys of what it erases: a body's keys and a client's payload
keys are its text (a map keyed by people's names), a runtime payload's keys its schema.
Masked keys keep their length, and two keys never become one."""

from __future__ import annotations

import json
from typing import Any

from memory.contexts import create_context
from memory.erasure.erase import erase
from memory.erasure.mask import MASK_CHARACTERS, mask_whole
from memory.models import (
    Evaluation,
    Event,
    Frame,
    FrameRevision,
    SearchDocument,
    TransactionRecord,
)
from memory.search.indexer import drain
from memory.timeline.evaluation import evaluate
from memory.timeline.events import append_event, register_action
from memory.tx.engine import Author, submit_transaction
from memory.versions.replay import verify_context

AGENT = Author("agent", "agent")
NAME = "Bartholomew Snodgrass"


def _stored(context_id: int) -> str:
    parts: list[Any] = []
    for event in Event.objects.filter(context_id=context_id):
        parts += [event.content, event.payload]
    for record in TransactionRecord.objects.filter(context_id=context_id):
        parts += [record.text, record.ops]
    parts += list(Frame.objects.filter(context_id=context_id).values_list("body", flat=True))
    parts += list(
        FrameRevision.objects.filter(frame__context_id=context_id).values_list("body", flat=True)
    )
    return json.dumps(parts, ensure_ascii=False)


def _derive(context_id: int, frame_id: str, body: dict[str, Any]) -> None:
    submit_transaction(
        context_id,
        data={"reason": "note", "ops": [{"op": "derive", "id": frame_id, "body": body}]},
        author=AGENT,
    )


def test_a_whole_frame_loses_its_keys_in_every_revision_and_record(db: Any) -> None:
    ctx = create_context("keys-whole")
    _derive(ctx.pk, "contacts", {f"{NAME} phone": "555-0199", "中文名字": "王小明"})
    tokens = Frame.objects.get(context=ctx, frame_id="contacts").token_estimate
    drain(context_id=ctx.pk)
    erase(ctx.pk, refs=["contacts"], reason="asked", erased_by="ada")
    stored = _stored(ctx.pk)
    assert "Snodgrass" not in stored and "中文名字" not in stored and "王小明" not in stored
    frame = Frame.objects.get(context=ctx, frame_id="contacts")
    assert [len(key) for key in frame.body] == [len(f"{NAME} phone"), 4]
    assert all(set(key) <= set(MASK_CHARACTERS) for key in frame.body)
    assert frame.token_estimate == tokens
    drain(context_id=ctx.pk)
    assert not SearchDocument.objects.filter(context=ctx, tokens__icontains="snodgrass").exists()
    assert verify_context(ctx) == []


def test_a_pattern_in_a_key_is_masked_and_counted(db: Any) -> None:
    ctx = create_context("keys-pattern")
    _derive(ctx.pk, "people", {f"{NAME} phone": "555-0199", "city": "Leeds"})
    append_event(ctx.pk, kind="user_message", content="hi", payload={NAME: {"ssn": "x"}})
    result = erase(ctx.pk, patterns=["Snodgrass"], reason="asked", erased_by="ada")
    assert "Snodgrass" not in _stored(ctx.pk)
    assert result.tombstones[0].matches >= 4  # frame, its revision, the record, the payload
    body = Frame.objects.get(context=ctx, frame_id="people").body
    assert list(body) == ["Bartholomew █████████ phone", "city"]
    assert body["city"] == "Leeds"
    assert verify_context(ctx) == []


def test_two_keys_masked_alike_stay_two_keys_of_the_same_lengths() -> None:
    masked = mask_whole({"ab": 1, "cd": 2, "ef": {"gh": 3}, "王": 4, "李": 5}, keys=True)
    assert list(masked.values())[:2] == [1, 2] and len(masked) == 5
    assert [len(key) for key in masked] == [2, 2, 2, 1, 1]
    keys = list(masked)
    assert keys[0] != keys[1] and keys[3] != keys[4]


def test_a_runtime_payload_keeps_its_keys_and_a_clients_loses_them(db: Any) -> None:
    ctx = create_context("keys-runtime")
    register_action(ctx.pk, name="call Ada Lovelace", arguments={"who": "Ada Lovelace"})
    append_event(ctx.pk, kind="user_message", content="note", payload={"Ada Lovelace": "x"})
    erase(ctx.pk, refs=["@e1", "@e2"], reason="asked", erased_by="ada")
    assert "Ada Lovelace" not in _stored(ctx.pk)
    action, message = Event.objects.filter(context=ctx).order_by("seq")
    # replay registers the action again from `name` and `arguments`; the keys of the
    # arguments are the client's
    assert list(action.payload) == ["name", "arguments"]
    assert list(action.payload["arguments"]) == ["███"]
    assert list(message.payload) == ["█" * len("Ada Lovelace")]
    assert verify_context(ctx) == []


def test_a_compiled_input_shows_no_line_of_an_erased_frame(db: Any) -> None:
    """Its prompt text too, short values included: the frame's lines are found under its
    header, whatever order the stored input lists the keys in."""
    ctx = create_context("keys-evaluation")
    _derive(ctx.pk, "person", {f"{NAME} phone": "555", "中文名字": "王小明", "k1": "x"})
    evaluate(ctx.pk)
    before = Evaluation.objects.get(context=ctx).result["text"]
    erase(ctx.pk, refs=["person"], reason="asked", erased_by="ada")
    text = Evaluation.objects.get(context=ctx).result["text"]
    assert len(text) == len(before)
    assert not any(word in text for word in ("Snodgrass", "555", "中文名字", "王小明", "k1"))
    assert "[frame person r1 active]" in text


def test_an_actions_arguments_lose_their_keys_its_fields_stay(db: Any) -> None:
    ctx = create_context("keys-action")
    register_action(ctx.pk, name="call", arguments={"Snodgrass phone": "555", "who": NAME})
    register_action(ctx.pk, name="mail", arguments={"Ada Lovelace": "hi"})
    erase(ctx.pk, refs=["@e2"], patterns=["Snodgrass"], reason="asked", erased_by="ada")
    stored = _stored(ctx.pk)
    assert "Snodgrass" not in stored and "Ada Lovelace" not in stored
    for action in Event.objects.filter(context=ctx):
        assert list(action.payload) == ["name", "arguments"]
    assert verify_context(ctx) == []


def test_the_names_of_dropped_fields_go_with_the_frame(db: Any) -> None:
    """A revise that dropped fields names them in the frame's header (R59): in inputs
    compiled before the erasure, structured and as text, and in every input after it."""
    ctx = create_context("keys-dropped")
    _derive(ctx.pk, "cust", {"nm": "Bo", "secretfieldkey": "alpha beta", "photo": "pic"})
    submit_transaction(ctx.pk, text="(context-tx (revise cust (nm Bo)))", author=AGENT)
    evaluate(ctx.pk)
    assert "secretfieldkey" in Evaluation.objects.get(context=ctx).result["text"]
    erase(ctx.pk, refs=["cust"], reason="asked", erased_by="ada")
    evaluate(ctx.pk)
    for evaluation in Evaluation.objects.filter(context=ctx):
        shown = json.dumps(evaluation.result, ensure_ascii=False)
        assert "secretfieldkey" not in shown and "photo" not in shown

"""Taking a model reply apart (R46): transactions through the engine, other tool calls
through the action gate, the text as an agent message; compact feedback for the model."""

from __future__ import annotations

from typing import Any

import pytest

from memory.agents.parts import extract_forms
from memory.agents.replies import take_apart_reply
from memory.contexts import create_context, update_context_settings
from memory.errors import InvalidRequest
from memory.models import Event, Frame, TransactionRecord
from memory.timeline.events import append_event
from memory.tx.engine import submit_transaction


def test_extract_bare_and_fenced_forms() -> None:
    text = (
        'Tests passed.\n```lisp\n(context-tx (derive a (note "x ) y")) ; a ) comment\n'
        "  (retire @e1))\n```\nAnd (context-tx (derive b (k v))) done."
    )
    forms, rest = extract_forms(text)
    assert forms == [
        '(context-tx (derive a (note "x ) y")) ; a ) comment\n  (retire @e1))',
        "(context-tx (derive b (k v)))",
    ]
    assert rest == "Tests passed.\n\nAnd  done."
    forms, rest = extract_forms("(context-tx (derive c")
    assert forms == ["(context-tx (derive c"] and rest == ""


@pytest.fixture
def ctx(db: Any) -> Any:
    context = create_context("replies", grace_ticks=3)
    submit_transaction(context.pk, text="(context-tx (derive release (goal ship-v1)))")
    return context


def test_reply_with_fenced_form_tool_call_and_delivery(ctx: Any) -> None:
    request = append_event(ctx.pk, kind="user_message", content="is v1 ready?").event
    log = append_event(ctx.pk, kind="tool_result", content="suite: 40 passed").event
    out = take_apart_reply(
        ctx.pk,
        {
            "text": f"Yes, the suite passed. (delivers {request.ref})\n```\n(context-tx "
            f"(base-version 1) (derive test-result (from {log.ref}) (tests passed)) "
            f"(retire {log.ref}))\n```",
            "tool_calls": [{"id": "c1", "name": "notify", "arguments": '{"who": "team"}'}],
        },
    )
    assert [t["status"] for t in out["transactions"]] == ["committed"]
    assert out["transactions"][0]["source"] == "text"
    assert out["actions"][0]["status"] == "registered"
    action = Event.objects.get(context=ctx, seq=int(out["actions"][0]["ref"][2:]))
    assert action.kind == "action" and action.payload == {
        "name": "notify",
        "arguments": {"who": "team"},
    }
    message = Event.objects.get(context=ctx, seq=int(out["message"]["ref"][2:]))
    assert message.kind == "agent_message" and message.delivers == [request.seq]
    # The marker is structure (`delivers`), not words the user reads (R57).
    assert message.content == "Yes, the suite passed."
    request.refresh_from_db()
    assert request.request_state == "delivered"
    assert "committed: version 2" in out["feedback"]
    assert f"delivers {request.ref}" in out["feedback"]
    # The action is a separate database write from the commit: its own event, after it.
    assert action.seq > int(out["transactions"][0]["ref"][2:])


def test_rejection_names_the_failing_operation(ctx: Any) -> None:
    out = take_apart_reply(
        ctx.pk,
        {
            "text": "",
            "tool_calls": [
                {
                    "id": "t1",
                    "name": "context_tx",
                    "arguments": {
                        "tx": "(context-tx (derive fresh (k v)) (derive release (goal again)))"
                    },
                },
                {
                    "id": "t2",
                    "name": "context_tx",
                    "arguments": {"tx": "(context-tx (derive other (k v)))"},
                },
            ],
        },
    )
    first, second = out["transactions"]
    assert first["status"] == "rejected" and first["error"]["code"] == "frame_exists"
    assert first["error"]["details"][0]["index"] == 1
    assert second["status"] == "skipped"
    assert "op 1 derive: frame_exists" in out["feedback"]
    assert "NOT written" in out["feedback"]
    assert not Frame.objects.filter(context=ctx, frame_id__in=["fresh", "other"]).exists()
    assert out["message"] is None


def test_parse_error_is_reported_with_its_position(ctx: Any) -> None:
    out = take_apart_reply(ctx.pk, {"text": "(context-tx (derive x (k v))"})
    (entry,) = out["transactions"]
    assert entry["error"]["code"] == "parse_error"
    assert "parse_error at line 1" in out["feedback"]


def test_maintenance_refuses_actions_but_not_the_transaction(ctx: Any) -> None:
    update_context_settings(ctx.pk, capacity_tokens=400)
    big = append_event(ctx.pk, kind="tool_result", content="z" * 1500).event
    ctx.refresh_from_db()
    assert ctx.in_maintenance
    out = take_apart_reply(
        ctx.pk,
        {
            "tool_calls": [
                {"id": "a", "name": "deploy", "arguments": {}},
                {
                    "id": "b",
                    "name": "context_tx",
                    "arguments": {"tx": "(context-tx (derive d (seen z)))"},
                },
            ]
        },
    )
    assert out["transactions"][0]["status"] == "committed"
    assert out["actions"][0]["status"] == "refused"
    assert out["actions"][0]["error"]["code"] == "maintenance_required"
    assert "action deploy refused: maintenance_required" in out["feedback"]
    # Digesting first (same reply) lets the action through the gate.
    out = take_apart_reply(
        ctx.pk,
        {
            "tool_calls": [
                {
                    "id": "c",
                    "name": "context_tx",
                    "arguments": {"tx": f"(context-tx (retire {big.ref}))"},
                },
                {"id": "d", "name": "deploy", "arguments": {}},
            ]
        },
    )
    assert out["actions"][0]["status"] == "registered"


def test_unknown_delivery_keeps_the_message(ctx: Any) -> None:
    out = take_apart_reply(ctx.pk, {"text": "done (delivers @e99)"})
    assert out["message"]["delivers"] == []
    assert out["message"]["delivery_error"]["code"] == "unknown_ref"
    assert Event.objects.filter(context=ctx, kind="agent_message").count() == 1


def test_malformed_reply_writes_nothing(ctx: Any) -> None:
    before = (Event.objects.count(), TransactionRecord.objects.count())
    bad: Any
    for bad in (
        [],
        {"text": 5},
        {"tool_calls": [{"name": ""}]},
        {"tool_calls": "x"},
        {"delivers": [3]},
    ):
        with pytest.raises(InvalidRequest):
            take_apart_reply(ctx.pk, bad)
    assert (Event.objects.count(), TransactionRecord.objects.count()) == before
    out = take_apart_reply(ctx.pk, {"tool_calls": [{"name": "recall", "arguments": "{nope"}]})
    assert out["actions"][0]["error"]["code"] == "invalid_arguments"
    out = take_apart_reply(
        ctx.pk, {"tool_calls": [{"name": "recall", "arguments": {"frame_id": "nope"}}]}
    )
    assert out["reads"][0]["status"] == "error"
    for name, arguments in (
        ("recall", {"frame_id": "release", "depth": "deep"}),
        ("recall", {"frame_id": "release", "max_nodes": [1]}),
        ("search", {"q": "x", "limit": "many"}),
        ("read_event", {"ref": 42}),
        ("read_event", {"ref": "@e1", "offset": "start"}),
        ("frame", {"id": ["release"]}),
        ("frame", {"name": "release"}),
    ):
        out = take_apart_reply(ctx.pk, {"tool_calls": [{"name": name, "arguments": arguments}]})
        assert out["reads"][0]["status"] == "error", (name, arguments, out)


def test_replies_endpoint_validates_and_answers(make_client: Any) -> None:
    from morphz_client import InvalidRequestError

    mz = make_client("replies-http")
    with pytest.raises(InvalidRequestError):
        mz._request("POST", mz._ctx("replies/"), json={"text": "x", "bogus": 1})
    with pytest.raises(InvalidRequestError):
        mz._request("POST", mz._ctx("replies/"), json={"tool_calls": [{"name": "x", "extra": 1}]})
    out = mz.take_apart("(context-tx (derive hello (k v)))")
    assert out["transactions"][0]["status"] == "committed"
    out = mz.take_apart("", [{"id": "s", "name": "search", "arguments": {"q": "hello"}}])
    assert out["reads"][0]["status"] == "ok"
    out = mz.take_apart("", [{"id": "f", "name": "frame", "arguments": {"id": "hello"}}])
    assert out["reads"][0]["result"]["write_history"][0]["version"] == 1
    content = mz.read_event(out["reads"][0]["ref"])["content"]
    assert content.startswith("[frame hello r1 active]") and "r1 derive at version 1" in content


def test_unknown_evaluation_is_refused_and_nothing_written(make_client: Any) -> None:
    from morphz_client import InvalidRequestError

    mz = make_client("replies-unknown-eval")
    before = (Event.objects.count(), TransactionRecord.objects.count())
    with pytest.raises(InvalidRequestError) as caught:
        mz._request(
            "POST",
            mz._ctx("replies/"),
            json={"text": "(context-tx (derive hello (k v))) done", "evaluation": 999_999},
        )
    assert caught.value.code == "unknown_evaluation"
    assert (Event.objects.count(), TransactionRecord.objects.count()) == before


def test_conflict_re_evaluates_and_the_model_retries(make_client: Any) -> None:
    from morphz_client.agent import MemoryAgent, ModelReply, ScriptedModel, ToolCall, state_version

    mz = make_client("conflicts")
    mz.submit("(context-tx (derive release (goal ship-v1) (stage testing)))")

    def policy(request: Any) -> Any:
        base = state_version(request.prompt)
        if request.step == 0:
            # Another thread pauses the release while this model is thinking.
            mz.submit(
                f"(context-tx (base-version {base}) (revise release (goal ship-v1) (stage paused)))",
                thread="pauser",
            )
            stage = "packaging"
        else:
            assert "conflict" in request.prompt and "release (now revision 2" in request.prompt
            assert "(stage paused)" in request.prompt
            stage = "paused-after-tests"
        return ModelReply(
            text="Noted." if request.step else "",
            tool_calls=[
                ToolCall(
                    f"t{request.step}",
                    "context_tx",
                    {
                        "tx": f"(context-tx (base-version {base}) (revise release (goal ship-v1) (stage {stage})))"
                    },
                )
            ],
        )

    model = ScriptedModel(policy)
    turn = MemoryAgent(mz, model, max_retries=1).run("tests passed; go on")
    assert turn.status == "answered"
    assert turn.steps[0].outcome["conflict"] is True
    assert turn.steps[1].outcome["transactions"][0]["status"] == "committed"
    assert mz.frame("release")["body"]["stage"] == "paused-after-tests"
    assert mz.frame("release")["revision"] == 3


def test_retries_are_bounded(make_client: Any) -> None:
    from morphz_client.agent import MemoryAgent, ModelReply, ScriptedModel

    mz = make_client("stubborn")
    model = ScriptedModel(lambda request: ModelReply(text="(context-tx (retire nothing))"))
    turn = MemoryAgent(mz, model, max_retries=2).run("hello")
    assert turn.status == "rejected"
    assert len(model.requests) == 3
    assert "op 0 retire: unknown_ref" in model.requests[-1].prompt


def test_revise_that_drops_fields_gets_a_note(ctx: Any) -> None:
    out = take_apart_reply(ctx.pk, {"text": "(context-tx (revise release (stage packaging)))"})
    (entry,) = out["transactions"]
    assert entry["status"] == "committed"
    assert entry["notes"] == [
        "revise release dropped goal (revise replaces the whole body; write every field you keep)"
    ]
    assert "  note: revise release dropped goal" in out["feedback"]
    out = take_apart_reply(
        ctx.pk, {"text": "(context-tx (revise release (goal ship-v1) (stage packaging)))"}
    )
    assert "notes" not in out["transactions"][0]


def test_external_tools_cannot_take_memory_tool_names(make_client: Any) -> None:
    from morphz_client.agent import MemoryAgent, ModelReply, ScriptedModel, Tool

    mz = make_client("clash")
    model = ScriptedModel(lambda request: ModelReply(text="hi"))
    with pytest.raises(ValueError, match="recall"):
        MemoryAgent(mz, model, tools=[Tool("recall", "mine", {"type": "object"}, print)])

"""R67: `MorphzSession` gives the answers the OpenAI Agents SDK's own `SQLiteSession` gives,
and keeps the conversation as events of a thread (delivered requests, retired removals)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agents import SQLiteSession

ITEMS: list[Any] = [
    {"role": "user", "content": "my name is Ada"},
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Noted, Ada.", "annotations": []}],
    },
    {"role": "user", "content": [{"type": "input_text", "text": "weather in Paris?"}]},
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "weather",
        "arguments": '{"city": "Paris"}',
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_1", "output": "sunny, 21 C"},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "easy"}]},
    {
        "type": "message",
        "id": "msg_2",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Sunny, 21 C.", "annotations": []}],
    },
]


def both(make_client: Any, scenario: Callable[[Callable[[str], Any]], Any]) -> Any:
    from morphz_client.openai_agents import MorphzSession

    reference = asyncio.run(scenario(lambda sid: SQLiteSession(sid)))
    mz = make_client("oa-session")
    ours = asyncio.run(scenario(lambda sid: MorphzSession(sid, mz)))
    assert ours == reference
    return ours


def test_items_limits_pop_and_clear(make_client: Any) -> None:
    async def scenario(open_session: Callable[[str], Any]) -> list[Any]:
        s = open_session("chat-1")
        out: list[Any] = [await s.get_items(), await s.pop_item()]
        await s.add_items(ITEMS[:2])
        await s.add_items(ITEMS[2:])
        await s.add_items([])
        out += [await s.get_items(), await s.get_items(limit=2), await s.get_items(limit=0)]
        out += [await s.get_items(limit=100), await s.get_items(limit=-1)]
        out += [await s.pop_item(), await s.pop_item(), await s.get_items(limit=3)]
        await s.add_items([{"role": "user", "content": "again"}])
        out += [await s.get_items(limit=1)]
        await s.clear_session()
        out += [await s.get_items(), await s.pop_item()]
        await s.add_items([{"role": "user", "content": "after clearing"}])
        out += [await s.get_items()]
        return out

    answers = both(make_client, scenario)
    assert answers[0] == [] and answers[1] is None
    assert answers[2] == ITEMS and answers[3] == ITEMS[-2:] and answers[4] == []
    assert answers[7] == ITEMS[-1] and answers[8] == ITEMS[-2]
    assert answers[-1] == [{"role": "user", "content": "after clearing"}]


def test_sessions_are_apart(make_client: Any) -> None:
    async def scenario(open_session: Callable[[str], Any]) -> list[Any]:
        ids = ["a", "A", "a b", "a/b", "ä", "x" * 200, "x" * 201]
        sessions = [open_session(i) for i in ids]
        for n, s in enumerate(sessions):
            await s.add_items([{"role": "user", "content": f"in {n}"}])
        await sessions[0].clear_session()
        return [await s.get_items() for s in sessions]

    answers = both(make_client, scenario)
    assert answers[0] == [] and answers[6] == [{"role": "user", "content": "in 6"}]


def test_the_conversation_is_a_thread_of_events(make_client: Any) -> None:
    from morphz_client.openai_agents import MorphzSession

    mz = make_client("oa-events")
    session = MorphzSession("chat-1", mz)
    asyncio.run(session.add_items(ITEMS))
    events = mz.events(thread="oa:chat-1")["events"]
    kinds = [e["kind"] for e in events]
    assert kinds == [
        "user_message",
        "agent_message",
        "user_message",
        "agent_message",
        "tool_result",
        "agent_message",
        "agent_message",
    ]
    by_text = {mz.read_event_text(e["ref"]): e for e in events}
    assert by_text["my name is Ada"]["request"] == "delivered"
    assert by_text["weather in Paris?"]["request"] == "delivered"
    assert by_text["sunny, 21 C"]["kind"] == "tool_result"
    assert by_text['weather({"city": "Paris"})']["kind"] == "agent_message"
    # pop_item: a marker removes the item; the observation leaves the model input.
    asyncio.run(session.add_items([{"role": "user", "content": "forget this"}]))
    assert asyncio.run(session.pop_item()) == {"role": "user", "content": "forget this"}
    popped = mz.events(thread="oa:chat-1", kind="user_message")["events"][-1]
    assert popped["request"] == "delivered" and popped["status"] == "retired"
    asyncio.run(session.clear_session())
    assert mz.events(thread="oa:chat-1", status="active")["events"] == []
    assert asyncio.run(session.get_items()) == []

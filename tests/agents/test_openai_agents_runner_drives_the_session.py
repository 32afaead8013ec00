"""R67: the OpenAI Agents SDK's own `Runner` drives `MorphzSession` against a loopback server
speaking the Responses API: the second run's model input holds the first run's items,
tool call and output included, read back from Morphz."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.models.openai_responses import OpenAIResponsesModel
from openai import AsyncOpenAI

from tests.agents.loopback_wire import function_call, loopback, message


def script(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The model: asks for the weather once, answers from the tool output, and greets by
    the name it finds anywhere in its input."""
    items = body["input"]
    said = json.dumps(items)
    last = items[-1]
    if last.get("type") == "function_call_output":
        return [message(f"It is {last['output']}.", len(items))]
    text = str(last.get("content"))
    if "weather" in text:
        return [function_call("weather", {"city": "Paris"}, len(items))]
    if "who am I" in text:
        return [message("You are Ada." if "my name is Ada" in said else "I don't know.")]
    return [message("Noted.", len(items))]


@function_tool
def weather(city: str) -> str:
    """The weather in `city`."""
    return f"sunny in {city}"


def test_runner_remembers_through_morphz(make_client: Any) -> None:
    from morphz_client.openai_agents import MorphzSession

    set_tracing_disabled(True)
    mz = make_client("oa-runner")
    with loopback(script) as server:
        model = OpenAIResponsesModel(
            model="scripted",
            openai_client=AsyncOpenAI(base_url=server.url + "/v1", api_key="offline"),
        )
        agent = Agent(name="assistant", model=model, tools=[weather])

        async def run(session_id: str, text: str) -> str:
            result = await Runner.run(agent, text, session=MorphzSession(session_id, mz))
            return str(result.final_output)

        assert asyncio.run(run("s1", "my name is Ada")) == "Noted."
        assert asyncio.run(run("s1", "weather please")) == "It is sunny in Paris."
        assert asyncio.run(run("s1", "who am I?")) == "You are Ada."
        assert asyncio.run(run("s2", "who am I?")) == "I don't know."
        last_input = server.requests[-2]["body"]["input"]
    types = [i.get("type", i.get("role")) for i in last_input]
    assert types == [
        "user",
        "message",
        "user",
        "function_call",
        "function_call_output",
        "message",
        "user",
    ]
    assert last_input[4]["output"] == "sunny in Paris"
    # Every item is an event of the session's thread, each request delivered by a reply.
    events = mz.events(thread="oa:s1")["events"]
    assert len(events) == 8
    assert {e["request"] for e in events if e["kind"] == "user_message"} == {"delivered"}

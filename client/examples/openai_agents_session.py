"""An OpenAI Agents SDK agent whose conversation is kept in Morphz (`MorphzSession`): the
second run sees the first. Runs offline: the model is a scripted stand-in (use any real
model in its place).

Run with the server up (`./dev run`) and a context token:
    MORPHZ_TOKEN=mz_... python client/examples/openai_agents_session.py
"""

import asyncio
import json
import os
from typing import Any

from agents import Agent, Model, ModelResponse, Runner, Usage, set_tracing_disabled
from morphz_client import MorphzClient
from morphz_client.openai_agents import MorphzSession
from openai.types.responses import ResponseOutputMessage, ResponseOutputText


class ScriptedModel(Model):
    """Answers with the name it finds in the conversation the session gave it."""

    async def get_response(self, system_instructions: Any, input: Any, *a: Any, **k: Any) -> Any:
        said = json.dumps(input)
        text = "You are Ada." if "my name is Ada" in said and "who am I" in said else "Noted."
        reply = ResponseOutputMessage(
            id="msg",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
        )
        return ModelResponse(output=[reply], usage=Usage(), response_id=None)

    def stream_response(self, *a: Any, **k: Any) -> Any:
        raise NotImplementedError("this example does not stream")


async def main(mz: MorphzClient) -> None:
    set_tracing_disabled(True)
    agent = Agent(name="assistant", model=ScriptedModel())
    session = MorphzSession("ada-chat", mz)
    for text in ["my name is Ada", "who am I?"]:
        result = await Runner.run(agent, text, session=session)
        print(f"{text!r} -> {result.final_output!r}")
    print("items in the session:", len(await session.get_items()))
    print("thread events:", [e["kind"] for e in mz.events(thread=session.thread)["events"]])


url = os.environ.get("MORPHZ_URL", "http://127.0.0.1:8000")
with MorphzClient(url, os.environ["MORPHZ_TOKEN"], context=os.environ.get("MORPHZ_CONTEXT")) as mz:
    asyncio.run(main(mz))

"""A model reply, provider-neutral (R57, R59): the text, tool calls and delivered requests
`memory.agents.replies` takes apart."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from memory.agents.replies import ON_REJECTION
from memory.idempotency import ReplyKey
from memory.limits import MAX_AGENT_TOOLS, MAX_REPLY_TEXT_CHARS, MAX_TOOL_NAME_CHARS
from memory.requests import common
from memory.requests.model import StrictModel
from memory.requests.strict import Choice, Name, Text, ThreadName


def _optional(schema: dict[str, Any]) -> None:
    """Leave the default out of the schema: the generated TypeScript would make a field
    with one required, and a client need not send these."""
    schema.pop("default", None)


class ToolCallIn(StrictModel):
    id: Name | None = Field(None, max_length=MAX_TOOL_NAME_CHARS)
    name: Name = Field(max_length=MAX_TOOL_NAME_CHARS)
    arguments: Any = Field(
        None,
        description="an object, or its JSON text (as OpenAI sends it)",
        json_schema_extra={"nullable": True},
    )


class ReplyIn(StrictModel):
    """A model reply, provider-neutral: text, tool calls, requests it delivers."""

    text: Text = Field(
        "",
        max_length=MAX_REPLY_TEXT_CHARS,
        description="reply text; may hold a (context-tx ...) form, bare or fenced, and "
        "(delivers @e17)",
        json_schema_extra=_optional,
    )
    tool_calls: list[ToolCallIn] = Field(default_factory=list)
    delivers: list[Annotated[Name, Field(max_length=40)]] = Field(
        default_factory=list, max_length=100
    )
    thread: ThreadName | None = common.thread()
    evaluation: int | None = common.evaluation("the evaluation the reply answers")
    tools: list[Annotated[Name, Field(max_length=MAX_TOOL_NAME_CHARS)]] | None = Field(
        None,
        max_length=MAX_AGENT_TOOLS,
        description="the agent's own tool names: a call to any other name (not a memory tool) "
        "is refused `unknown_tool` instead of registered",
    )
    on_rejection: Annotated[str, Choice(ON_REJECTION)] = Field(
        "withhold",
        description="`withhold` (default): a rejected transaction withholds the reply's "
        "actions and message; `proceed`: they are written all the same",
        json_schema_extra=_optional,
    )
    idempotency_key: ReplyKey | None = common.key(
        "a retry with the same key writes no part of the reply twice (the Idempotency-Key "
        "header works too)"
    )

"""The model behind the learner and the full agent: one small protocol, two implementations.

- `OpenAIModel`: any server speaking OpenAI's chat-completions wire format (the `openai`
  package, which STATE-Bench's own environment already has). Environment:
  `MORPHZ_STATEBENCH_MODEL` (required), `MORPHZ_STATEBENCH_API_KEY` (else `OPENAI_API_KEY`),
  `MORPHZ_STATEBENCH_BASE_URL` (else the provider's default), and for cost reporting
  `MORPHZ_STATEBENCH_PRICE_IN` / `MORPHZ_STATEBENCH_PRICE_OUT` (dollars per million tokens).
- `ScriptedModel`: answers from a list (or a function), for tests and offline runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class ModelReply:
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # [{name, arguments}]
    cost_usd: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None


class Model(Protocol):
    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ModelReply: ...


class ScriptedModel:
    """Replies in order from `replies`, or computed by `script(messages, tools)`."""

    def __init__(
        self,
        replies: list[ModelReply] | None = None,
        script: Callable[[list[dict[str, Any]], list[dict[str, Any]] | None], ModelReply]
        | None = None,
    ) -> None:
        self.replies = list(replies or [])
        self.script = script
        self.calls: list[list[dict[str, Any]]] = []

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ModelReply:
        self.calls.append(messages)
        if self.script is not None:
            return self.script(messages, tools)
        if not self.replies:
            raise RuntimeError("ScriptedModel ran out of replies")
        return self.replies.pop(0)


def _chat_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A Responses-style tool schema (STATE-Bench's) in the chat-completions shape."""
    if "function" in tool:
        return tool
    return {
        "type": "function",
        "function": {
            "name": tool["name"],
            "description": tool.get("description", ""),
            "parameters": tool.get("parameters", {"type": "object", "properties": {}}),
        },
    }


class OpenAIModel:
    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        price_in: float | None = None,
        price_out: float | None = None,
    ) -> None:
        from openai import OpenAI

        self.model = model or os.environ.get("MORPHZ_STATEBENCH_MODEL", "")
        if not self.model:
            raise ValueError("set MORPHZ_STATEBENCH_MODEL to the model name")
        key = (
            api_key
            or os.environ.get("MORPHZ_STATEBENCH_API_KEY")
            or os.environ.get("OPENAI_API_KEY")
        )
        if not key:
            raise ValueError("set MORPHZ_STATEBENCH_API_KEY (or OPENAI_API_KEY)")
        self.client = OpenAI(
            api_key=key, base_url=base_url or os.environ.get("MORPHZ_STATEBENCH_BASE_URL")
        )
        self.price_in = price_in or float(os.environ.get("MORPHZ_STATEBENCH_PRICE_IN", "0"))
        self.price_out = price_out or float(os.environ.get("MORPHZ_STATEBENCH_PRICE_OUT", "0"))

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ModelReply:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            kwargs["tools"] = [_chat_tool(t) for t in tools]
        response = self.client.chat.completions.create(**kwargs)
        message = response.choices[0].message
        calls = []
        for call in message.tool_calls or []:
            try:
                arguments = json.loads(call.function.arguments or "{}")
            except json.JSONDecodeError:
                arguments = {}
            calls.append({"name": call.function.name, "arguments": arguments})
        usage = response.usage
        tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
        cost = (tokens_in * self.price_in + tokens_out * self.price_out) / 1_000_000
        return ModelReply(message.content or "", calls, cost, tokens_in, tokens_out)


def chat_messages(system: str, conversation: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """STATE-Bench's conversation (user / assistant with executed tool calls / tool) as
    chat-completions messages, tool calls paired with their results by synthetic ids."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    counter = 0
    for item in conversation:
        role = item.get("role")
        if role == "user":
            out.append({"role": "user", "content": str(item.get("content") or "")})
        elif role == "system":
            out.append({"role": "system", "content": str(item.get("content") or "")})
        elif role == "assistant":
            calls = item.get("tool_calls") or []
            message: dict[str, Any] = {"role": "assistant", "content": item.get("content") or ""}
            ids = []
            if calls:
                message["tool_calls"] = []
                for call in calls:
                    counter += 1
                    ids.append(f"call_{counter}")
                    message["tool_calls"].append(
                        {
                            "id": ids[-1],
                            "type": "function",
                            "function": {
                                "name": call["name"],
                                "arguments": json.dumps(call.get("arguments") or {}),
                            },
                        }
                    )
            out.append(message)
            for call_id, call in zip(ids, calls, strict=True):
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": call_id,
                        "content": json.dumps(call.get("result"), ensure_ascii=False),
                    }
                )
        # role "tool" items repeat the results already paired above
    return out


def model_from_env() -> Model:
    return OpenAIModel()

"""Real models behind the agent loop's `ChatModel` protocol, on the official SDKs.

How it works: docs/internals.md, section `client/morphz_client/llm.py`."""

from __future__ import annotations

import json
import os
from typing import Any

from morphz_client.agent import ModelReply, ModelRequest, ToolCall

__all__ = ["AnthropicModel", "OpenAIModel", "model_from_env"]


def _openai_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t["description"],
                "parameters": t["parameters"],
            },
        }
        for t in tools
    ]


def _anthropic_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
        for t in tools
    ]


def _json_arguments(raw: str | None) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        # Kept as text: the server reports invalid arguments to the model.
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_value": value}


class _SDKModel:
    """What both providers share: the SDK client (made from `base_url` and `api_key` unless
    one is given), the model name (`model`, else MORPHZ_MODEL, else the provider's default)
    and the sampling settings (`temperature`; `max_tokens` per reply)."""

    default_model = ""
    default_max_tokens: int | None = None

    def __init__(
        self,
        model: str | None = None,
        *,
        client: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self.client = client if client is not None else self._sdk_client(base_url, api_key)
        self.model = model or os.environ.get("MORPHZ_MODEL") or self.default_model
        self.temperature = temperature
        self.max_tokens = max_tokens if max_tokens is not None else self.default_max_tokens

    def _sdk_client(self, base_url: str | None, api_key: str | None) -> Any:
        raise NotImplementedError

    def _sampling(self) -> dict[str, Any]:
        return {} if self.temperature is None else {"temperature": self.temperature}


class OpenAIModel(_SDKModel):
    """Chat Completions through the official `openai` SDK."""

    default_model = "gpt-4o-mini"

    def _sdk_client(self, base_url: str | None, api_key: str | None) -> Any:
        import openai

        return openai.OpenAI(base_url=base_url, api_key=api_key)

    def complete(self, request: ModelRequest) -> ModelReply:
        """One Chat Completions call: the system text, the prompt as the one user message,
        the tools as functions; the reply's text and tool calls (arguments decoded)."""
        extra = self._sampling()
        if self.max_tokens is not None:
            extra["max_completion_tokens"] = self.max_tokens
        response = self.client.chat.completions.create(
            model=self.model,
            messages=[
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.prompt},
            ],
            tools=_openai_tools(request.tools),
            **extra,
        )
        message = response.choices[0].message
        calls = [
            ToolCall(call.id, call.function.name, _json_arguments(call.function.arguments))
            for call in (message.tool_calls or [])
            if getattr(call, "function", None) is not None
        ]
        return ModelReply(text=message.content or "", tool_calls=calls, raw=response)


class AnthropicModel(_SDKModel):
    """The Messages API through the official `anthropic` SDK."""

    default_model = "claude-sonnet-4-5"
    default_max_tokens = 4096  # the Messages API requires a limit

    def _sdk_client(self, base_url: str | None, api_key: str | None) -> Any:
        import anthropic

        return anthropic.Anthropic(base_url=base_url, api_key=api_key)

    def complete(self, request: ModelRequest) -> ModelReply:
        """One Messages call: the system text, the prompt as the one user message, the
        tools; the reply's text blocks joined and its tool uses as tool calls."""
        response = self.client.messages.create(
            model=self.model,
            max_tokens=self.max_tokens,
            system=request.system,
            messages=[{"role": "user", "content": request.prompt}],
            tools=_anthropic_tools(request.tools),
            **self._sampling(),
        )
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in response.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                arguments = block.input if isinstance(block.input, dict) else {}
                calls.append(ToolCall(block.id, block.name, dict(arguments)))
        return ModelReply(text="\n".join(texts), tool_calls=calls, raw=response)


def model_from_env(provider: str | None = None) -> OpenAIModel | AnthropicModel:
    """`MORPHZ_PROVIDER` (openai | anthropic; default: anthropic when only
    `ANTHROPIC_API_KEY` is set, else openai) picks the SDK; each reads its usual variables."""
    chosen = provider or os.environ.get("MORPHZ_PROVIDER")
    if chosen is None:
        only_anthropic = os.environ.get("ANTHROPIC_API_KEY") and not os.environ.get(
            "OPENAI_API_KEY"
        )
        chosen = "anthropic" if only_anthropic else "openai"
    if chosen == "anthropic":
        return AnthropicModel()
    if chosen == "openai":
        return OpenAIModel()
    raise ValueError(f"unknown provider {chosen!r}: use openai or anthropic")

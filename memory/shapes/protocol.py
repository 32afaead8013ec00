"""The model protocol as the server serves it for one context (R45): what `morphz_protocol`
builds, with the context's settings filled in (memory.agents.protocol)."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from memory.shapes.context import ContextSettings
from memory.shapes.fields import OPAQUE, Doc


class ProtocolSettings(ContextSettings):
    """The settings the instructions quote: the context's, and its slug."""

    slug: str


class ProtocolTools(TypedDict):
    # Each tool in the provider's own function-calling shape (morphz_protocol declares them).
    openai: list[dict[str, Any]]
    anthropic: list[dict[str, Any]]


class ProtocolJson(TypedDict):
    version: str
    instructions: Annotated[str, Doc("teaches a model the memory protocol")]
    tools: Annotated[ProtocolTools, OPAQUE, Doc("`openai` and `anthropic` tool definitions")]
    settings: Annotated[ProtocolSettings, OPAQUE, Doc("the context settings filled in")]

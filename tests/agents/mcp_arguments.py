"""The MCP server's tools and their arguments, read from its own tool list, and calls that
differ from a well-typed one in one argument: the argument-checking tests use these so a
new tool or argument is checked without being listed anywhere."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

# What a tool body answers first when no Morphz client serves the call: a call that gets
# this far had its arguments taken.
NO_CONTEXT = "no Morphz context for this request"


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def kind_of(prop: dict[str, Any]) -> str | None:
    """The one JSON type an argument takes besides null ("integer", "string", ...), None
    for an argument of several."""
    kinds = {o.get("type", "object") for o in prop.get("anyOf", [prop])} - {"null"}
    return kinds.pop() if len(kinds) == 1 else None


def valid(prop: dict[str, Any]) -> Any:
    """A value of the argument's type (and within its bounds)."""
    option = next(o for o in prop.get("anyOf", [prop]) if o.get("type") != "null")
    return {"integer": option.get("minimum", 1), "string": "x", "boolean": False}.get(
        option.get("type", "object"), [] if option.get("type") == "array" else {}
    )


def arguments(tool: Any, **given: Any) -> dict[str, Any]:
    """The tool's required arguments, well typed, with `given` instead where named."""
    props = tool.input_schema.get("properties", {})
    out = {name: valid(props[name]) for name in tool.input_schema.get("required", [])}
    return {**out, **given}


def each_argument(tools: list[Any]) -> Iterator[tuple[Any, str, dict[str, Any]]]:
    """(tool, argument name, its schema) for every argument of every tool."""
    for tool in tools:
        for name, prop in tool.input_schema.get("properties", {}).items():
            yield tool, name, prop


def with_server(check: Callable[[Any, list[Any]], Awaitable[None]]) -> None:
    """Run `check(client, tools)` against the server over the SDK's in-memory client, in a
    fresh context: no Morphz client serves its calls, so none reaches a Morphz server."""
    from mcp import Client
    from morphz_client.mcp_server import build_server

    async def run() -> None:
        async with Client(build_server()) as client:
            await check(client, (await client.list_tools()).tools)

    contextvars.Context().run(asyncio.run, run())

"""A failing MCP tool call says why, with the API's error code and message (never the SDK's
bare "Error executing tool ..."), and a tool refuses an argument it does not take instead of
dropping it silently. Through the official SDK's in-memory client, tools over REST to the
live server."""

from __future__ import annotations

import asyncio
from typing import Any


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def test_tool_errors_carry_the_code_and_unknown_arguments_are_refused(make_client: Any) -> None:
    from mcp import Client
    from morphz_client.mcp_server import build_server, current_client

    mz = make_client("mcp-errors")
    mz.append_event("tool_result", "suite: 3000 passed")

    async def failure(client: Any, name: str, args: dict[str, Any]) -> str:
        result = await client.call_tool(name, args)
        assert result.is_error, _text(result)
        text = _text(result)
        assert text != f"Error executing tool {name}"
        return text

    async def run() -> None:
        current_client.set(mz)
        async with Client(build_server()) as client:
            for ref in ("@e0", "e5", "@e01", "42x"):
                text = await failure(client, "read_event", {"ref": ref})
                assert "invalid_ref: " in text and repr(ref) in text, text
            missing = await failure(client, "read_event", {"ref": "@e99"})
            assert "not_found: " in missing, missing

            unknown = await failure(client, "search", {"q": "passed", "kind": "frame"})
            assert "invalid_request: search takes no argument 'kind'" in unknown, unknown
            extra = await failure(client, "read_event", {"ref": "@e1", "limit": 5})
            assert "invalid_request: read_event takes no argument 'limit'" in extra, extra
            good = await client.call_tool("read_event", {"ref": "@e1", "offset": 7})
            assert not good.is_error and "3000 passed" in _text(good)
            for tool in (await client.list_tools()).tools:
                assert tool.input_schema.get("additionalProperties") is False, tool.name

    asyncio.run(run())

"""A call of a tool the MCP server does not have answers `unknown_tool`, naming the tool
meant and every tool: `context_tx`, which the protocol's text names for a model reply, is
`commit` over MCP; a misspelt name gets the nearest. The SDK answered "Unknown tool: x"."""

from __future__ import annotations

import asyncio
from typing import Any


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def test_an_unknown_tool_is_told_the_one_meant() -> None:
    from mcp import Client
    from morphz_client.mcp_server import build_server

    async def run() -> dict[str, str]:
        async with Client(build_server()) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            answers = {}
            for name in ("context_tx", "serch"):
                result = await client.call_tool(name, {"q": "x"})
                assert result.is_error
                answers[name] = _text(result)
            answers["names"] = ", ".join(sorted(names))
            return answers

    answers = asyncio.run(run())
    assert "unknown_tool: no tool 'context_tx'; did you mean 'commit'?" in answers["context_tx"]
    assert "did you mean 'search'?" in answers["serch"]
    assert answers["names"] in answers["serch"]

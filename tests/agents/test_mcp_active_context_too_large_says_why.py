"""When the compiled context is too large for the server's response limit, the evaluation is
still written and answered without its text (`text_omitted`); the client, the agent loop and
the MCP tools then fail with one clear message saying so (TextOmittedError), never a crash on
a missing text or a bare "None"."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

LIMIT = 200_000


def _large_memory(mz: Any) -> None:
    for i in range(6):
        mz.submit(ops=[{"op": "derive", "id": f"big-{i}", "body": {"a": "q" * 50_000}}])


def test_a_text_left_out_is_a_clear_error_in_the_client_and_mcp(
    make_client: Any, settings: Any
) -> None:
    from mcp import Client
    from morphz_client import TextOmittedError, prompt_text
    from morphz_client.mcp_server import build_server, current_client

    mz = make_client("too-large")
    _large_memory(mz)
    settings.MAX_RESPONSE_BYTES = LIMIT
    request = mz.append_event("user_message", "what is in memory?")
    view = mz.evaluate()
    assert view["claimed"] == [request["ref"]]
    assert view["text"] is None and view["text_omitted"] is True
    with pytest.raises(TextOmittedError, match="over the server's response limit of 200000"):
        prompt_text(view)

    async def run() -> None:
        current_client.set(mz)
        async with Client(build_server()) as client:
            result = await client.call_tool("active_context", {})
            assert result.is_error
            text = "".join(getattr(block, "text", "") for block in result.content)
            assert "text_omitted" in text and "slim the memory" in text
            resource = client.read_resource("morphz://context/active")
            with pytest.raises(Exception, match="text_omitted"):
                await resource

    asyncio.run(run())

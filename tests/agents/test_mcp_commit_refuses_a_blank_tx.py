"""MCP `commit` with a blank `tx` (empty or whitespace) is a refused argument: it answers
the API's `invalid_request: tx ...` with `details` naming `tx`, as mcp_arguments answers any
refused argument, not the reply feedback naming `context_tx`, a tool MCP does not offer. A
rejected transaction keeps its feedback form. Through the official SDK's in-memory client,
tools over REST to the live server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest


def _text(result: Any) -> str:
    """The tool's error without the SDK's "Error executing tool commit: " ahead of it."""
    text = "".join(getattr(block, "text", "") for block in result.content)
    return text.removeprefix("Error executing tool commit: ")


@pytest.mark.parametrize("tx", ["", "   ", "\n\t "])
def test_a_blank_tx_is_invalid_request_naming_tx(make_client: Any, tx: str) -> None:
    from mcp import Client
    from morphz_client.mcp_server import build_server, current_client

    mz = make_client("mcp-blank-tx")

    async def run() -> str:
        current_client.set(mz)
        async with Client(build_server()) as client:
            result = await client.call_tool("commit", {"tx": tx})
            assert result.is_error
            return _text(result)

    text = asyncio.run(run())
    assert text.startswith("invalid_request: tx may not be blank"), text
    assert "context_tx" not in text and "context-tx" in text, text  # says what it takes
    message, details = text.split(" details: ")
    assert json.loads(details) == [
        {"field": "tx", "message": message.removeprefix("invalid_request: ")}
    ]
    assert mz.context()["version"] == 0
    assert mz.transactions()["transactions"] == []  # nothing was submitted


def test_a_rejected_transaction_keeps_its_feedback_form(make_client: Any) -> None:
    from mcp import Client
    from morphz_client.mcp_server import build_server, current_client

    mz = make_client("mcp-rejected-tx")

    async def run() -> str:
        current_client.set(mz)
        async with Client(build_server()) as client:
            result = await client.call_tool("commit", {"tx": "(context-tx (derive"})
            assert result.is_error
            return _text(result)

    text = asyncio.run(run())
    assert text.startswith("- transaction NOT written"), text

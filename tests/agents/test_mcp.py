"""The MCP server (R48) through the official SDK's clients: in memory (the server object
in-process, tools over REST to the live server) and streamable HTTP against the served ASGI
app at /mcp/ with per-context bearer tokens."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from memory.contexts import create_context, issue_token
from memory.search.indexer import drain
from tests.agents.conftest import FIRST_EXAMPLE

REFERENCE_NAMES = {
    "create_entities",
    "create_relations",
    "add_observations",
    "delete_entities",
    "delete_relations",
    "read_graph",
    "search_nodes",
    "open_nodes",
}
NATIVE_NAMES = {
    "active_context",
    "commit",
    "append",
    "recall",
    "search",
    "read_event",
    "frame",
    "frames",
}


def _drain() -> None:
    """Apply the search outbox (from a worker thread: close its connection after)."""
    from django.db import connection

    try:
        drain()
    finally:
        connection.close()


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def _call(client: Any, name: str, args: dict[str, Any] | None = None) -> Any:
    result = await client.call_tool(name, args or {})
    assert not result.is_error, _text(result)
    text = _text(result)
    try:
        return json.loads(text)
    except ValueError:
        return text


async def _first_example(client: Any) -> None:
    """List tools, commit the first example, recall, search (as an MCP agent would)."""
    tools = {t.name for t in (await client.list_tools()).tools}
    assert tools >= NATIVE_NAMES | REFERENCE_NAMES
    await _call(
        client,
        "commit",
        {"tx": "(context-tx (derive release (goal ship-v1) (stage waiting-for-tests)))"},
    )
    for i in range(1, 41):
        await _call(client, "append", {"kind": "tool_result", "content": f"output {i}"})
    log = await _call(client, "append", {"kind": "tool_result", "content": "suite: 3000 passed"})
    assert log["ref"] == "@e42"
    view = await _call(client, "active_context")
    assert "[@e42 tool_result" in view and "· version 1 ·" in view
    receipt = await _call(client, "commit", {"tx": FIRST_EXAMPLE.format(base=1)})
    assert receipt["receipt"]["version"] == 2 and "committed: version 2" in receipt["feedback"]
    rejected = await client.call_tool("commit", {"tx": "(context-tx (derive release (x y)))"})
    assert rejected.is_error and "op 0 derive: frame_exists" in _text(rejected)
    graph = await _call(client, "recall", {"frame_id": "release", "direction": "descendants"})
    assert [n.get("id") for n in graph["nodes"]] == ["release", "test-result"]
    await asyncio.to_thread(_drain)
    hits = await _call(client, "search", {"q": "passed"})
    assert {"@e42", "test-result"} <= {h["ref"] for h in hits["hits"]}
    chunk = await _call(client, "read_event", {"ref": "@e42", "offset": 7})
    assert chunk["content"] == "3000 passed" and chunk["status"] == "retired"
    frame = await _call(client, "frame", {"id": "release"})
    assert frame["body"] == {"goal": "ship-v1", "stage": "packaging"}
    prompt = await client.get_prompt("morphz_protocol")
    assert "(context-tx" in prompt.messages[0].content.text
    resource = await client.read_resource("morphz://context/active")
    assert "[frame test-result r1 active] (from @e42)" in resource.contents[0].text


async def _reference_names(client: Any) -> None:
    """The reference server-memory tools on a fresh context (their full semantics are
    test_mcp_reference_cases.py's and the differential test's)."""
    created = await _call(
        client,
        "create_entities",
        {
            "entities": [
                {
                    "name": "John_Smith",
                    "entityType": "person",
                    "observations": ["Speaks fluent Spanish"],
                },
                {"name": "Anthropic", "entityType": "organization", "observations": []},
            ]
        },
    )
    assert [e["name"] for e in created] == ["John_Smith", "Anthropic"]
    await _call(
        client,
        "create_relations",
        {"relations": [{"from": "John_Smith", "to": "Anthropic", "relationType": "works_at"}]},
    )
    await _call(
        client,
        "add_observations",
        {"observations": [{"entityName": "John_Smith", "contents": ["Graduated in 2019"]}]},
    )
    graph = await _call(client, "read_graph")
    john = next(e for e in graph["entities"] if e["name"] == "John_Smith")
    assert john["observations"] == ["Speaks fluent Spanish", "Graduated in 2019"]
    assert graph["relations"] == [
        {"from": "John_Smith", "to": "Anthropic", "relationType": "works_at"}
    ]
    found = await _call(client, "search_nodes", {"query": "spanish"})
    assert [e["name"] for e in found["entities"]] == ["John_Smith"]
    await _call(client, "delete_entities", {"entityNames": ["Anthropic"]})
    graph = await _call(client, "read_graph")
    assert graph["relations"] == [] and [e["name"] for e in graph["entities"]] == ["John_Smith"]


def test_in_memory_client(make_client: Any) -> None:
    from mcp import Client
    from morphz_client.mcp_server import build_server, current_client

    mz = make_client("mcp-memory")
    fresh = make_client("mcp-memory-ref")

    async def run() -> None:
        server = build_server()
        current_client.set(mz)
        async with Client(server) as client:
            await _first_example(client)
        current_client.set(fresh)
        async with Client(server) as client:
            await _reference_names(client)

    asyncio.run(run())
    assert mz.frame("test-result")["sources"] == ["@e42"]


def _http_client(url: str, token: str | None) -> Any:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=60)
    return Client(streamable_http_client(f"{url}/mcp/", http_client=http))


@pytest.mark.slow
def test_streamable_http_against_the_served_app(asgi_server: Any, transactional_db: Any) -> None:
    import httpx

    mine = create_context("mcp-http")
    token = issue_token(mine).raw
    other_token = issue_token(create_context("mcp-other")).raw
    fresh_token = issue_token(create_context("mcp-fresh")).raw

    # No token, or a wrong one: 401 before any MCP work.
    for headers in ({}, {"Authorization": "Bearer mz_nope"}):
        answer = httpx.post(f"{asgi_server.url}/mcp/", json={}, headers=headers)
        assert answer.status_code == 401
        assert answer.json()["error"]["code"] == "not_authenticated"

    async def run() -> None:
        async with _http_client(asgi_server.url, token) as client:
            await _first_example(client)
        async with _http_client(asgi_server.url, other_token) as client:
            # Another context's token reaches its own (empty) context only.
            missing = await client.call_tool("frame", {"id": "release"})
            assert missing.is_error and "not_found" in _text(missing)
            assert await _call(client, "frames") == {"frames": [], "next_cursor": None}
            view = await _call(client, "active_context")
            assert view.startswith("# context mcp-other")
        async with _http_client(asgi_server.url, fresh_token) as client:
            await _reference_names(client)

    asyncio.run(run())


def test_stdio_console_command(make_client: Any) -> None:
    """The stdio server as an MCP client launches it: env MORPHZ_URL/TOKEN/CONTEXT."""
    import os
    import shutil
    import sys

    from mcp import Client, StdioServerParameters

    mz = make_client("mcp-stdio")
    command = shutil.which("morphz-mcp", path=os.path.dirname(sys.executable))
    assert command, "the morphz-mcp console script is installed with the client package"
    params = StdioServerParameters(
        command=command,
        env={
            **os.environ,
            "MORPHZ_URL": str(mz._http.base_url).rstrip("/"),
            "MORPHZ_TOKEN": mz.token,
            "MORPHZ_CONTEXT": "mcp-stdio",
        },
    )

    async def run() -> None:
        async with Client(params) as client:
            assert {t.name for t in (await client.list_tools()).tools} >= REFERENCE_NAMES
            await _call(client, "commit", {"tx": "(context-tx (derive release (goal ship-v1)))"})
            view = await _call(client, "active_context")
            assert "[frame release r1 active]" in view

    asyncio.run(run())
    assert mz.frame("release")["revision"] == 1

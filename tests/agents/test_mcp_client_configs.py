"""Every MCP client configuration in docs/agents.md works as written: each snippet is parsed
as its client would (JSON config or the `claude mcp add` command line), its placeholders
filled (checkout, token, slug, URL), and the server it names started and asked for its
tools."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
from typing import Any

import pytest

from memory.contexts import create_context, issue_token
from tests.agents.conftest import REPO

SNIPPET = re.compile(r"<!-- mcp-config: (\S+) (stdio|http) -->\n```(json|sh)\n(.*?)```", re.S)
EXPECTED = {
    ("claude-desktop", "stdio"),
    ("claude-code", "stdio"),
    ("claude-code", "http"),
    ("cursor", "stdio"),
    ("cursor", "http"),
    ("vscode", "stdio"),
    ("vscode", "http"),
}


def _snippets() -> list[tuple[str, str, str, str]]:
    return SNIPPET.findall((REPO / "docs" / "agents.md").read_text())


def test_every_client_has_its_snippets() -> None:
    assert {(client, transport) for client, transport, _, _ in _snippets()} == EXPECTED


def _from_json(text: str, client: str) -> dict[str, Any]:
    data = json.loads(text)
    servers = data["servers"] if client == "vscode" else data["mcpServers"]
    entry = servers["memory"]
    if client == "vscode":
        assert entry["type"] in ("stdio", "http")
    if "command" in entry:
        return {"command": entry["command"], "args": entry.get("args", []), "env": entry["env"]}
    return {"url": entry["url"], "headers": entry.get("headers", {})}


def _from_claude_add(text: str) -> dict[str, Any]:
    """`claude mcp add [options] <name> <url> | -- <command> [args]`, as Claude Code reads it."""
    words = shlex.split(text)
    assert words[:3] == ["claude", "mcp", "add"], words
    words = words[3:]
    env: dict[str, str] = {}
    headers: dict[str, str] = {}
    transport = "stdio"
    positional: list[str] = []
    while words:
        word = words.pop(0)
        if word == "--":
            return {"command": words[0], "args": words[1:], "env": env}
        if word == "--env":
            key, _, value = words.pop(0).partition("=")
            env[key] = value
        elif word == "--header":
            key, _, value = words.pop(0).partition(":")
            headers[key.strip()] = value.strip()
        elif word == "--transport":
            transport = words.pop(0)
        else:
            positional.append(word)
    assert transport == "http" and len(positional) == 2, positional
    return {"url": positional[1], "headers": headers}


def _fill(value: Any, url: str, token: str) -> Any:
    if isinstance(value, dict):
        return {k: _fill(v, url, token) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, url, token) for v in value]
    return (
        value.replace("/path/to/morphz", str(REPO))
        .replace("mz_...", token)
        .replace("http://127.0.0.1:8000", url)
    )


async def _tools(spec: dict[str, Any]) -> set[str]:
    from mcp import Client, StdioServerParameters

    if "command" in spec:
        params = StdioServerParameters(
            command=spec["command"], args=spec["args"], env={**os.environ, **spec["env"]}
        )
        client = Client(params)
    else:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(headers=spec["headers"], timeout=60)
        client = Client(streamable_http_client(spec["url"], http_client=http))
    async with client:
        graph = await client.call_tool("read_graph", {})
        assert not graph.is_error
        return {t.name for t in (await client.list_tools()).tools}


@pytest.mark.slow
def test_each_snippet_starts_its_server(asgi_server: Any, transactional_db: Any) -> None:
    token = issue_token(create_context("my-agent")).raw
    for client, transport, form, text in _snippets():
        parsed = _from_json(text, client) if form == "json" else _from_claude_add(text)
        spec = _fill(parsed, asgi_server.url, token)
        assert ("command" in spec) == (transport == "stdio"), (client, transport)
        tools = asyncio.run(_tools(spec))
        assert {"create_entities", "read_graph", "active_context"} <= tools, (client, transport)
